#!/usr/bin/env bash
# Makes the small motion database the database samples play: a walk and a run of the bandai-loco
# data (scripts/quickstart.sh downloads it), imported with lmm-import, which adds mirrored copies.
#   LMM_DATA=BANDAI_LOCO_FOLDER samples/import_database.sh BUILD/tools/lmm-import OUT.mmdb
# ctest runs it as the fixture samples.import_database. Without the data it removes OUT.mmdb and
# exits 77, so that ctest skips it and the samples that need the database; under CI it fails.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: LMM_DATA=BANDAI_LOCO_FOLDER $0 LMM_IMPORT OUT.mmdb" >&2; exit 2; }
import="$1" out="$2"
data="${LMM_DATA:-${LMM_DATA_FALLBACK:-}}"
clips=("$data/normal-extra/dataset-1_walk_normal_001.bvh" "$data/normal-extra/dataset-1_run_normal_001.bvh")
for clip in "${clips[@]}"; do
  if [[ -z "$data" || ! -f "$clip" ]]; then
    rm -f "$out"
    echo "no normal-extra/${clip##*/} in LMM_DATA='$data': set LMM_DATA to the bandai-loco folder"
    [[ -z "${CI:-}" ]] || exit 1
    exit 77
  fi
done
"$import" "${clips[@]}" --out "$out"
