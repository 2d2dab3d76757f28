#!/usr/bin/env bash
# Trains a preset's three models on bandai-loco/normal within a fixed wall-time budget and
# prints their metrics: the autoencoder as AE_RANKS data-parallel ranks of AE_THREADS threads each
# (default 1 x 1: on this 2-core machine a second rank of `standard`'s autoencoder is slower than
# one, docs/benchmarks.md#training-throughput), then stepper and projector as two concurrent
# 1-thread processes (they only read the autoencoder checkpoint).
#
# Usage: scripts/train-standard.sh [PRESET] [OUT_DIR]      (default: standard build/train-PRESET)
# Environment: LMM_DATA (bandai-loco folder), LMM_DB (a database to train on instead of
#              bandai-loco/normal; LMM_DATA is then not needed), LMM_BUILD (default build/release),
#              AE_MINUTES (default 30), SP_MINUTES (default 25), AE_RANKS (default 1),
#              AE_THREADS (threads per rank, default 1).
# Run it for `standard` and `ffn-standard` to compare both with the same wall time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset="${1:-standard}"
out="${2:-build/train-$preset}"
build="${LMM_BUILD:-build/release}"
tools="$build/tools"
[[ -x "$tools/lmm-train" ]] || { echo "train-standard.sh: $tools/lmm-train not built (configure with -DLMM_BUILD_TRAINING=ON)" >&2; exit 1; }
mkdir -p "$out"
if [[ -n "${LMM_DB:-}" ]]; then
  [[ -f "$LMM_DB" ]] || { echo "train-standard.sh: LMM_DB '$LMM_DB' does not exist" >&2; exit 1; }
  db="$LMM_DB"
else
  db="$out/normal.mmdb"
  [[ -f "$db" ]] || "$tools/lmm-import" "${LMM_DATA:?set LMM_DATA to the bandai-loco folder, or LMM_DB to a database}/normal" --out "$db"
fi
LMM_TRAIN="$tools/lmm-train" bash scripts/train-distributed.sh "${AE_RANKS:-1}" autoencoder --db "$db" \
  --config "$preset" --out "$out" --threads "${AE_THREADS:-1}" --max-minutes "${AE_MINUTES:-30}" \
  --json "$out/autoencoder.json"
"$tools/lmm-train" stepper --db "$db" --config "$preset" --out "$out" --threads 1 \
  --max-minutes "${SP_MINUTES:-25}" --json "$out/stepper.json" > "$out/stepper.log" 2>&1 &
stepper=$!
"$tools/lmm-train" projector --db "$db" --config "$preset" --out "$out" --threads 1 \
  --max-minutes "${SP_MINUTES:-25}" --json "$out/projector.json" > "$out/projector.log" 2>&1
wait "$stepper"
for model in autoencoder stepper projector; do echo "$model: $(cat "$out/$model.json")"; done
