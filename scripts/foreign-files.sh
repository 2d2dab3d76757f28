#!/usr/bin/env bash
# Foreign FBX and glTF files (issue 44), re-runnable; needs Debian's blender. Prints each figure
# beside its limit:
#   - Blender writes every BVH clip of a Bandai folder as FBX (Y up), as glTF binary, and as FBX
#     with Z up and its bones named as Mixamo's (scripts/blender/bvh_to.py); each set imports with a
#     config alone (configs/skeletons/bandai.toml; mixamo.toml for the renamed rig), and its
#     database matches the BVH one (lmm-inspect --compare): joint world positions within 1 mm on
#     every frame, normalised features within 1e-2, nearest-neighbour results the same or ties;
#   - FBX import time within 2x the BVH files' (median of 3 runs each, same frames);
#   - Blender reads lmmkit's .glb (lmm-import --convert glb) of every clip as the BVH it came from:
#     joint world positions within 1 mm at 10 frames of each (scripts/blender/check_glb.py);
#   - Debian's assimp-testmodels animation_with_skeleton.fbx and simple_skin.gltf read (lmm-inspect).
# Exit status 1 when a check fails.
#
# Usage: scripts/foreign-files.sh TOOLS_DIR DATA_DIR [FOLDER]
#   TOOLS_DIR  folder holding lmm-import and lmm-inspect (e.g. build/release-tools/tools)
#   DATA_DIR   the shared data folder holding bandai-loco/
#   FOLDER     the folder of DATA_DIR/bandai-loco to convert (default normal-extra, 7 clips;
#              normal, 145 clips, takes about 5 minutes)
# Working files go to a temporary folder, removed at exit.
set -euo pipefail

usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 && $# -le 3 ]] || { usage >&2; exit 2; }
tools="$(cd "$1" && pwd)"; data="$(cd "$2" && pwd)"; folder="${3:-normal-extra}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/limits.sh"  # check, median_import
for tool in lmm-import lmm-inspect; do
  [[ -x "$tools/$tool" ]] || { echo "foreign-files.sh: $tools/$tool is missing" >&2; exit 2; }
done
command -v blender >/dev/null || { echo "foreign-files.sh: needs blender (apt-get install blender)" >&2; exit 2; }
source_dir="$data/bandai-loco/$folder"
[[ -d "$source_dir" ]] || { echo "foreign-files.sh: $source_dir is missing" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
blender_run() { blender -b --factory-startup --python "$root/scripts/blender/$1" -- "${@:2}" 2>&1; }
value() { python3 -c "import json; print(json.load(open('$1'))['$2'])"; }

echo "== Blender $(blender --version 2>/dev/null | head -1 | cut -d' ' -f2) writes bandai-loco/$folder ($(ls "$source_dir"/*.bvh | wc -l) clips)"
kinds=(fbx glb fbx-mixamo-z-up)
for kind in "${kinds[@]}"; do
  blender_run bvh_to.py "$kind" "$work/$kind" "$source_dir"/*.bvh | grep -c "wrote" | sed "s/^/   $kind: /"
done
"$tools/lmm-import" "$source_dir" --out "$work/bvh.mmdb" > "$work/bvh.log" 2>&1
for kind in "${kinds[@]}"; do
  config=bandai
  [[ $kind == *mixamo* ]] && config=mixamo
  echo "== Blender's $kind files, imported with $config.toml, against the BVH database"
  "$tools/lmm-import" "$work/$kind" --skeleton "$root/configs/skeletons/$config.toml" --out "$work/$kind.mmdb" \
    > "$work/$kind.log" 2>&1 || { cat "$work/$kind.log"; exit 1; }
  grep -m1 -o "$kind/[^ ]*: [^;]*" "$work/$kind.log" | sed 's/^/   /' || true
  "$tools/lmm-inspect" "$work/bvh.mmdb" --compare "$work/$kind.mmdb" --json "$work/$kind.json" | sed 1,2d
  check "$kind: joint world positions, largest difference (mm)" "$(value "$work/$kind.json" max_position_mm)" "<=" 1
  check "$kind: normalised features, largest difference" "$(value "$work/$kind.json" max_feature_difference)" "<=" 1e-2
  check "$kind: cost of the other nearest frame over the best" "$(value "$work/$kind.json" max_cost_gap)" "<=" 1e-3
done

echo "== import time (median of 3)"
bvh_seconds=$(median_import "$tools/lmm-import" "$source_dir" "$work/t.mmdb")
fbx_seconds=$(median_import "$tools/lmm-import" "$work/fbx" "$work/t.mmdb")
echo "   BVH $bvh_seconds s, FBX $fbx_seconds s ($(du -sh "$source_dir" | cut -f1) of BVH, $(du -sh "$work/fbx" | cut -f1) of FBX)"
check "import time, FBX / BVH" "$(python3 -c "print(round($fbx_seconds / max($bvh_seconds, 0.01), 2))")" "<=" 2

echo "== Blender reads lmmkit's .glb (lmm-import --convert glb) as the BVH"
"$tools/lmm-import" "$source_dir" --convert glb --out "$work/ours" > /dev/null 2>&1
worst=0
for bvh in "$source_dir"/*.bvh; do
  line="$(blender_run check_glb.py "$work/ours/$(basename "${bvh%.bvh}").glb" "$bvh" | grep "check_glb.py:")"
  worst="$(python3 -c "import re; print(max($worst, float(re.search(r'distance ([0-9.]+) mm', '''$line''').group(1))))")"
done
echo "   last: ${line#check_glb.py: }"
check "Blender: joint world positions, largest difference over the clips (mm)" "$worst" "<=" 1

echo "== assimp-testmodels"
for file in /usr/share/assimp/models/FBX/animation_with_skeleton.fbx /usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf; do
  "$tools/lmm-inspect" "$file" | sed -n '2p;4,$p' | sed "s|^|   $(basename "$file"):|"
done
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
