#!/usr/bin/env bash
# ctest c_api.walk: imports bandai-loco/normal-extra, then runs a database and a learned
# character through the script of walk_script.h (13 s: walking, teleport, a game-owned root,
# reset) through the C API (walk.c), the C++ API (walk.cpp) and, when LIBRARY is given, Python
# ctypes (python/lmmkit.py); all must print the same root positions.
#   run.sh LMM_IMPORT WALK_C WALK_CPP MODEL.lmmw LMMKIT_PY [LIBRARY]
# Needs $LMM_DATA (or $LMM_DATA_FALLBACK): without it the test fails in CI and is skipped
# (exit 77) elsewhere.
set -uo pipefail
[[ $# -ge 5 ]] || { echo "usage: $0 LMM_IMPORT WALK_C WALK_CPP MODEL.lmmw LMMKIT_PY [LIBRARY]" >&2; exit 2; }
import="$1" walk_c="$2" walk_cpp="$3" model="$4" lmmkit_py="$5" library="${6:-}"
source "$(dirname "${BASH_SOURCE[0]}")/imported_database.sh" "$import"

"$walk_c" "$work/db.mmdb" "$model" >"$work/c.txt" || fail "the C program failed"
"$walk_cpp" "$work/db.mmdb" "$model" >"$work/cpp.txt" || fail "the C++ program failed"
[[ $(wc -l <"$work/c.txt") -eq 26 ]] || fail "the C program printed $(wc -l <"$work/c.txt") lines, expected 26"
diff "$work/cpp.txt" "$work/c.txt" || fail "the C API and the C++ API disagree"
echo "C and C++ APIs agree on 26 root positions; last: $(tail -n 2 "$work/c.txt" | tr '\n' ' ')"
if [[ -n "$library" ]]; then
  # Debian's python3 (python3-numpy installs numpy there), not another python3 first on PATH.
  python=/usr/bin/python3
  [[ -x "$python" ]] || python=python3
  "$python" "$lmmkit_py" "$library" "$work/db.mmdb" "$model" >"$work/py.txt" || fail "python/lmmkit.py failed"
  diff "$work/cpp.txt" "$work/py.txt" || fail "Python (ctypes) and the C++ API disagree"
  echo "Python (ctypes) agrees too"
fi
