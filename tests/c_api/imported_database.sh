# Sourced by the C API ctest scripts: makes $work (removed on exit), defines fail, and imports
# bandai-loco/normal-extra with LMM_IMPORT ($1 of the caller, passed as the argument) into
# $work/db.mmdb. Needs $LMM_DATA (or $LMM_DATA_FALLBACK): without it the caller fails in CI and
# is skipped (exit 77) elsewhere.
data="${LMM_DATA:-${LMM_DATA_FALLBACK:-}}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if [[ -z "$data" || ! -d "$data/normal-extra" ]]; then
  [[ -n "${CI:-}" ]] && fail "LMM_DATA does not point at the bandai-loco data"
  echo "skipped: set LMM_DATA to the bandai-loco folder"
  exit 77
fi
"$1" "$data/normal-extra" --out "$work/db.mmdb" >"$work/import.log" 2>&1 || { cat "$work/import.log"; fail "lmm-import"; }
