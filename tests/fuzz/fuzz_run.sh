#!/usr/bin/env bash
# Runs one libFuzzer target (used by ctest and scripts/fuzz.sh).
#   fuzz_run.sh replay EXE DIR
#       runs EXE once on every file in DIR (the committed regression inputs); fails on any crash.
#   fuzz_run.sh fuzz EXE SEEDS WORK [SECONDS]
#       fuzzes EXE for SECONDS (default $LMM_FUZZ_SECONDS, else 30) starting from the files in
#       SEEDS; new inputs go to WORK/corpus/NAME, a crashing input to WORK/artifacts/NAME/, the
#       log to WORK/logs/NAME.log. -max_len is the largest seed's size (at least 4096),
#       -timeout=10 s, -rss_limit_mb=2048, leak detection on. Prints one line per run:
#       "NAME: runs N, cov C, ft F, corpus K, crashes X, leaks L, timeouts T, ooms O, S s" and
#       exits non-zero if anything was found.
set -euo pipefail

sanitizer_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
               UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
common_flags=(-timeout=10 -rss_limit_mb=2048 -detect_leaks=1)

replay() {
  local exe="$1" dir="$2"
  local files=()
  mapfile -t files < <(find "$dir" -type f | sort)
  if [[ ${#files[@]} -eq 0 ]]; then
    echo "fuzz_run: no inputs in $dir" >&2
    return 1
  fi
  env "${sanitizer_env[@]}" "$exe" "${common_flags[@]}" "${files[@]}"
  echo "$(basename "$exe"): replayed ${#files[@]} input(s) from $dir without a finding"
}

# The value of the last "KEY: VALUE" pair (KEY e.g. "cov") on libFuzzer's status lines in log $1.
last_stat() {
  grep -E "^#[0-9]+" "$1" | grep -oE "$2: [0-9]+" | tail -n 1 | awk '{print $2}' || true
}

fuzz() {
  local exe="$1" seeds="$2" work="$3" seconds="${4:-${LMM_FUZZ_SECONDS:-30}}"
  local name corpus artifacts log
  name="$(basename "$exe")"
  corpus="$work/corpus/$name"
  artifacts="$work/artifacts/$name"
  log="$work/logs/$name.log"
  mkdir -p "$seeds" "$corpus" "$artifacts" "$work/logs"
  local max_len
  max_len="$(find "$seeds" -type f -printf '%s\n' | sort -n | tail -n 1)"
  [[ -n "$max_len" && "$max_len" -ge 4096 ]] || max_len=4096
  local rc=0 start=$SECONDS
  env "${sanitizer_env[@]}" "$exe" "${common_flags[@]}" -max_total_time="$seconds" -max_len="$max_len" \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
  local runs crashes=0 leaks=0 timeouts=0 ooms=0
  runs="$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}' | tail -n 1 || true)"
  [[ -n "$runs" ]] || runs="$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)"
  # Only the target's own exit counts: fuzz_fbx's child processes (assimp) may log reports and die.
  if [[ $rc -eq 0 ]]; then :
  elif grep -q "ERROR: libFuzzer: timeout" "$log"; then timeouts=1
  elif grep -q "ERROR: LeakSanitizer" "$log"; then leaks=1
  elif grep -qE "ERROR: libFuzzer: out-of-memory|ERROR: libFuzzer: malloc" "$log"; then ooms=1
  else crashes=1
  fi
  echo "$name: runs ${runs:-0}, cov $(last_stat "$log" cov), ft $(last_stat "$log" ft)," \
       "corpus $(last_stat "$log" corp), crashes $crashes, leaks $leaks, timeouts $timeouts, ooms $ooms," \
       "$((SECONDS - start)) s"
  if [[ $rc -ne 0 ]]; then
    echo "--- $log (last 60 lines):"
    tail -n 60 "$log"
    grep -E "^artifact_prefix=|Test unit written to" "$log" || true
    return 1
  fi
}

case "${1:-}" in
  replay) [[ $# -eq 3 ]] || { echo "usage: fuzz_run.sh replay EXE DIR" >&2; exit 2; }
          replay "$2" "$3" ;;
  fuzz) [[ $# -eq 4 || $# -eq 5 ]] || { echo "usage: fuzz_run.sh fuzz EXE SEEDS WORK [SECONDS]" >&2; exit 2; }
        fuzz "$2" "$3" "$4" "${5:-}" ;;
  *) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
