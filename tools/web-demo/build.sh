#!/usr/bin/env bash
# Builds TARGETs of the WebAssembly configuration scripts/demo.sh and scripts/bench-wasm.sh use
# (build/web: Release, the runtime and tools/web-demo only) with Debian's emscripten.
# Usage: tools/web-demo/build.sh TARGET... (from the repository root). Environment: LMM_JOBS.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "build.sh: usage: build.sh TARGET..." >&2; exit 2; }
# Emscripten's JavaScript optimiser needs Debian's node modules (acorn), which a node from
# another source does not search by itself.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
emcmake cmake -S . -B build/web -DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=OFF -DLMM_BUILD_TRAINING=OFF \
  -DLMM_BUILD_TESTS=OFF -DLMM_BUILD_C_SHARED=OFF >/dev/null
cmake --build build/web -j "${LMM_JOBS:-2}" --target "$@"
