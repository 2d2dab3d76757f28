#!/usr/bin/env bash
# Foot sliding with and without foot locking for the three character kinds (issue 44, item 4),
# re-runnable: imports bandai-loco/normal with configs/skeletons/bandai.toml, then runs
#   - the database character: lmm-sim --db, 120 s of seeded random input;
#   - the learned character: lmm-sim --model BUNDLE, the same input;
#   - the path character: lmm-path --db on the four designed test paths (LHMM(3, 3));
# each without and with --foot-lock, and prints the feet's sliding in contact (cm/s, the tools'
# foot_slide_cm_per_s) beside the limit for the locked runs (PASS / FAIL: at most 10 cm/s), and
# for knee pops the locked runs' IK error (foot_ik_error_max_cm / _mean_cm: how far the legs fell
# short of the locked feet) and fastest leg joint against the free run's (leg_joint_speed_max_m_s;
# PASS / FAIL: at most 1.25x, the lock changes only the legs of the same motion).
# Exit status 1 when a check fails.
#
# Usage: scripts/foot-lock-report.sh TOOLS_DIR DATA_DIR --model BUNDLE [--seconds S]
#   TOOLS_DIR  folder holding lmm-import, lmm-sim and lmm-path (e.g. build/release-tools/tools)
#   DATA_DIR   the shared data folder holding bandai-loco/
#   --model    a learned bundle of the same skeleton (e.g. the quickstart's build/quickstart/model.lmmw)
#   --seconds  length of the random runs (default 120)
# Working files go to a temporary folder, removed at exit.
set -euo pipefail

usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
tools="$(cd "$1" && pwd)"; data="$(cd "$2" && pwd)"; shift 2
source "$(dirname "${BASH_SOURCE[0]}")/limits.sh"  # check, model_and_seconds
model=""
seconds=120
model_and_seconds foot-lock-report.sh "$@"
[[ -f "$model" ]] || { echo "foot-lock-report.sh: --model BUNDLE is required (a learned bundle)" >&2; usage >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
import_normal foot-lock-report.sh "$tools" "$data" "$work" lmm-sim lmm-path

# value FILE KEY: a number of a JSON file, two decimals.
value() { python3 -c "import json; print(round(json.load(open('$1'))['$2'], 2))"; }
slide() { value "$1" foot_slide_cm_per_s; }
# knees RUN NAME: the knee-pop figures of RUN (a JSON file stem, locked and free).
knees() {
  echo "    IK error $(value "$work/$1-locked.json" foot_ik_error_max_cm) cm at most," \
       "$(value "$work/$1-locked.json" foot_ik_error_mean_cm) cm mean; fastest leg joint" \
       "$(value "$work/$1-locked.json" leg_joint_speed_max_m_s) m/s locked, $(value "$work/$1-free.json" leg_joint_speed_max_m_s) free"
  check "$2, fastest leg joint locked / free" "$(python3 -c "import json; v = lambda f: json.load(open(f))['leg_joint_speed_max_m_s']; print(round(v('$work/$1-locked.json') / v('$work/$1-free.json'), 3))")" "<=" 1.25
}

for lock in free locked; do
  flag=()
  [[ $lock == locked ]] && flag=(--foot-lock)
  "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds "$seconds" "${flag[@]}" --json "$work/db-$lock.json" >/dev/null 2>&1
  "$tools/lmm-sim" --model "$model" --random --seconds "$seconds" "${flag[@]}" --json "$work/learned-$lock.json" >/dev/null 2>&1
  for path in circle-accelerating sharp-corners s-curve hand-drawn; do
    "$tools/lmm-path" --db "$work/db.mmdb" --test-path "$path" "${flag[@]}" --json "$work/path-$path-$lock.json" >/dev/null 2>&1
  done
done

echo "== foot sliding in contact (cm/s), $seconds s of random input and the four test paths"
for kind in db learned; do
  echo "  $kind character: $(slide "$work/$kind-free.json") without the lock"
  check "$kind character, locked (cm/s)" "$(slide "$work/$kind-locked.json")" "<=" 10
  knees "$kind" "$kind character"
done
for path in circle-accelerating sharp-corners s-curve hand-drawn; do
  echo "  path character, $path: $(slide "$work/path-$path-free.json") without the lock"
  check "path character, $path, locked (cm/s)" "$(slide "$work/path-$path-locked.json")" "<=" 10
  knees "path-$path" "path character, $path"
done
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
