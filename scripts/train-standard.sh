#!/usr/bin/env bash
# Trains a preset's three models on bandai-loco/normal within a fixed wall-time budget and
# prints their metrics, in two phases that keep both cores of a 2-core machine busy:
#   1. the autoencoder, encoder and decoder together, as AE_RANKS data-parallel ranks of AE_THREADS
#      threads each (default 1 x 1: a second rank of `standard`'s autoencoder is slower than one,
#      docs/benchmarks.md#training-throughput), for AE_MINUTES;
#   2. three concurrent 1-thread processes on the latents of that encoder, which stays fixed from
#      here on: the decoder alone (lmm-train autoencoder --resume --freeze-encoder) for
#      DECODER_MINUTES, the stepper for STEPPER_MINUTES and the projector for PROJECTOR_MINUTES.
#
# Usage: scripts/train-standard.sh [PRESET] [OUT_DIR]      (default: standard build/train-PRESET)
# Environment: LMM_DATA (bandai-loco folder), LMM_DB (a database to train on instead of
#              bandai-loco/normal; LMM_DATA is then not needed), LMM_BUILD (default build/release),
#              AE_MINUTES (default 20), DECODER_MINUTES (default 35), STEPPER_MINUTES (default 35),
#              PROJECTOR_MINUTES (default 15), AE_RANKS (default 1), AE_THREADS (threads per rank,
#              default 1).
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
  --config "$preset" --out "$out" --threads "${AE_THREADS:-1}" --max-minutes "${AE_MINUTES:-20}" \
  --json "$out/autoencoder-joint.json"
# Phase 2: three 1-thread processes. Stepper and projector read the encoder once, at their start; the
# decoder's checkpoints (written whole, then renamed) keep that encoder.
train() {  # train MODEL MINUTES [lmm-train options...]: in the background, its output in OUT/MODEL.log
  local model="$1" minutes="$2"
  shift 2
  "$tools/lmm-train" "$model" --db "$db" --config "$preset" --out "$out" --threads 1 --max-minutes "$minutes" \
    --json "$out/$model.json" "$@" > "$out/$model.log" 2>&1 &
}
train autoencoder "${DECODER_MINUTES:-35}" --resume --freeze-encoder
decoder=$!
train stepper "${STEPPER_MINUTES:-35}"
stepper=$!
train projector "${PROJECTOR_MINUTES:-15}"
projector=$!
status=0
for pid in "$decoder" "$stepper" "$projector"; do wait "$pid" || status=$?; done
((status == 0)) || { echo "train-standard.sh: a phase-2 training failed (see $out/*.log)" >&2; exit "$status"; }
for model in autoencoder stepper projector; do echo "$model: $(cat "$out/$model.json")"; done
