# Sourced by the check scripts (gameplay-checks.sh, learned-gameplay-checks.sh,
# path-constraint-checks.sh): `check NAME VALUE OP LIMIT` prints a figure beside its limit as PASS
# or FAIL and counts the failures in $failures; `gameplay_bvh_folder SCRIPT TOOLS DATA WORK TOOL...`
# checks the tools and data and links bandai-loco/normal + bandai-actions into WORK/bvh.
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
