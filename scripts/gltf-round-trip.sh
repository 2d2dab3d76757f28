#!/usr/bin/env bash
# glTF round trip of the sample data (issue 44), re-runnable: converts every BVH file of a Bandai
# folder to .glb with `lmm-import --convert glb` and those back to BVH with `--convert bvh`, imports
# the three sets with configs/skeletons/bandai.toml, and prints each figure beside its limit:
#   - the .glb database against the BVH one (lmm-inspect --compare): joint world positions within
#     1 mm on every frame, normalised features within 1e-4, every nearest-neighbour result the same;
#   - the BVH -> .glb -> BVH database against the BVH one, for the record (BVH prints 6 digits);
#   - import time of the .glb files within 2x the BVH files' (median of 3 runs each, same frames).
# Exit status 1 when a check fails.
#
# Usage: scripts/gltf-round-trip.sh TOOLS_DIR DATA_DIR [FOLDER]
#   TOOLS_DIR  folder holding lmm-import and lmm-inspect (e.g. build/release-tools/tools)
#   DATA_DIR   the shared data folder holding bandai-loco/
#   FOLDER     the folder of DATA_DIR/bandai-loco to convert (default normal)
# Working files go to a temporary folder, removed at exit.
set -euo pipefail

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 && $# -le 3 ]] || { usage >&2; exit 2; }
tools="$(cd "$1" && pwd)"; data="$(cd "$2" && pwd)"; folder="${3:-normal}"
source "$(dirname "${BASH_SOURCE[0]}")/limits.sh"  # check, median_import
for tool in lmm-import lmm-inspect; do
  [[ -x "$tools/$tool" ]] || { echo "gltf-round-trip.sh: $tools/$tool is missing" >&2; exit 2; }
done
source_dir="$data/bandai-loco/$folder"
[[ -d "$source_dir" ]] || { echo "gltf-round-trip.sh: $source_dir is missing" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== convert bandai-loco/$folder: BVH -> .glb -> BVH"
"$tools/lmm-import" "$source_dir" --convert glb --out "$work/glb" 2>&1 | grep -E "wrote"
"$tools/lmm-import" "$work/glb" --convert bvh --out "$work/bvh-again" 2>&1 | grep -E "wrote"
echo "   .glb: $(du -sh "$work/glb" | cut -f1), BVH: $(du -sh "$source_dir" | cut -f1)"

echo "== import (median of 3)"
bvh_seconds=$(median_import "$tools/lmm-import" "$source_dir" "$work/bvh.mmdb")
glb_seconds=$(median_import "$tools/lmm-import" "$work/glb" "$work/glb.mmdb")
"$tools/lmm-import" "$work/bvh-again" --out "$work/bvh-again.mmdb" > /dev/null 2>&1
echo "   BVH $bvh_seconds s, .glb $glb_seconds s ($(grep -o '[0-9]* frames' "$work/bvh.mmdb.log" | head -1))"
check "import time, .glb / BVH" "$(python3 -c "print(round($glb_seconds / $bvh_seconds, 2))")" "<=" 2

# Prints the value of KEY in lmm-inspect's --compare JSON $1.
value() { python3 -c "import json; print(json.load(open('$1'))['$2'])"; }
echo "== .glb database against the BVH one (lmm-inspect --compare)"
"$tools/lmm-inspect" "$work/bvh.mmdb" --compare "$work/glb.mmdb" --json "$work/glb.json" | sed 1d
check "joint world positions, largest difference (mm)" "$(value "$work/glb.json" max_position_mm)" "<=" 1
check "normalised features, largest difference" "$(value "$work/glb.json" max_feature_difference)" "<=" 1e-4
check "nearest-neighbour results the same (of 1000)" "$(value "$work/glb.json" same_nearest)" "==" 1000
echo "== BVH -> .glb -> BVH database against the BVH one (for the record)"
"$tools/lmm-inspect" "$work/bvh.mmdb" --compare "$work/bvh-again.mmdb" | sed 1d
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
