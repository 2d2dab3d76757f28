#!/usr/bin/env bash
# Quick start: installs the dependencies, builds every tool, imports the "normal" locomotion clips
# of the Bandai-Namco-Research-Motiondataset into a motion database, trains the `quick` preset
# (about 7 minutes: 65 + 179 + 191 s on the 2-core Zen 5 machine, docs/training.md; about 15 minutes in all with the build), exports the runtime bundle, evaluates it against the database
# (lmm-eval), runs the learned controller on random input (lmm-sim) and follows the S-curve test
# path with the database (lmm-path), imports the strafing development set (normal + normal-extra +
# bandai-d1-loco: sidesteps and backward walks) and runs the database controller on random strafe
# requests (lmm-sim --random-strafe); ends by printing the metrics table and the paths of the
# BVH / SVG outputs.
#
# Usage: scripts/quickstart.sh [DATA_DIR]
#   DATA_DIR   a bandai-loco folder (with a normal/ subfolder, optionally normal-extra/ and a sibling
#              bandai-d1-loco/) or any folder that directly contains .bvh files. Default: $LMM_DATA,
#              else the cache folder ${XDG_CACHE_HOME:-$HOME/.cache}/lmmkit/bandai-loco (and its
#              sibling bandai-d1-loco), downloaded on first use.
# Environment: LMM_DATA, LMM_JOBS (build jobs, default 2), LMM_SKIP_INSTALL=1 (skip
# install-deps.sh), LMM_FETCH_TIMEOUT (seconds for the download, default 600), LMM_DATA_REPO
# (git URL of a mirror of the dataset repository).
# Environment: LMM_PRESET (training preset, default quick).
# Writes build/release-tools/ (the build) and build/quickstart/: normal.mmdb, import.json, the
# training folder train/, model.lmmw, eval.json, eval.svg, sim/ (motion.bvh, root.csv, plot.svg),
# path/ (the same files for the path run; path.json) and, with the dataset-1 files, dev.mmdb and
# strafe/ (strafe.json).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

repo_url="${LMM_DATA_REPO:-https://github.com/BandaiNamcoResearchInc/Bandai-Namco-Research-Motiondataset.git}"
repo_folder="dataset/Bandai-Namco-Research-Motiondataset-2/data"
file_patterns=(
  "dataset-2_walk_normal_*.bvh"
  "dataset-2_walk-turn-left_normal_*.bvh"
  "dataset-2_walk-turn-right_normal_*.bvh"
  "dataset-2_run_normal_*.bvh"
)
# Dataset-1 locomotion (Bandai's "dataset-1" folder): walks, backward walks, sidesteps left and
# right, runs and dashes. The "normal" style goes to bandai-loco/normal-extra/, the 12 others to
# bandai-d1-loco/ (the layout of docs/runtime.md#strafing).
d1_folder="dataset/Bandai-Namco-Research-Motiondataset-1/data"
d1_motions=(walk walk-back walk-left walk-right run dash)
d1_styles=(active angry childish chimpira feminine giant happy masculinity musical not-confident proud sad)
d1_patterns=()
for motion in "${d1_motions[@]}"; do
  for style in normal "${d1_styles[@]}"; do d1_patterns+=("dataset-1_${motion}_${style}_*.bvh"); done
done
cache="${XDG_CACHE_HOME:-$HOME/.cache}/lmmkit/bandai-loco"
jobs="${LMM_JOBS:-2}"
fetch_timeout="${LMM_FETCH_TIMEOUT:-600}"

say() { echo "quickstart: $*"; }
die() { echo "quickstart: ERROR: $*" >&2; exit 1; }

case "${1:-}" in
  -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[[ $# -le 1 ]] || die "too many arguments (usage: scripts/quickstart.sh [DATA_DIR])"

# Tells the user how to get the data by hand, then exits 1.
data_help() {
  cat >&2 <<EOF

quickstart: ERROR: $1

To get the sample data by hand, download these files:
  repository: $repo_url
              (https://github.com/BandaiNamcoResearchInc/Bandai-Namco-Research-Motiondataset)
  folder:     $repo_folder/
  files:      ${file_patterns[*]}
              (walk, walk-turn-left, walk-turn-right and run in the "normal" style, about 145 BVH files)
and put them in
  $cache/normal/
or in the normal/ subfolder of any folder you pass as the argument or as LMM_DATA, e.g.
  scripts/quickstart.sh /path/to/bandai-loco     # with /path/to/bandai-loco/normal/*.bvh

License: the dataset is by Bandai Namco Research Inc. under CC BY-NC 4.0 (non-commercial use
only). Attribution: "Bandai-Namco-Research-Motiondataset, Bandai Namco Research Inc., CC BY-NC 4.0".
EOF
  exit 1
}

# Number of .bvh files directly inside folder $1 (0 if it does not exist).
count_bvh() {
  [[ -d "$1" ]] || { echo 0; return; }
  find "$1" -maxdepth 1 -type f -iname '*.bvh' | wc -l
}

# Clones $repo_url into DIR (the first argument) shallowly and sparsely, with only the paths
# matching the remaining arguments (git sparse-checkout patterns), within $fetch_timeout seconds.
sparse_clone() {
  GIT_TERMINAL_PROMPT=0 timeout "$fetch_timeout" bash -c '
      set -euo pipefail
      url="$1"; dir="$2"; shift 2
      git clone --quiet --depth 1 --filter=blob:none --sparse "$url" "$dir"
      git -C "$dir" sparse-checkout set --no-cone "$@"
    ' fetch "$repo_url" "$@"
}

# Downloads the normal-style locomotion clips into $cache/normal with a shallow, sparse,
# blob-filtered clone. Returns non-zero on any failure (offline, timeout, unexpected content).
fetch_data() {
  local parent tmp
  parent="$(dirname "$cache")"
  mkdir -p "$parent" || return 1
  tmp="$(mktemp -d "$parent/download.XXXXXX")" || return 1
  local patterns=()
  local p
  for p in "${file_patterns[@]}"; do patterns+=("/$repo_folder/$p"); done
  say "downloading the sample data (about 145 BVH files) from $repo_url"
  say "(shallow sparse clone, timeout ${fetch_timeout}s; license CC BY-NC 4.0, non-commercial)"
  if ! sparse_clone "$tmp/repo" "${patterns[@]}"; then
    rm -rf "$tmp"
    return 1
  fi
  local src="$tmp/repo/$repo_folder"
  local n
  n="$(count_bvh "$src")"
  if [[ "$n" -eq 0 ]]; then
    say "the download contains no BVH files under $repo_folder/ (repository layout changed?)"
    rm -rf "$tmp"
    return 1
  fi
  # Git LFS pointers instead of BVH text would mean the files must be fetched another way.
  local first
  first="$(find "$src" -maxdepth 1 -type f -iname '*.bvh' | head -n 1)"
  if ! head -c 64 "$first" | grep -q HIERARCHY; then
    say "downloaded files are not BVH text (e.g. $(basename "$first"))"
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$tmp/normal"
  find "$src" -maxdepth 1 -type f -iname '*.bvh' -exec mv -t "$tmp/normal" {} +
  mkdir -p "$cache"
  rm -rf "$cache/normal"
  mv "$tmp/normal" "$cache/normal"
  rm -rf "$tmp"
  say "downloaded $n BVH files to $cache/normal"
}

# Downloads the dataset-1 locomotion files (84 + 7 BVH files, about 15,700 frames) into
# $cache/normal-extra (style "normal") and $cache/../bandai-d1-loco (the 12 other styles) with a
# shallow, sparse, blob-filtered clone. Returns non-zero on any failure.
fetch_d1_data() {
  local parent tmp
  parent="$(dirname "$cache")"
  mkdir -p "$parent" || return 1
  tmp="$(mktemp -d "$parent/download.XXXXXX")" || return 1
  local patterns=() p
  for p in "${d1_patterns[@]}"; do patterns+=("/$d1_folder/$p"); done
  say "downloading the dataset-1 locomotion (sidesteps, backward walks; about 91 BVH files) from $repo_url"
  if ! sparse_clone "$tmp/repo" "${patterns[@]}"; then
    rm -rf "$tmp"
    return 1
  fi
  local src="$tmp/repo/$d1_folder"
  if [[ "$(count_bvh "$src")" -eq 0 ]] || ! head -c 64 "$(find "$src" -maxdepth 1 -type f -iname '*.bvh' | head -n 1)" | grep -q HIERARCHY; then
    say "the dataset-1 download holds no BVH text under $d1_folder/ (repository layout changed?)"
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$tmp/normal-extra" "$tmp/bandai-d1-loco"
  find "$src" -maxdepth 1 -type f -iname 'dataset-1_*_normal_*.bvh' -exec mv -t "$tmp/normal-extra" {} +
  find "$src" -maxdepth 1 -type f -iname '*.bvh' -exec mv -t "$tmp/bandai-d1-loco" {} +
  mkdir -p "$cache"
  rm -rf "$cache/normal-extra" "$parent/bandai-d1-loco"
  mv "$tmp/normal-extra" "$cache/normal-extra"
  mv "$tmp/bandai-d1-loco" "$parent/bandai-d1-loco"
  rm -rf "$tmp"
  say "downloaded $(count_bvh "$cache/normal-extra") + $(count_bvh "$parent/bandai-d1-loco") BVH files to $cache/normal-extra and $parent/bandai-d1-loco"
}

# --- dependencies and build -------------------------------------------------------------------
if [[ "${LMM_SKIP_INSTALL:-0}" != 1 ]]; then
  bash scripts/install-deps.sh || die "installing the dependencies failed (see above)"
fi

build="build/release-tools"
say "configuring $build (Release, tools, training and benchmarks on, tests off)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=ON -DLMM_BUILD_TRAINING=ON \
  -DLMM_BUILD_TESTS=OFF -DLMM_BUILD_BENCH=ON -DLMM_SANITIZE=OFF \
  || die "cmake configure failed (see above)"
# Every tool of tools/CMakeLists.txt (the CLI test cli.quickstart_tools checks that none is missing).
tools=(lmm-import lmm-inspect lmm-train lmm-export lmm-eval lmm-sim lmm-path lmm-bench)
say "building ${tools[*]}"
cmake --build "$build" -j "$jobs" --target "${tools[@]}" || die "build failed (see above)"
bin="$root/$build/tools"
for tool in "${tools[@]}"; do [[ -x "$bin/$tool" ]] || die "$tool not found in $build/tools/"; done
preset="${LMM_PRESET:-quick}"

# --- data -------------------------------------------------------------------------------------
if [[ $# -eq 1 ]]; then
  data="$1"; origin="argument"
elif [[ -n "${LMM_DATA:-}" ]]; then
  data="$LMM_DATA"; origin="LMM_DATA"
else
  data="$cache"; origin="cache"
  if [[ "$(count_bvh "$cache/normal")" -eq 0 ]]; then
    fetch_data || data_help "could not download the sample data (offline, blocked or timed out)."
  fi
  if [[ "$(count_bvh "$(dirname "$cache")/bandai-d1-loco")" -eq 0 ]]; then
    fetch_d1_data || say "WARNING: could not download the dataset-1 locomotion; skipping the strafing run"
  fi
fi
[[ -d "$data" ]] || data_help "data folder '$data' (from $origin) does not exist."
data="$(cd "$data" && pwd)"

inputs=()
if [[ "$(count_bvh "$data/normal")" -gt 0 ]]; then
  inputs+=("$data/normal")
  if [[ "$(count_bvh "$data/normal-extra")" -gt 0 ]]; then
    inputs+=("$data/normal-extra")
  fi
elif [[ "$(count_bvh "$data")" -gt 0 ]]; then
  inputs+=("$data")
else
  data_help "no .bvh files in '$data/normal/' or '$data/' (data folder from $origin)."
fi

# --- import -> train -> export -> eval -> sim ---------------------------------------------------
out="build/quickstart"
mkdir -p "$out"
say "importing ${inputs[*]}"
"$bin/lmm-import" "${inputs[@]}" --out "$out/normal.mmdb" --json "$out/import.json" \
  || die "lmm-import failed (see above)"
echo
"$bin/lmm-inspect" "$out/normal.mmdb" || die "lmm-inspect failed (see above)"
echo
for model in autoencoder stepper projector; do
  say "training the $model (preset '$preset')"
  "$bin/lmm-train" "$model" --db "$out/normal.mmdb" --config "$preset" --out "$out/train" \
    --json "$out/train/$model.json" || die "lmm-train $model failed (see above)"
done
"$bin/lmm-export" --in "$out/train" --out "$out/model.lmmw" --with-encoder || die "lmm-export failed (see above)"
say "evaluating the bundle against the database"
"$bin/lmm-eval" --db "$out/normal.mmdb" --model "$out/model.lmmw" --json "$out/eval.json" --svg "$out/eval.svg" \
  > "$out/eval.txt" || die "lmm-eval failed (see above)"
say "running the learned controller on 60 s of random input"
"$bin/lmm-sim" --model "$out/model.lmmw" --random --seconds 60 --out "$out/sim" --json "$out/sim.json" \
  || die "lmm-sim failed (see above)"
say "following the s-curve test path with the database (lmm-path, LHMM(3, 3))"
"$bin/lmm-path" --db "$out/normal.mmdb" --test-path s-curve --out "$out/path" --json "$out/path.json" \
  || die "lmm-path failed (see above)"
# The strafing development set: normal + normal-extra + the sibling bandai-d1-loco.
d1="$(dirname "$data")/bandai-d1-loco"
strafing=0
if [[ "${inputs[0]}" == "$data/normal" && "$(count_bvh "$data/normal-extra")" -gt 0 && "$(count_bvh "$d1")" -gt 0 ]]; then
  strafing=1
  say "importing the strafing development set ($data/normal, $data/normal-extra, $d1)"
  "$bin/lmm-import" "$data/normal" "$data/normal-extra" "$d1" --out "$out/dev.mmdb" --json "$out/dev-import.json" \
    || die "lmm-import of the development set failed (see above)"
  say "running the database controller on 60 s of random strafe requests"
  "$bin/lmm-sim" --db "$out/dev.mmdb" --random --random-strafe --seconds 60 --seed 1 --out "$out/strafe" \
    --json "$out/strafe.json" || die "lmm-sim --random-strafe failed (see above)"
else
  say "no bandai-d1-loco next to $data (or no normal-extra/): skipping the strafing run"
fi
echo
cat "$out/eval.txt"
echo
say "done"
say "database:          $root/$out/normal.mmdb"
say "model bundle:      $root/$out/model.lmmw"
say "metrics:           $root/$out/eval.json, $root/$out/sim.json, $root/$out/path.json"
if [[ $strafing == 1 ]]; then
  say "strafing:          $root/$out/dev.mmdb, $root/$out/strafe.json, $root/$out/strafe/plot.svg"
fi
say "rollout error SVG: $root/$out/eval.svg"
say "motion (BVH):      $root/$out/sim/motion.bvh, $root/$out/path/motion.bvh"
say "paths (SVG):       $root/$out/sim/plot.svg, $root/$out/path/plot.svg"
