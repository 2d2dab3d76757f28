#!/usr/bin/env bash
# The cost of a character update in WebAssembly (Node.js: the JavaScript engine of Chromium)
# against the native build, on the same asset in the same run: builds lmm-update-bench natively
# (build/bench-native) and with Debian's emscripten (build/web, as scripts/demo.sh), runs them in
# turn ROUNDS times and prints each run, the medians and their ratio.
#
# Usage: scripts/bench-wasm.sh (--db X.mmdb | --model X.lmmw) [--seconds S] [--rounds N]
# Environment: LMM_JOBS (build jobs, default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

asset=() seconds=20 rounds=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --db|--model) asset=("$1" "$2"); shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-wasm.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ ${#asset[@]} -eq 2 && -f "${asset[1]}" ]] || { echo "bench-wasm.sh: give --db X.mmdb or --model X.lmmw (an existing file)" >&2; exit 2; }

cmake -S . -B build/bench-native -DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=ON -DLMM_BUILD_TESTS=OFF \
  -DLMM_BUILD_C_SHARED=OFF >/dev/null
cmake --build build/bench-native -j "${LMM_JOBS:-2}" --target lmm-update-bench >/dev/null
bash tools/web-demo/build.sh lmm-update-bench >/dev/null

native=() wasm=()
# The median per-update figure of one lmm-update-bench line.
figure() { sed -E 's/.*: ([0-9.]+) us per update.*/\1/'; }
for ((r = 1; r <= rounds; ++r)); do
  line="$(build/bench-native/tools/web-demo/lmm-update-bench "${asset[@]}" --seconds "$seconds")"
  echo "native: $line"; native+=("$(figure <<<"$line")")
  line="$(node --no-experimental-fetch build/web/tools/web-demo/lmm-update-bench.js "${asset[@]}" --seconds "$seconds")"
  echo "wasm:   $line"; wasm+=("$(figure <<<"$line")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
n="$(median "${native[@]}")" w="$(median "${wasm[@]}")"
awk -v n="$n" -v w="$w" 'BEGIN {printf "bench-wasm.sh: median of the rounds: native %.2f us, WebAssembly %.2f us per update: %.2fx\n", n, w, w / n}'
