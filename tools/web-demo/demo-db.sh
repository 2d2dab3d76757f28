#!/usr/bin/env bash
# Imports a database small enough for the browser demo: the first N clips of each "normal"
# locomotion of bandai-loco (walk, walk-turn-left, walk-turn-right, run), the backward walk of
# normal-extra, a sidestep to each side ("sad" style walk-left and walk-right of bandai-d1-loco:
# the data's true sidesteps, docs/strafing.md) and one wave, bow, kick and punch of bandai-actions
# (the page's action keys 1-4) with a bye (whose standing frames give the idle), at 30 fps (half
# the default rate: half the bytes). Tags and events come from lmm-import's default skeleton config
# (configs/skeletons/bandai.toml).
# Usage: tools/web-demo/demo-db.sh LMM_IMPORT DATA_DIR N OUT.mmdb
# DATA_DIR is a bandai-loco folder (normal/ and normal-extra/); the sidesteps and the actions are
# read from the bandai-d1-loco and bandai-actions folders beside it. Without bandai-d1-loco the
# sidesteps are normal-extra's walk-left and walk-right, walks towards the side with the body
# turned (strafing then walks diagonally); without bandai-actions the action keys have nothing to
# play (the page reports it). lmm-import writes OUT.mmdb atomically. The import's log goes to
# OUT.mmdb.log.
set -euo pipefail
[[ $# -eq 4 ]] || { echo "demo-db.sh: usage: demo-db.sh LMM_IMPORT DATA_DIR N OUT.mmdb" >&2; exit 2; }
import="$1" data="$2" per_motion="$3" out="$4"
[[ "$per_motion" =~ ^[1-9][0-9]*$ ]] || { echo "demo-db.sh: N must be a positive integer, not '$per_motion'" >&2; exit 2; }
files=()
for motion in walk walk-turn-left walk-turn-right run; do
  found=("$data"/normal/dataset-2_"$motion"_normal_*.bvh)
  [[ -f "${found[0]}" ]] || { echo "demo-db.sh: no $data/normal/dataset-2_${motion}_normal_*.bvh" >&2; exit 1; }
  files+=("${found[@]:0:$per_motion}")
done
sidesteps="$(dirname "$data")/bandai-d1-loco"
extra=(walk-back)
if [[ -d "$sidesteps" ]]; then
  for motion in walk-left walk-right; do
    clip="$sidesteps/dataset-1_${motion}_sad_001.bvh"
    [[ -f "$clip" ]] || { echo "demo-db.sh: no $clip (a sidestep)" >&2; exit 1; }
    files+=("$clip")
  done
else
  echo "demo-db.sh: no $sidesteps beside $data: normal-extra's walks to the side serve as sidesteps" >&2
  extra+=(walk-left walk-right)
fi
for motion in "${extra[@]}"; do
  clip="$data/normal-extra/dataset-1_${motion}_normal_001.bvh"
  [[ -f "$clip" ]] || { echo "demo-db.sh: no $clip" >&2; exit 1; }
  files+=("$clip")
done
actions="$(dirname "$data")/bandai-actions"
if [[ -d "$actions" ]]; then
  # bye: its 2 s of standing still are the idle (the other clips stand still for at most 1 s,
  # not long enough for idle's 1 s look-ahead at 30 fps).
  for motion in wave-right-hand bow kick punch bye; do
    clip=("$actions"/dataset-*_"$motion"_normal_001.bvh)
    [[ -f "${clip[0]}" ]] || { echo "demo-db.sh: no $actions/dataset-*_${motion}_normal_001.bvh" >&2; exit 1; }
    files+=("${clip[0]}")
  done
else
  echo "demo-db.sh: no $actions beside $data: the database has no actions (keys 1-4 will have nothing to play) and no idle" >&2
fi
"$import" "${files[@]}" --fps 30 --out "$out" >"$out.log" 2>&1 ||
  { cat "$out.log" >&2; echo "demo-db.sh: lmm-import failed" >&2; exit 1; }
echo "demo-db.sh: $out: ${#files[@]} clips, $(du -h "$out" | cut -f1)"
