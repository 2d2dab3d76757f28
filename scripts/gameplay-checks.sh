#!/usr/bin/env bash
# The gameplay-control checks of issue 42 on real data, re-runnable: imports bandai-loco/normal +
# bandai-actions with configs/skeletons/bandai.toml, plus sidecar files (X.tags.toml) that give a
# seeded third of the walk files an excluded range and a no-entry range; then measures
#   - exact constrained search: lmm-bench search with --require, --exclude and random constraints
#     (mismatches against brute force, speed-up, constrained / unconstrained cost);
#   - idle: configs/inputs/idle.csv (walk, release, wait, walk again);
#   - actions: configs/inputs/actions.csv (wave, bow, kick from walking; the fastest joint against
#     the bound of an inertialized transition, see lmm-sim's actions JSON);
#   - states: configs/inputs/states.csv with configs/controllers/bandai-states.toml;
#   - actions kept out: 60 s of random input with no state plays no action's frame (issue 55);
#   - never where forbidden: 10 minutes of random input with a random constraint at every key;
#   - the cost of an update with a random constraint per key against one without (same run);
# and prints each figure beside the issue's limit (PASS / FAIL). Exit status 1 when one fails.
#
# Usage: scripts/gameplay-checks.sh TOOLS_DIR DATA_DIR [--queries N] [--seconds S]
#   TOOLS_DIR  folder holding lmm-import, lmm-sim and lmm-bench (e.g. build/release/tools)
#   DATA_DIR   the shared data folder holding bandai-loco/ and bandai-actions/
#   --queries  lmm-bench search queries per constraint (default 10000)
#   --seconds  length of the random run (default 600)
# Working files go to a temporary folder, removed at exit.
set -euo pipefail

usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
tools="$(cd "$1" && pwd)"; data="$(cd "$2" && pwd)"; shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
queries=10000
seconds=600
while [[ $# -gt 0 ]]; do
  case "$1" in
    --queries) queries="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    *) echo "gameplay-checks.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/limits.sh"  # check NAME VALUE OP LIMIT, gameplay_bvh_folder
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gameplay_bvh_folder gameplay-checks.sh "$tools" "$data" "$work" lmm-import lmm-sim lmm-bench
# Sidecars: a seeded third of the walk files get an excluded range and a no-entry range.
python3 - "$work/bvh" <<'EOF'
import pathlib, random, sys
rng = random.Random(42)
for bvh in sorted(pathlib.Path(sys.argv[1]).glob("dataset-2_walk_*.bvh")):
    frames = next(int(l.split()[1]) for l in bvh.read_text().splitlines() if l.startswith("Frames:"))
    if rng.random() > 1 / 3 or frames < 120:
        continue
    cut = rng.randrange(frames // 2, frames - 30)
    entry = rng.randrange(10, frames // 2 - 20)
    bvh.with_suffix(".tags.toml").write_text(
        f"[[range]]\nframes = [{cut}, {frames - 1}]\nexclude = true\n"
        f"[[range]]\nframes = [{entry}, {entry + 15}]\nno_entry = true\n")
EOF
echo "== import ($(ls "$work"/bvh/*.tags.toml | wc -l) sidecars)"
"$tools/lmm-import" "$work/bvh" -o "$work/db.mmdb" --json "$work/import.json" 2>&1 | grep -E "wrote|tagged|events" || true

# json FILE EXPRESSION: a value of a JSON file (d is the object).
json() { python3 -c "import json; d=json.load(open('$1')); print($2)"; }

echo "== constrained search ($queries queries each)"
for args in "--require standing" "--require run" "--require walk" "--exclude locomotion" "--require-any bow,kick" "--random-constraints"; do
  "$tools/lmm-bench" search --db "$work/db.mmdb" --queries "$queries" $args --json "$work/search.json" > "$work/search.txt" 2>&1 || true
  echo "  lmm-bench search $args: allowed $(json "$work/search.json" "round(100 * d.get('allowed_fraction', float('nan')), 1)")% of frames"
  check "  mismatches" "$(json "$work/search.json" "d['mismatches']")" "==" 0
  check "  speedup_vs_brute" "$(json "$work/search.json" "round(d['speedup_vs_brute'], 1)")" ">=" 10
  check "  constrained / unconstrained search cost" \
        "$(json "$work/search.json" "round(d['constrained_vs_unconstrained'], 2)")" "<=" 1.2
done

sim() {  # sim NAME ARGS...: lmm-sim over the database, JSON in $work/NAME.json
  local name="$1"; shift
  "$tools/lmm-sim" --db "$work/db.mmdb" "$@" --json "$work/$name.json" > "$work/$name.txt" 2>&1
}
echo "== idle (configs/inputs/idle.csv)"
sim idle --input "$root/configs/inputs/idle.csv" --seconds 30
g="d['gameplay']"
check "share of settled released-stick updates on standing frames" "$(json "$work/idle.json" "$g['idle_standing_share']")" ">=" 1.0
check "mean foot speed while standing (cm/s)" "$(json "$work/idle.json" "round($g['idle_foot_speed_cm_s'], 2)")" "<=" 2
check "mean root turn while standing (deg/s)" "$(json "$work/idle.json" "round($g['idle_root_turn_deg_s'], 2)")" "<=" 2
check "slowest return to motion after a push (s)" "$(json "$work/idle.json" "$g['resume_s_max']")" "<=" 0.3

echo "== actions (configs/inputs/actions.csv)"
sim actions --input "$root/configs/inputs/actions.csv" --seconds 35
for i in 0 1 2; do
  a="$g['actions'][$i]"
  name="$(json "$work/actions.json" "$a['tags']")"
  check "$name: played to the last frame of its run (frames short)" \
        "$(json "$work/actions.json" "$a['run_last_frame'] - $a['last_frame']")" "==" 0
  check "$name: frames in order" "$(json "$work/actions.json" "int($a['in_order'])")" "==" 1
  check "$name: action_end fired" "$(json "$work/actions.json" "int($a['ended'])")" "==" 1
  check "$name: moving again after its end (s)" "$(json "$work/actions.json" "$a['resume_s']")" "<=" 0.5
  check "$name: fastest joint entering and playing it / inertialization bound" \
        "$(json "$work/actions.json" "round($a['entered_joint_speed_m_s'] / $a['jump_bound_m_s'], 2)")" "<=" 1
  echo "    fastest joint $(json "$work/actions.json" "round($a['entered_joint_speed_m_s'], 2)") m/s; before it" \
       "$(json "$work/actions.json" "round($a['before_joint_speed_m_s'], 2)"), its own frames" \
       "$(json "$work/actions.json" "round($a['clip_joint_speed_m_s'], 2)"), pose offset" \
       "$(json "$work/actions.json" "round($a['pose_offset_m'], 2)") m, bound" \
       "$(json "$work/actions.json" "round($a['jump_bound_m_s'], 2)") m/s"
done
check "action ends" "$(json "$work/actions.json" "$g['action_ends']")" "==" 3

echo "== states (configs/inputs/states.csv, configs/controllers/bandai-states.toml)"
sim states --controller "$root/configs/controllers/bandai-states.toml" --input "$root/configs/inputs/states.csv" --seconds 32
check "constraint violations" "$(json "$work/states.json" "$g['constraint_violations']")" "==" 0
check "forbidden entries" "$(json "$work/states.json" "$g['forbidden_entries']")" "==" 0

echo "== actions stay out of the free search (60 s of random input, seed 5, no state or constraint)"
sim free_actions --random --seconds 60 --seed 5
check "seconds on action frames with no action playing, not idle" \
      "$(json "$work/free_actions.json" "round($g['free_action_seconds'], 2)")" "==" 0
echo "  seconds idle on an action clip's standing frames: $(json "$work/free_actions.json" "round($g['idle_action_seconds'], 2)")"

echo "== never where forbidden ($seconds s of random input, a random constraint per key)"
sim random --random --random-constraints --seconds "$seconds"
check "constraint violations" "$(json "$work/random.json" "$g['constraint_violations']")" "==" 0
check "forbidden entries (no-entry or constraint over the look-ahead)" \
      "$(json "$work/random.json" "$g['forbidden_entries']")" "==" 0
check "event updates not matching the markers played" "$(json "$work/random.json" "$g['event_mismatches']")" "==" 0
echo "  events $(json "$work/random.json" "$g['events_total']"), unsatisfied searches" \
     "$(json "$work/random.json" "$g['unsatisfied_searches']"), constraint searches" \
     "$(json "$work/random.json" "$g['constraint_searches']")"
echo "== update cost with and without a random constraint per key (5 interleaved pairs of 300 s of random input)"
for pair in 1 2 3 4 5; do
  sim "free$pair" --random --seconds 300
  sim "constrained$pair" --random --random-constraints --seconds 300
done
# ratio KEY: the median over the pairs of constrained / free.
ratio() {
  python3 -c "import json, statistics; r = lambda n, i: json.load(open(f'$work/{n}{i}.json'))['$1']
print(round(statistics.median(r('constrained', i) / r('free', i) for i in range(1, 6)), 2))"
}
check "mean update (searches included), constrained / free" "$(ratio us_per_update_mean)" "<=" 1.2
check "median update, constrained / free" "$(ratio us_per_update)" "<=" 1.2
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
