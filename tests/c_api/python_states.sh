#!/usr/bin/env bash
# ctest c_api.python_states: lmm_c_states (tests/c_api/states.cpp) writes the annotated synthetic
# walks and the four-state controller config and prints the C++ runtime's root path of the
# scripted run; tests/c_api/states.py replays the run through python/lmmkit.py and compares.
#   python_states.sh LMM_C_STATES LIBRARY LMMKIT_PY STATES_PY
set -uo pipefail
[[ $# -eq 4 ]] || { echo "usage: $0 LMM_C_STATES LIBRARY LMMKIT_PY STATES_PY" >&2; exit 2; }
states="$1" library="$2" lmmkit_py="$3" states_py="$4"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$states" "$work" >"$work/path.txt" || { echo "FAIL: lmm_c_states" >&2; exit 1; }
python=/usr/bin/python3  # Debian's, where python3-numpy is installed
[[ -x "$python" ]] || python=python3
"$python" "$states_py" "$lmmkit_py" "$library" "$work"
