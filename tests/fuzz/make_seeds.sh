#!/usr/bin/env bash
# Makes the seed corpus of every fuzz target under OUT/<target>/ from the real inputs:
#   bvh                 the first frames of three normal-extra BVH files, and one whole file
#   gltf                those four converted to .glb with spindle meshes (lmm-import --convert glb
#                       --mesh spindles), tests/data/blender/spindles.glb, simple_skin.gltf of
#                       Debian's assimp-testmodels when installed, and tests/fuzz/seeds/gltf/
#   fbx                 tests/data/blender/dash.fbx and assimp-testmodels' animation_with_skeleton.fbx
#   config              the shipped skeleton maps, feature schemas and controller configs (configs/)
#   controller          the shipped controller configs
#   c_api               two short C API call programs
#   mmdb, mmdb_hashed   two small databases lmm-import makes from normal-extra, and
#                       tests/fuzz/seeds/mmdb/ (a version-2 database with phase values)
#   lmmw, lmmw_hashed   the golden bundle (tests/data/golden-v1.lmmw)
#   input_script, path  the hand-written inputs in tests/fuzz/seeds/
# Usage: make_seeds.sh OUT LMM_IMPORT SOURCE_DIR
# The data folder is $LMM_DATA, else $LMM_DATA_FALLBACK (the build's LMM_TEST_DATA). Without it
# the BVH seeds and the imported databases are left out with a warning, or, when CI=true, this fails.
set -euo pipefail

[[ $# -eq 3 ]] || { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out="$1" import="$2" src="$3"
data="${LMM_DATA:-${LMM_DATA_FALLBACK:-}}"
extra="$data/normal-extra"

rm -rf "$out"
for target in bvh gltf fbx config controller c_api mmdb mmdb_hashed lmmw lmmw_hashed input_script path; do
  mkdir -p "$out/$target"
done

cp "$src"/configs/skeletons/*.toml "$src"/configs/features/*.toml "$src"/configs/controllers/*.toml "$out/config/"
cp "$src"/configs/controllers/*.toml "$out/controller/"
# C API programs (fuzz_c_api.cpp reads one byte per choice): load both assets, make a database, a
# learned and a path character, update and query them, make a crowd and update it.
printf '\x00\x00\x00\x00\x01\x00\x00\x02\x00\x01\x00\x03\x00\x00\x02\x00\x00\x01\x01\x04\x00' >"$out/c_api/make"
printf '\x00\x00\x00\x00\x00\x00\x02\x00\x02\x00\x01\x00\x02\x01\x05\x02\x04\x03\x00\x05\x00\x00\x09' >"$out/c_api/crowd"
cp "$src/tests/data/golden-v1.lmmw" "$out/lmmw/"
cp "$src/tests/data/golden-v1.lmmw" "$out/lmmw_hashed/"
cp "$src"/tests/fuzz/seeds/input_script/* "$out/input_script/"
cp "$src"/tests/fuzz/seeds/path/* "$out/path/"
cp "$src"/tests/fuzz/seeds/gltf/* "$src"/tests/data/blender/spindles.glb "$out/gltf/"
simple_skin=/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf
if [[ -f "$simple_skin" ]]; then cp "$simple_skin" "$out/gltf/"; fi
cp "$src/tests/data/blender/dash.fbx" "$out/fbx/"
fbx_model=/usr/share/assimp/models/FBX/animation_with_skeleton.fbx
if [[ -f "$fbx_model" ]]; then cp "$fbx_model" "$out/fbx/"; fi
for target in mmdb mmdb_hashed; do cp "$src"/tests/fuzz/seeds/mmdb/* "$out/$target/"; done

if [[ -z "$data" || ! -d "$extra" ]]; then
  if [[ "${CI:-}" == true ]]; then
    echo "make_seeds: no data folder '${data}' with normal-extra/ (LMM_DATA); CI=true needs it" >&2
    exit 1
  fi
  echo "make_seeds: WARNING: no data folder (LMM_DATA): no BVH or database seeds" >&2
else
  # Header and the first four frames (with "Frames:" set to match).
  for name in dash_normal_001 run_normal_001 walk_normal_002; do
    awk 'BEGIN { frames = -1 }
         /^Frames:/ { print "Frames: 4"; next }
         /^Frame Time:/ { print; frames = 0; next }
         frames < 0 { print; next }
         frames < 4 { print; frames++ }' "$extra/dataset-1_$name.bvh" >"$out/bvh/$name-4frames.bvh"
  done
  cp "$extra/dataset-1_dash_normal_001.bvh" "$out/bvh/"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  "$import" "$extra/dataset-1_dash_normal_001.bvh" --out "$work/dash.mmdb" --no-mirror --fps 30 --threads 1 >/dev/null
  "$import" "$extra/dataset-1_dash_normal_001.bvh" "$extra/dataset-1_run_normal_001.bvh" --out "$work/dash-run.mmdb" \
    --features "$src/configs/features/lipschitz31.toml" --fps 20 --threads 1 >/dev/null
  for target in mmdb mmdb_hashed; do cp "$work"/*.mmdb "$out/$target/"; done
  "$import" "$out/bvh" --convert glb --mesh spindles --out "$out/gltf" >/dev/null
fi
for target in "$out"/*/; do
  echo "make_seeds: $(basename "$target"): $(find "$target" -type f | wc -l) file(s), $(du -sk "$target" | cut -f1) KiB"
done
