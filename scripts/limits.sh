# Sourced by the check scripts (gameplay-checks.sh, learned-gameplay-checks.sh, gltf-round-trip.sh,
# foreign-files.sh, path-constraint-checks.sh, foot-lock-report.sh): `check NAME VALUE OP LIMIT` prints a figure
# beside its limit as PASS or FAIL and counts the failures in $failures;
# `gameplay_bvh_folder SCRIPT TOOLS DATA WORK TOOL...` checks the tools and data and links
# bandai-loco/normal + bandai-actions into WORK/bvh; `import_normal SCRIPT TOOLS DATA WORK TOOL...`
# checks the tools and data and imports bandai-loco/normal into WORK/db.mmdb;
# `model_and_seconds SCRIPT ARGS...` reads
# --model BUNDLE and --seconds S into $model (absolute) and $seconds (kept when not given);
# `median_import LMM_IMPORT INPUT OUT` imports INPUT into OUT three times and prints the median
# wall time (s).
failures=0
gameplay_bvh_folder() {
  local script="$1" tools="$2" data="$3" work="$4" tool
  shift 4
  for tool in "$@"; do
    [[ -x "$tools/$tool" ]] || { echo "$script: $tools/$tool is missing" >&2; exit 2; }
  done
  [[ -d "$data/bandai-loco/normal" && -d "$data/bandai-actions" ]] || {
    echo "$script: $data lacks bandai-loco/normal or bandai-actions" >&2; exit 2; }
  mkdir -p "$work/bvh"
  ln -s "$data"/bandai-loco/normal/*.bvh "$data"/bandai-actions/*.bvh "$work/bvh/"
}
check() {
  if python3 -c "import sys; v=float('$2'); sys.exit(0 if v $3 $4 else 1)" 2>/dev/null; then
    printf '  PASS  %-58s %12s  (%s %s)\n' "$1" "$2" "$3" "$4"
  else
    printf '  FAIL  %-58s %12s  (%s %s)\n' "$1" "$2" "$3" "$4"; failures=$((failures + 1))
  fi
}
model_and_seconds() {
  local script="$1"
  shift
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --model) model="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
      --seconds) seconds="$2"; shift 2 ;;
      *) echo "$script: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
  done
}
import_normal() {
  local script="$1" tools="$2" data="$3" work="$4" tool
  shift 4
  for tool in lmm-import "$@"; do
    [[ -x "$tools/$tool" ]] || { echo "$script: $tools/$tool is missing" >&2; exit 2; }
  done
  [[ -d "$data/bandai-loco/normal" ]] || { echo "$script: $data lacks bandai-loco/normal" >&2; exit 2; }
  echo "== import bandai-loco/normal"
  "$tools/lmm-import" "$data/bandai-loco/normal" -o "$work/db.mmdb" 2>&1 | grep -E "wrote" || true
}
median_import() {
  local times=() i start end
  for i in 1 2 3; do
    start=$(date +%s.%N)
    "$1" "$2" --out "$3" > "$3.log" 2>&1 || { cat "$3.log" >&2; exit 1; }
    end=$(date +%s.%N)
    times+=("$(python3 -c "print($end - $start)")")
  done
  printf "%.2f\n" "$(printf "%s\n" "${times[@]}" | sort -g | sed -n 2p)"
}
