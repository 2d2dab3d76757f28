#!/usr/bin/env bash
# Builds the libFuzzer targets (build/fuzz: Clang, -fsanitize=fuzzer,address,undefined), makes
# their seed corpora from the real data (build/fuzz/corpus-seed/) and fuzzes every target for
# SECONDS (default 60), one after the other. Prints per target: executions, coverage (cov / ft
# at the end), corpus size and findings (crashes, leaks, timeouts over 10 s, ooms over 2 GB);
# crashing inputs are written to build/fuzz/artifacts/<target>/, logs to build/fuzz/logs/.
# Exits non-zero if any target found anything.
#
# Usage: scripts/fuzz.sh [--data DIR] [SECONDS] [TARGET...]
#   --data DIR   the bandai-loco BVH folder (default: $LMM_DATA)
#   TARGET       fuzz only these (bvh gltf fbx config mmdb mmdb_hashed lmmw lmmw_hashed input_script path
#                controller c_api)
# Environment: LMM_JOBS (build jobs, default 2).
# A finding becomes a regression test: minimise it (build/fuzz/tests/fuzz/fuzz_T -minimize_crash=1
# -max_total_time=60 -exact_artifact_path=OUT CRASH), add OUT under tests/fuzz/regressions/T/, fix.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

all_targets=(bvh gltf fbx config mmdb mmdb_hashed lmmw lmmw_hashed input_script path controller c_api)
seconds=60
targets=()
data="${LMM_DATA:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) [[ $# -ge 2 ]] || { echo "fuzz.sh: --data needs a folder" >&2; exit 2; }
            data="$2"; shift 2 ;;
    --data=*) data="${1#--data=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    [0-9]*) seconds="$1"; shift ;;
    *) [[ " ${all_targets[*]} " == *" $1 "* ]] || { echo "fuzz.sh: unknown target '$1'" >&2; usage >&2; exit 2; }
       targets+=("$1"); shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
if [[ -n "$data" ]]; then
  [[ -d "$data" ]] || { echo "fuzz.sh: data folder '$data' does not exist" >&2; exit 2; }
  data="$(cd "$data" && pwd)"
fi
export LMM_DATA="$data"

dir=build/fuzz
CC=clang CXX=clang++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLMM_BUILD_FUZZ=ON \
  -DLMM_BUILD_TOOLS=ON -DLMM_BUILD_TRAINING=OFF -DLMM_BUILD_BENCH=OFF -DLMM_BUILD_TESTS=OFF \
  -DLMM_TEST_DATA="$data" >/dev/null
cmake --build "$dir" -j "${LMM_JOBS:-2}" --target fuzz_targets
bash tests/fuzz/make_seeds.sh "$dir/corpus-seed" "$dir/tools/lmm-import" "$(pwd)"

summary=()
status=0
for target in "${targets[@]}"; do
  echo "fuzz.sh: fuzzing $target for $seconds s"
  line="$(bash tests/fuzz/fuzz_run.sh fuzz "$dir/tests/fuzz/fuzz_$target" "$dir/corpus-seed/$target" "$dir" "$seconds")" ||
    status=1
  echo "$line"
  summary+=("$(head -n 1 <<<"$line")")
done

echo
echo "=== fuzz.sh summary ($seconds s per target)"
printf '  %s\n' "${summary[@]}"
if [[ $status -eq 0 ]]; then
  echo "fuzz.sh: no findings"
else
  echo "fuzz.sh: FINDINGS (inputs under $dir/artifacts/, logs under $dir/logs/)"
fi
exit "$status"
