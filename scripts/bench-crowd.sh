#!/usr/bin/env bash
# The crowd figures of docs/benchmarks.md#crowds: imports bandai-loco/normal, trains and exports
# the `quick` preset (about 6 minutes on 2 cores), makes a random-weight `paper` bundle, then runs
# lmm-bench crowd for both bundles and for the database, with and without level of detail. (The
# crowd soak, no non-finite pose and no heap allocation, is the test CrowdSoak.*.)
#
# Usage: scripts/bench-crowd.sh [OUT_DIR]                (default build/bench-crowd)
# Environment: LMM_DATA (bandai-loco folder), LMM_BUILD (default build/release, configured with
#              -DLMM_BUILD_TRAINING=ON -DLMM_BUILD_BENCH=ON).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-build/bench-crowd}"
build="${LMM_BUILD:-build/release}"
data="${LMM_DATA:?set LMM_DATA to the bandai-loco folder}"
tools="$build/tools"
for tool in lmm-import lmm-train lmm-export lmm-bench; do
  [[ -x "$tools/$tool" ]] || { echo "bench-crowd.sh: $tools/$tool not built (see the usage above)" >&2; exit 1; }
done
mkdir -p "$out"
db="$out/normal.mmdb"
[[ -f "$db" ]] || "$tools/lmm-import" "$data/normal" --out "$db"
if [[ ! -f "$out/quick.lmmw" ]]; then
  for model in autoencoder stepper projector; do
    "$tools/lmm-train" "$model" --db "$db" --config quick --out "$out/train-quick" --json "$out/train-quick/$model.json"
  done
  "$tools/lmm-export" --in "$out/train-quick" --out "$out/quick.lmmw"
fi
[[ -f "$out/paper/paper.lmmw" ]] || "$tools/lmm-bench" nn --preset paper --db "$db" --calls 16 --save "$out/paper" >/dev/null
crowd() { "$tools/lmm-bench" crowd "$@"; }
crowd --model "$out/quick.lmmw" --json "$out/crowd-quick.json"
crowd --model "$out/paper/paper.lmmw" --characters 1,64,1024 --json "$out/crowd-paper.json"
crowd --db "$db" --characters 1,64,1024 --json "$out/crowd-db.json"
crowd --model "$out/quick.lmmw" --characters 1024 --lod 1,2,4 --json "$out/crowd-quick-lod.json"
crowd --model "$out/quick.lmmw" --characters 1024 --budget 1 --json "$out/crowd-quick-budget.json"
