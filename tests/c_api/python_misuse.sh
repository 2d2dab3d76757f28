#!/usr/bin/env bash
# ctest c_api.python_misuse: imports bandai-loco/normal-extra, then runs tests/c_api/misuse.py
# (Python and raw C API misuse that must be refused with a message). With SANITIZED=1 the library
# was built with ASan/UBSan: Python then runs with GCC's ASan runtime preloaded, and any sanitizer
# report fails the test.
#   python_misuse.sh LMM_IMPORT LIBRARY MODEL.lmmw LMMKIT_PY MISUSE_PY SANITIZED
# Needs $LMM_DATA (or $LMM_DATA_FALLBACK): without it the test fails in CI and is skipped (exit 77)
# elsewhere.
set -uo pipefail
[[ $# -eq 6 ]] || { echo "usage: $0 LMM_IMPORT LIBRARY MODEL.lmmw LMMKIT_PY MISUSE_PY SANITIZED" >&2; exit 2; }
import="$1" library="$2" model="$3" lmmkit_py="$4" misuse_py="$5" sanitized="$6"
source "$(dirname "${BASH_SOURCE[0]}")/imported_database.sh" "$import"

python=/usr/bin/python3  # Debian's, where python3-numpy is installed
[[ -x "$python" ]] || python=python3
environment=()
if [[ "$sanitized" == 1 ]]; then
  asan="$(${CXX:-g++} -print-file-name=libasan.so)"
  [[ -f "$asan" ]] || fail "no ASan runtime at '$asan'"
  # Python's own allocations are not ours to judge: leaks off; any error report exits non-zero.
  environment=(LD_PRELOAD="$asan" ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=23"
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
fi
env "${environment[@]}" "$python" "$misuse_py" "$lmmkit_py" "$library" "$work/db.mmdb" "$model" >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
[[ $rc -eq 0 ]] || fail "misuse.py exited with $rc"
if grep -q -E "ERROR: AddressSanitizer|runtime error:" "$work/out.txt"; then fail "a sanitizer report"; fi
echo "0 sanitizer reports$([[ "$sanitized" == 1 ]] || echo " (not a sanitizer build)")"
