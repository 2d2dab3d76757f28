#!/usr/bin/env bash
# Checks that two builds of the tools behave the same: an old one (e.g. the last release, or main
# before a refactoring) and a new one. Both import the same BVH files; then lmm-sim (database and
# learned characters), lmm-path (a path character) and lmm-eval write their JSON / CSV / BVH, and
# every file of the new build must equal the old build's byte for byte (run times and tool
# versions masked). Then lmm-bench nn, search and crowd of the two builds run in turn, A B A B, and
# the median of each figure is printed with the new / old ratio (a refactoring keeps it near 1).
#
# Usage: scripts/compare-builds.sh OLD_TOOLS_DIR NEW_TOOLS_DIR DATA_DIR [--runs N] [--model X.lmmw]
#   OLD_TOOLS_DIR / NEW_TOOLS_DIR  folders holding lmm-import, lmm-sim, lmm-path, lmm-eval, lmm-bench
#   DATA_DIR                       a BVH folder (e.g. ../shared/data/bandai-loco/normal)
#   --runs N                       benchmark runs per build (default 3)
#   --model X.lmmw                 model bundle for the learned character (default tests/data/golden-v1.lmmw)
#   --no-bench                     compare the outputs only
# Exit status 1 when any output differs. Working files go to a temporary folder, removed at exit.
set -euo pipefail

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 3 ]] || { usage >&2; exit 2; }
old="$(cd "$1" && pwd)"; new="$(cd "$2" && pwd)"; data="$(cd "$3" && pwd)"; shift 3
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=3
model="$root/tests/data/golden-v1.lmmw"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --no-bench) runs=0; shift ;;
    *) echo "compare-builds.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for tool in lmm-import lmm-sim lmm-path lmm-eval lmm-bench; do
  for dir in "$old" "$new"; do
    [[ -x "$dir/$tool" ]] || { echo "compare-builds.sh: $dir/$tool is missing" >&2; exit 2; }
  done
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
differences=0

# Runs the same tool arguments with both builds, each writing under $work/<build>/.
both() {
  local name="$1"; shift
  for build in old new; do
    local dir="$old"; [[ $build == new ]] && dir="$new"
    mkdir -p "$work/$build"
    (cd "$work/$build" && "$dir/$name" "$@" > "$work/$build/$name.log" 2>&1) ||
      { echo "compare-builds.sh: $build $name $* failed:"; tail -5 "$work/$build/$name.log"; exit 1; }
  done
}

# A file's content with run times, dates and tool versions masked.
masked() {
  sed -E 's/"([a-z_0-9]*(seconds|elapsed|wall|us_per|ms_per|_us|_ms|version|date)[a-z_0-9]*)": *("[^"]*"|[-0-9.e+]+)/"\1": -/g' "$1"
}

# Compares every file the two builds wrote.
compare_outputs() {
  local file
  while IFS= read -r file; do
    local rel="${file#"$work/old/"}"
    if [[ ! -f "$work/new/$rel" ]]; then
      echo "  MISSING in the new build: $rel"; differences=$((differences + 1))
    elif [[ "$rel" == *.log ]]; then
      continue
    elif cmp -s "$file" "$work/new/$rel" || cmp -s <(masked "$file") <(masked "$work/new/$rel"); then
      echo "  same: $rel ($(wc -c < "$file") bytes)"
    else
      echo "  DIFFERENT: $rel"; differences=$((differences + 1))
      diff <(masked "$file") <(masked "$work/new/$rel") | head -6 | sed 's/^/    /'
    fi
  done < <(find "$work/old" -type f | sort)
}

echo "== outputs: $old vs $new"
both lmm-import "$data" --out db.mmdb
cp "$work/old/db.mmdb" "$work/shared.mmdb"
both lmm-sim --db "$work/shared.mmdb" --random --seconds 20 --out sim-db --json sim-db.json
both lmm-sim --db "$work/shared.mmdb" --random --random-strafe --seconds 20 --out sim-strafe --json sim-strafe.json
both lmm-sim --model "$model" --random --seconds 20 --out sim-learned --json sim-learned.json
both lmm-path --db "$work/shared.mmdb" --test-path s-curve --out path-s --json path-s.json
both lmm-path --db "$work/shared.mmdb" --test-path sharp-corners --out path-corners --json path-corners.json
compare_outputs

if [[ $runs -eq 0 ]]; then
  [[ $differences -eq 0 ]] || { echo "compare-builds.sh: $differences output(s) differ"; exit 1; }
  echo "compare-builds.sh: every output equal"; exit 0
fi
echo "== lmm-bench, $runs runs per build in turn (median; ratio new / old)"
bench_runs() {
  local command="$1"; shift
  for i in $(seq "$runs"); do
    for build in old new; do
      local dir="$old"; [[ $build == new ]] && dir="$new"
      "$dir/lmm-bench" "$command" "$@" --json "$work/bench-$command-$build-$i.json" > /dev/null 2>&1 ||
        { echo "compare-builds.sh: $build lmm-bench $command failed" >&2; exit 1; }
    done
  done
}
bench_runs nn --model "$model"
bench_runs search --db "$work/shared.mmdb" --queries 2000
bench_runs crowd --db "$work/shared.mmdb" --characters 64,1024
python3 - "$work" "$runs" <<'EOF'
import json, statistics, sys, glob, os
work, runs = sys.argv[1], int(sys.argv[2])
def numbers(value, prefix=""):
    if isinstance(value, dict):
        for k, v in value.items(): yield from numbers(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        for i, v in enumerate(value): yield from numbers(v, f"{prefix}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield prefix, float(value)
timing = ("us", "ns", "ms", "seconds", "per_second", "fps", "characters")
for command in ("nn", "search", "crowd"):
    figures = {}
    for build in ("old", "new"):
        for i in range(1, runs + 1):
            with open(os.path.join(work, f"bench-{command}-{build}-{i}.json")) as f:
                for key, v in numbers(json.load(f)):
                    if any(t in key for t in timing):
                        figures.setdefault(key, {}).setdefault(build, []).append(v)
    print(f"lmm-bench {command}:")
    for key, by in sorted(figures.items()):
        if len(by.get("old", [])) != runs or len(by.get("new", [])) != runs: continue
        o, n = statistics.median(by["old"]), statistics.median(by["new"])
        if o == 0: continue
        print(f"  {key:60s} old {o:12.4g}  new {n:12.4g}  new/old {n / o:6.3f}")
EOF

if [[ $differences -gt 0 ]]; then
  echo "compare-builds.sh: $differences output(s) differ"
  exit 1
fi
echo "compare-builds.sh: every output equal"
