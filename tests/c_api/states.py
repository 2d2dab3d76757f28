"""ctest c_api.python_states: the scripted four-state run of tests/c_api/gameplay_script.hpp through
python/lmmkit.py (ctypes over liblmmkit.so) must reach the root positions the C++ runtime printed
(lmm_c_states) after every update, bit for bit, honouring each state's constraint; the events,
tags and state queries answer with names.

    states.py LMMKIT_PY LIBRARY DIR   (DIR: annotated.mmdb, states.toml and path.txt from lmm_c_states)
"""
import ctypes
import importlib.util
import sys

import numpy as np


def load_lmmkit(path):
    spec = importlib.util.spec_from_file_location("lmmkit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    lmmkit_py, library, folder = sys.argv[1:4]
    lmmkit = load_lmmkit(lmmkit_py)
    lib = lmmkit.Library(library)
    database = lib.load_database(folder + "/annotated.mmdb")
    if database.tag_names() != ["even", "odd", "early", "act", "standing"] or database.event_names() != ["step", "mark"]:
        sys.exit("states.py: tags %s, events %s" % (database.tag_names(), database.event_names()))
    character = lib.database_character(database)
    with open(folder + "/states.toml") as config:
        character.set_states(config.read())
    dt = ctypes.c_float(1.0 / 60.0).value
    with open(folder + "/path.txt") as path:
        lines = path.read().splitlines()
    problems, state, events = [], "", 0
    for u, line in enumerate(lines):
        fields = line.split()
        if fields[0] != "-":
            state = fields[0]
            character.set_state(state)
        left_x, left_y, gait, x, y, z = (np.float32(v) for v in fields[1:])
        character.update(lmmkit.Gamepad(left_x=left_x, left_y=left_y, gait=gait), dt)
        root = character.root_position()
        if not np.array_equal(root, np.array([x, y, z], dtype=np.float32)):
            problems.append("update %d: root %s, the C++ runtime's %s" % (u, root, (x, y, z)))
        if character.state() != state or not character.constraint_held():
            problems.append("update %d: state %r (set %r), tags %s outside its constraint %s" % (
                u, character.state(), state, character.tags(), character.constraint()))
        events += sum(1 for name, _, _ in character.events() if name in ("step", "mark"))
    if len(lines) != 1200 or events < 200:
        problems.append("%d updates (1200 expected), %d step / mark events" % (len(lines), events))
    if problems:
        sys.exit("states.py: %d problems:\n  %s" % (len(problems), "\n  ".join(problems[:20])))
    print("states.py: %d updates through four states: the C++ runtime's root path, bit for bit; last root %s" % (
        len(lines), character.root_position()))


if __name__ == "__main__":
    main()
