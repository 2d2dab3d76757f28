#!/usr/bin/env bash
# Consumer test: builds tests/consumer against lmm::runtime in a fresh temporary folder and runs
# it on a model bundle. MODE add_subdirectory builds lmmkit's source tree inside the consumer;
# MODE find_package first installs lmmkit's runtime-only configuration into a temporary prefix.
# Nested builds use the compiler in $CXX when set (CMake reads it on a first configure) and
# CMAKE_BUILD_PARALLEL_LEVEL jobs (default 2). They are Debug builds: the test checks the package
# and the README's code, not their speed, and unoptimised they build in about a third of the time
# (38 s against 110-140 s for add_subdirectory on a 2-core Zen 3).
set -euo pipefail

usage() {
  echo "usage: $0 add_subdirectory|find_package LMMKIT_SOURCE_DIR BUNDLE.lmmw" >&2
  exit 2
}
[[ $# -eq 3 ]] || usage
mode=$1
source_dir=$2
bundle=$3
consumer_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() {
  echo "consumer test ($mode) FAILED: $*" >&2
  exit 1
}
[[ $mode == add_subdirectory || $mode == find_package ]] || usage
[[ -f $source_dir/CMakeLists.txt ]] || fail "no lmmkit source tree at '$source_dir'"
source_dir=$(cd "$source_dir" && pwd)  # add_subdirectory would resolve a relative path elsewhere
[[ -f $bundle ]] || fail "no model bundle at '$bundle'"

work=$(mktemp -d "${TMPDIR:-/tmp}/lmm-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
echo "consumer test ($mode): compiler ${CXX:-(CMake default)}, building in $work"

consumer_args=()
if [[ $mode == find_package ]]; then
  cmake -S "$source_dir" -B "$work/lmmkit-build" -DCMAKE_BUILD_TYPE=Debug -DLMM_BUILD_TOOLS=OFF \
    -DLMM_BUILD_TESTS=OFF -DLMM_BUILD_BENCH=OFF -DLMM_BUILD_TRAINING=OFF -DLMM_SANITIZE=OFF \
    || fail "configuring lmmkit (runtime only) failed"
  cmake --build "$work/lmmkit-build" || fail "building lmmkit failed"
  cmake --install "$work/lmmkit-build" --prefix "$work/prefix" || fail "installing lmmkit failed"
  consumer_args=(-DCMAKE_PREFIX_PATH="$work/prefix")
else
  consumer_args=(-DLMMKIT_SOURCE_DIR="$source_dir")
fi

cmake -S "$consumer_dir" -B "$work/consumer-build" -DCMAKE_BUILD_TYPE=Debug "${consumer_args[@]}" \
  || fail "configuring the consumer failed"
cmake --build "$work/consumer-build" || fail "building the consumer failed"
"$work/consumer-build/lmm_consumer" "$bundle" || fail "the consumer failed on '$bundle'"
"$work/consumer-build/lmm_readme_example" "$bundle" || fail "README's example failed on '$bundle'"
# README.md shows samples/readme_character.cpp from its first #include on, unchanged.
readme_code=$(sed -n '/^## A character in your game/,/^## [^A]/p' "$source_dir/README.md" | sed -n '/^```cpp$/,/^```$/p' | sed '1d;$d')
[[ "$readme_code" == "$(sed -n '/^#include/,$p' "$source_dir/samples/readme_character.cpp")" ]] ||
  fail "README.md's example differs from samples/readme_character.cpp"
echo "consumer test ($mode): passed"
