#!/usr/bin/env bash
# Path following under a tag constraint (issue 43, item 3), re-runnable: imports bandai-loco/normal
# with configs/skeletons/bandai.toml (tags walk and run by file name), then runs lmm-path's four
# designed test paths with LHMM(3, 3), each without a constraint and with --require walk, in
# interleaved rounds, and prints each figure beside its limit (PASS / FAIL):
#   - with --require walk: no run frame played, no update on a frame the constraint rejects;
#   - the average distance to the path (Lee, Kwon & Lee 2023 Sec. VIII-F) at most 0.15 m;
#   - the median time of an LHMM(3, 3) call with the constraint at most 1.3x the one without
#     (median over the rounds of the per-round ratio).
# Exit status 1 when a check fails.
#
# Usage: scripts/path-constraint-checks.sh TOOLS_DIR DATA_DIR [--rounds N]
#   TOOLS_DIR  folder holding lmm-import and lmm-path (e.g. build/release/tools)
#   DATA_DIR   the shared data folder holding bandai-loco/
#   --rounds   interleaved rounds per path (default 3)
# Working files go to a temporary folder, removed at exit.
set -euo pipefail

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
tools="$(cd "$1" && pwd)"; data="$(cd "$2" && pwd)"; shift 2
rounds=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "path-constraint-checks.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/limits.sh"  # check NAME VALUE OP LIMIT, import_normal
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
import_normal path-constraint-checks.sh "$tools" "$data" "$work" lmm-path

for path in circle-accelerating sharp-corners s-curve hand-drawn; do
  echo "== $path ($rounds rounds, free and --require walk in turn)"
  for round in $(seq "$rounds"); do
    "$tools/lmm-path" --db "$work/db.mmdb" --test-path "$path" --json "$work/free$round.json" > /dev/null
    "$tools/lmm-path" --db "$work/db.mmdb" --test-path "$path" --require walk --json "$work/walk$round.json" > /dev/null
  done
  figures="$(python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
load = lambda name, r: json.load(open(f"{work}/{name}{r}.json"))
walk = [load("walk", r) for r in range(1, rounds + 1)]
free = [load("free", r) for r in range(1, rounds + 1)]
w = walk[0]
ratio = statistics.median(a["ms_per_lhmm"] / b["ms_per_lhmm"] for a, b in zip(walk, free))
print(round(w["tag_seconds"]["run"], 3), w["constraint_violations"], round(w["avg_distance_m"], 4),
      round(free[0]["avg_distance_m"], 4), round(ratio, 2), int(w["completed"]),
      round(statistics.median(a["ms_per_lhmm"] for a in walk), 3), round(statistics.median(b["ms_per_lhmm"] for b in free), 3))
PY
)"
  read -r run violations distance free_distance ratio completed walk_ms free_ms <<< "$figures"
  check "seconds on run frames with --require walk" "$run" "==" 0
  check "updates on frames the constraint rejects" "$violations" "==" 0
  check "completed with --require walk" "$completed" "==" 1
  check "average distance to the path with --require walk (m)" "$distance" "<=" 0.15
  echo "    without the constraint: $free_distance m; ms per LHMM(3, 3) call: $walk_ms with, $free_ms without"
  check "LHMM(3, 3) call with / without the constraint" "$ratio" "<=" 1.3
done
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
