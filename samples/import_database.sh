#!/usr/bin/env bash
# Makes the small motion databases the database samples play, imported with lmm-import (which adds
# mirrored copies and the tags of configs/skeletons/bandai.toml): a walk and a run of the
# bandai-loco data (scripts/quickstart.sh downloads it); with --gameplay also a wave of the
# bandai-actions folder beside it (a standing action for samples/gameplay.cpp and gameplay.py).
#   LMM_DATA=BANDAI_LOCO_FOLDER samples/import_database.sh [--gameplay] BUILD/tools/lmm-import OUT.mmdb
# ctest runs it as the fixtures samples.import_database and samples.import_gameplay_database.
# Without the data it removes OUT.mmdb and exits 77, so that ctest skips it and the samples that
# need the database; under CI it fails.
set -euo pipefail
gameplay=0
[[ "${1:-}" == --gameplay ]] && { gameplay=1; shift; }
[[ $# -eq 2 ]] || { echo "usage: LMM_DATA=BANDAI_LOCO_FOLDER $0 [--gameplay] LMM_IMPORT OUT.mmdb" >&2; exit 2; }
import="$1" out="$2"
data="${LMM_DATA:-${LMM_DATA_FALLBACK:-}}"
clips=("$data/normal-extra/dataset-1_walk_normal_001.bvh" "$data/normal-extra/dataset-1_run_normal_001.bvh")
[[ $gameplay == 0 ]] || clips+=("$data/../bandai-actions/dataset-2_wave-both-hands_normal_001.bvh")
for clip in "${clips[@]}"; do
  if [[ -z "$data" || ! -f "$clip" ]]; then
    rm -f "$out"
    echo "no ${clip#"$data"/} in LMM_DATA='$data': set LMM_DATA to the bandai-loco folder (bandai-actions beside it)"
    [[ -z "${CI:-}" ]] || exit 1
    exit 77
  fi
done
"$import" "${clips[@]}" --out "$out"
