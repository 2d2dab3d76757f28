# Sourced by the check scripts (gameplay-checks.sh, path-constraint-checks.sh): `check NAME VALUE
# OP LIMIT` prints a figure beside its limit as PASS or FAIL and counts the failures in $failures.
failures=0
check() {
  if python3 -c "import sys; v=float('$2'); sys.exit(0 if v $3 $4 else 1)" 2>/dev/null; then
    printf '  PASS  %-58s %12s  (%s %s)\n' "$1" "$2" "$3" "$4"
  else
    printf '  FAIL  %-58s %12s  (%s %s)\n' "$1" "$2" "$3" "$4"; failures=$((failures + 1))
  fi
}
