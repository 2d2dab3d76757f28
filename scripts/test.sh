#!/usr/bin/env bash
# Builds lmmkit in five configurations and runs every test in each:
#   runtime-only  the runtime and its tests with only a compiler, CMake and GoogleTest
#   asan          Debug + AddressSanitizer/UndefinedBehaviorSanitizer, tools on
#   release       Release with tools, training (LibTorch + FAISS) and benchmarks
#   fuzz          Clang libFuzzer targets (tests/fuzz): replays the regression inputs and fuzzes
#                 each target for LMM_FUZZ_SECONDS (default 30) on seeds made from the data
#   wasm          the runtime and its tests compiled to WebAssembly by Debian's emscripten (SIMD128
#                 kernels on) and run in Node.js, and the browser demo tested in headless chromium
#                 (web.demo: needs the release configuration's lmm-import and npm); skipped with a
#                 warning when emcmake is missing, except under CI=true
#
# Usage: scripts/test.sh [--data DIR] [CONFIG...]
#   --data DIR   the bandai-loco BVH folder (default: $LMM_DATA, else the quickstart cache)
#   CONFIG       run only these configurations (runtime-only, asan, release, fuzz, wasm); default all
# Environment: LMM_DATA, LMM_JOBS (build jobs and tests run at once, default 2),
# LMM_SKIP_INSTALL=1 (skip install-deps.sh), CI=true (tests that need data fail instead of
# skipping when it is missing), LMM_FUZZ_SECONDS (fuzz configuration: seconds per target,
# default 30).
# The last line printed is "N passed, M failed" over all ctest runs; the exit status is non-zero
# if any configuration failed to configure or build, or any test failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

all_configs=(runtime-only asan release fuzz wasm)
selected=()
data="${LMM_DATA:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) [[ $# -ge 2 ]] || { echo "test.sh: --data needs a folder" >&2; exit 2; }
            data="$2"; shift 2 ;;
    --data=*) data="${1#--data=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    runtime-only|asan|release|fuzz|wasm) selected+=("$1"); shift ;;
    *) echo "test.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ ${#selected[@]} -gt 0 ]] || selected=("${all_configs[@]}")

if [[ "${LMM_SKIP_INSTALL:-0}" != 1 ]]; then
  bash scripts/install-deps.sh
fi

# Data: --data, else LMM_DATA, else the folder scripts/quickstart.sh downloads to.
if [[ -z "$data" ]]; then
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/lmmkit/bandai-loco"
  if [[ -d "$cache/normal" ]]; then
    data="$cache"
  fi
fi
if [[ -n "$data" ]]; then
  if [[ ! -d "$data" ]]; then
    echo "test.sh: data folder '$data' does not exist" >&2
    exit 2
  fi
  data="$(cd "$data" && pwd)"
  echo "test.sh: data: $data"
else
  echo "test.sh: WARNING: no data folder (use --data DIR or LMM_DATA); tests that need data will" \
       "skip$([[ "${CI:-}" == true ]] && echo ", or fail because CI=true")"
fi
export LMM_DATA="$data"

jobs="${LMM_JOBS:-2}"
total_passed=0
total_failed=0
declare -A result=()
status=0

# Runs ctest in build dir $1, $jobs tests at a time (extra environment in the remaining args), and
# adds its counts.
run_ctest() {
  local dir="$1"; shift
  local log="$dir/ctest.log" rc=0
  env "$@" ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$jobs" 2>&1 | tee "$log" || rc=$?
  local line
  line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)"
  if [[ -n "$line" ]]; then
    local failed total
    failed="$(sed -E 's/.*passed, ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
    total="$(sed -E 's/.*passed, ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")"
    total_passed=$((total_passed + total - failed))
    total_failed=$((total_failed + failed))
    echo "ctest summary: $line"
    ctest_line="$line"
  else
    if grep -q "No tests were found" "$log"; then
      ctest_line="no tests found"
    else
      ctest_line="no ctest summary (exit status $rc)"
    fi
    echo "ctest summary: $ctest_line"
    [[ $rc -ne 0 ]] || rc=1
  fi
  return "$rc"
}

n=0
for name in "${selected[@]}"; do
  n=$((n + 1))
  dir="build/$name"
  cmake_env=()
  configure=(cmake)
  build_target=()
  case "$name" in
    runtime-only)
      flags=(-DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=OFF -DLMM_BUILD_TRAINING=OFF
             -DLMM_BUILD_BENCH=OFF -DLMM_BUILD_TESTS=ON -DLMM_SANITIZE=OFF)
      test_env=() ;;
    asan)
      flags=(-DCMAKE_BUILD_TYPE=Debug -DLMM_SANITIZE=ON -DLMM_BUILD_TOOLS=ON
             -DLMM_BUILD_TRAINING=OFF -DLMM_BUILD_BENCH=OFF -DLMM_BUILD_TESTS=ON)
      test_env=(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1) ;;
    release)
      flags=(-DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=ON -DLMM_BUILD_TRAINING=ON
             -DLMM_BUILD_BENCH=ON -DLMM_BUILD_TESTS=ON -DLMM_SANITIZE=OFF)
      test_env=() ;;
    fuzz)
      # Only the fuzz targets and lmm-import (for the database seeds); unit tests are off here.
      cmake_env=(CC=clang CXX=clang++)
      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLMM_BUILD_FUZZ=ON -DLMM_BUILD_TOOLS=ON
             -DLMM_BUILD_TRAINING=OFF -DLMM_BUILD_BENCH=OFF -DLMM_BUILD_TESTS=OFF -DLMM_SANITIZE=OFF)
      build_target=(--target fuzz_targets)
      test_env=(LMM_FUZZ_SECONDS="${LMM_FUZZ_SECONDS:-30}") ;;
    wasm)
      if ! command -v emcmake >/dev/null 2>&1; then
        if [[ "${CI:-}" == true ]]; then
          result[$name]="FAILED (emscripten is not installed: scripts/install-deps.sh installs it)"; status=1
        else
          result[$name]="skipped (emscripten is not installed: scripts/install-deps.sh installs it)"
        fi
        continue
      fi
      # Emscripten's JavaScript optimiser needs Debian's node modules (acorn), which a node from
      # another source does not search by itself.
      cmake_env=(NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}")
      configure=(emcmake cmake)
      # The browser test (web.demo) imports its database with the release configuration's lmm-import.
      flags=(-DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=OFF -DLMM_BUILD_TRAINING=OFF -DLMM_BUILD_BENCH=OFF
             -DLMM_BUILD_TESTS=ON -DLMM_SANITIZE=OFF -DLMM_BUILD_C_SHARED=OFF
             -DLMM_HOST_TOOLS_DIR="$root/build/release/tools")
      build_target=(--target lmm_runtime_tests lmm_web)
      test_env=() ;;
  esac
  echo
  echo "===================================================================================="
  echo "=== [$n/${#selected[@]}] $name: $dir ${flags[*]}"
  echo "===================================================================================="
  start=$SECONDS
  if ! env "${cmake_env[@]}" "${configure[@]}" -S . -B "$dir" "${flags[@]}" -DLMM_TEST_DATA="$LMM_DATA"; then
    result[$name]="FAILED (configure)"; status=1; continue
  fi
  if ! env "${cmake_env[@]}" cmake --build "$dir" -j "$jobs" "${build_target[@]}"; then
    result[$name]="FAILED (build)"; status=1; continue
  fi
  ctest_line=""
  if run_ctest "$dir" "${test_env[@]}"; then
    result[$name]="ok: $ctest_line ($((SECONDS - start)) s)"
  else
    result[$name]="FAILED: $ctest_line ($((SECONDS - start)) s)"; status=1
  fi
done

echo
echo "=== test.sh summary ($root, data: ${LMM_DATA:-none})"
for name in "${selected[@]}"; do
  printf '  %-13s %s\n' "$name" "${result[$name]}"
done
if [[ $status -eq 0 ]]; then
  echo "test.sh: ALL PASSED"
else
  echo "test.sh: FAILED"
fi
echo "$total_passed passed, $total_failed failed"
exit "$status"
