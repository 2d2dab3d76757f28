"""Python misuse of python/lmmkit.py and of the C API under it (ctest c_api.python_misuse, also
under ASan/UBSan): every case must raise LmmError with a message (or, for the raw C calls, fail
with lmm_last_error()) instead of reading past a buffer, truncating an integer or touching a
released handle (issue 40, item 4), or letting C read a str only up to a NUL, a number of the wrong
type reach ctypes or None pass as NULL where C refuses it. The quaternion helpers must compose turns
as the library does.

    misuse.py LMMKIT_PY LIBRARY DATABASE.mmdb MODEL.lmmw
"""
import importlib.util
import math
import sys

import numpy as np


def load_lmmkit(path):
    spec = importlib.util.spec_from_file_location("lmmkit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Cases:
    """Counts the cases and collects the ones that did not fail as they should."""

    def __init__(self, lmmkit):
        self.lmmkit, self.count, self.problems = lmmkit, 0, []

    def refused(self, name, call, expected):
        """`call()` must raise LmmError whose message contains `expected`."""
        self.count += 1
        try:
            call()
        except self.lmmkit.LmmError as error:
            if expected not in str(error):
                self.problems.append("%s: message %r lacks %r" % (name, str(error), expected))
            return
        except Exception as error:  # any other exception is a defect too
            self.problems.append("%s: %s instead of LmmError" % (name, type(error).__name__))
            return
        self.problems.append("%s: accepted" % name)

    def computes(self, name, call, expected):
        """`call()` must return `expected` (numbers, to float32 precision)."""
        self.count += 1
        try:
            result = call()
        except Exception as error:
            self.problems.append("%s: %s: %s" % (name, type(error).__name__, error))
            return
        if np.shape(result) != np.shape(expected) or not np.allclose(result, expected, atol=1e-5):
            self.problems.append("%s: %s, not %s" % (name, result, expected))

    def c_refused(self, name, result, lib, expected):
        """A raw C call's `result` must be a failure (0 / NULL) with `expected` in lmm_last_error()."""
        self.count += 1
        message = lib.c.lmm_last_error().decode()
        if result or expected not in message:
            self.problems.append("%s: result %r, last error %r" % (name, result, message))


def strings_checked(cases, lib, walker, database_path):
    """A str with a NUL (C would read up to it), text UTF-8 cannot encode and None where C refuses NULL."""
    nul, surrogate = "with a NUL", "with a lone surrogate"
    cases.refused("set_constraint('walk\\0nosuch') " + nul, lambda: walker.set_constraint(require="walk\0nosuch"),
                  "set_constraint: require holds a NUL character")
    cases.refused("set_constraint(exclude=[... '\\0' ...]) " + nul,
                  lambda: walker.set_constraint(exclude=["left\0", "right"]), "set_constraint: exclude holds a NUL")
    cases.refused("set_states " + nul, lambda: walker.set_states("\0[states.a]\nidle = yes\n"),
                  "set_states: controller_config holds a NUL character")
    cases.refused("set_state " + nul, lambda: walker.set_state("a\0b"), "set_state: name holds a NUL character")
    cases.refused("play_action " + nul, lambda: walker.play_action("walk\0x"), "play_action: tags holds a NUL")
    cases.refused("joint_index " + nul, lambda: walker.joint_index("Hips\0x"), "joint_index: name holds a NUL")
    cases.refused("load_database " + nul, lambda: lib.load_database(database_path + "\0x"),
                  "load_database: path holds a NUL character")
    cases.refused("set_constraint " + surrogate, lambda: walker.set_constraint(require="\udcff"),
                  "set_constraint: require cannot be encoded as UTF-8")
    cases.refused("set_state " + surrogate, lambda: walker.set_state("\udcff"), "set_state: name cannot be encoded")
    cases.refused("load_model " + surrogate, lambda: lib.load_model("\udcff.lmmw"),
                  "load_model: path cannot be encoded")
    cases.refused("set_states(None) (C refuses NULL)", lambda: walker.set_states(None),
                  "set_states: controller_config must be a str, not NoneType")
    cases.refused("set_state(None)", lambda: walker.set_state(None), "set_state: name must be a str")
    cases.refused("play_action(None)", lambda: walker.play_action(None), "play_action: tags must be a str")
    cases.refused("joint_index(None)", lambda: walker.joint_index(None), "joint_index: name must be a str")
    cases.refused("load_database(None)", lambda: lib.load_database(None), "load_database: path must be a str")
    cases.refused("load_model(3)", lambda: lib.load_model(3), "load_model: path must be a str")


def numbers_checked(cases, lmmkit, lib, walker, crowd, model, database):
    """A str, bool or None where a number is expected and a flag that is not a bool (or 0 / 1)."""
    pad = lmmkit.Gamepad(left_y=1.0)
    cases.refused("set_foot_lock(True, '0.3')", lambda: walker.set_foot_lock(True, "0.3"),
                  "set_foot_lock: unlock_distance must be a number, not '0.3'")
    cases.refused("set_foot_lock(True, 0.3, None)", lambda: walker.set_foot_lock(True, 0.3, None),
                  "set_foot_lock: blend_halflife must be a number")
    cases.refused("set_foot_lock('no')", lambda: walker.set_foot_lock("no"),
                  "set_foot_lock: on must be a bool, not 'no'")
    cases.refused("set_foot_lock(2)", lambda: walker.set_foot_lock(2), "set_foot_lock: on must be a bool, not 2")
    cases.refused("update(pad, '1/60')", lambda: walker.update(pad, "1/60"), "update: dt must be a number")
    cases.refused("update(pad, True)", lambda: walker.update(pad, True), "update: dt must be a number, not True")
    cases.refused("reset(x='1')", lambda: walker.reset(x="1"), "reset: x must be a number")
    cases.refused("teleport(0, None, 0)", lambda: walker.teleport(0, None, 0), "teleport: z must be a number")
    cases.refused("teleport(0, 0, 10**400)", lambda: walker.teleport(0, 0, 10**400), "teleport: heading is too large")
    cases.refused("learned_character(heading='north')", lambda: lib.learned_character(model, heading="north"),
                  "learned_character: heading must be a number")
    cases.refused("database_character(x=[1])", lambda: lib.database_character(database, x=[1]),
                  "database_character: x must be a number")
    cases.refused("path_character(speed_scale='fast')",
                  lambda: lib.path_character(database, [(0, 0, 0), (1, 0, 1)], speed_scale="fast"),
                  "path_character: speed_scale must be a number")
    cases.refused("path_character of strs", lambda: lib.path_character(database, [("0", "0", "0"), ("1", "0", "1")]),
                  "path_character: samples_txz (t, x, z) must hold numbers")
    cases.refused("play_action_frames(in_place='no')", lambda: walker.play_action_frames(0, 1, in_place="no"),
                  "play_action_frames: in_place must be a bool")
    cases.refused("play_action(interruptible=None)", lambda: walker.play_action("x", interruptible=None),
                  "play_action: interruptible must be a bool")
    cases.refused("set_root of strs", lambda: walker.set_root(["a", "b", "c"], [0, 0, 0, 1]),
                  "set_root: position must hold numbers")
    cases.refused("crowd.update('0.016')", lambda: crowd.update("0.016"), "update: dt must be a number")
    cases.refused("crowd.update(budget_seconds='1ms')", lambda: crowd.update(1 / 60, budget_seconds="1ms"),
                  "update: budget_seconds must be a number")


def quaternions_checked(cases, lmmkit, character):
    """quat_multiply and quat_rotate against known rotations and against the library's own root turn."""
    s, c = math.sin(math.pi / 8), math.cos(math.pi / 8)
    half = math.sqrt(0.5)
    cases.computes("two 45-degree turns about +Y", lambda: lmmkit.quat_multiply((0, s, 0, c), (0, s, 0, c)),
                   [0, half, 0, half])
    cases.computes("+Z turned 90 degrees about +Y", lambda: lmmkit.quat_rotate((0, half, 0, half), (0, 0, 1)),
                   [1, 0, 0])
    cases.computes("x then y about +X, +Y, batched",
                   lambda: lmmkit.quat_rotate(lmmkit.quat_multiply((0, half, 0, half), [(half, 0, 0, half)] * 2),
                                              [(0, 1, 0), (0, 0, 1)]),
                   [[1, 0, 0], [0, -1, 0]])  # +Y to +Z to +X; +Z to -Y, which stays
    cases.refused("quat_rotate of a 2-vector", lambda: lmmkit.quat_rotate((0, 0, 0, 1), (1, 2)),
                  "quat_rotate: v must hold vectors of 3 numbers")
    cases.refused("quat_multiply of strs", lambda: lmmkit.quat_multiply("wxyz", (0, 0, 0, 1)),
                  "quat_multiply: a must hold numbers")
    for _ in range(30):  # turning right
        before = character.root_rotation()
        character.update(lmmkit.Gamepad(left_x=1.0), 1 / 60)
    turn, after = character.root_motion()[1], character.root_rotation()
    cases.computes("root_motion's turn composed onto the facing before (after = turn * before)",
                   lambda: lmmkit.quat_multiply(turn, before), after)


def main():
    lmmkit_py, library, database_path, model_path = sys.argv[1:5]
    lmmkit = load_lmmkit(lmmkit_py)
    lib = lmmkit.Library(library)
    cases = Cases(lmmkit)
    database, model = lib.load_database(database_path), lib.load_model(model_path)
    character = lib.learned_character(model)
    walker = lib.database_character(database)
    crowd = lib.learned_crowd(model, 3, workers=2)
    member = crowd.character(1)

    cases.refused("set_root with 2 numbers", lambda: character.set_root([0.0, 0.0], [0, 0, 0, 1]), "3 numbers")
    cases.refused("set_root with 3 rotation numbers", lambda: character.set_root([0, 0, 0], [0, 0, 1]), "4 numbers")
    cases.refused("learned_character(database)", lambda: lib.learned_character(database), "expected a model")
    cases.refused("database_crowd(character, 2)", lambda: lib.database_crowd(character, 2), "expected a database")
    cases.refused("joint_name(2**32 + 1)", lambda: character.joint_name(2**32 + 1), "outside")
    cases.refused("joint_name(-1)", lambda: character.joint_name(-1), "joint -1 is outside")
    cases.refused("crowd.character(2**70)", lambda: crowd.character(2**70), "outside 0..2")
    cases.refused("crowd.update(begin=-1)", lambda: crowd.update(1 / 60, begin=-1), "begin = -1")
    cases.refused("crowd.update(end=4)", lambda: crowd.update(1 / 60, end=4), "end = 4")
    cases.refused("crowd.set_priorities of 2", lambda: crowd.set_priorities([1, 2]), "3 numbers")
    cases.refused("update with a dict", lambda: walker.update({"left_y": 1}, 1 / 60), "expected a Gamepad")
    cases.refused("teleport to NaN", lambda: walker.teleport(math.nan, 0.0, 0.0), "x is NaN")
    cases.refused("set_foot_lock with a NaN distance", lambda: walker.set_foot_lock(True, math.nan),
                  "unlock_distance and blend_halflife must be finite")
    cases.refused("set_foot_lock with a negative halflife", lambda: walker.set_foot_lock(True, 0.0, -1.0),
                  "unlock_distance and blend_halflife must be finite")
    cases.refused("learned character at inf", lambda: lib.learned_character(model, heading=math.inf), "heading")
    cases.refused("path of pairs", lambda: lib.path_character(database, [(0, 0), (1, 1)]),
                  "samples_txz (t, x, z) must hold rows of 3 numbers")

    # Gameplay control: learned characters, unknown tags and states, bad config text, wrong types.
    cases.refused("set_constraint on a learned character without tags", lambda: character.set_constraint(require="walk"),
                  "unknown tag 'walk' in 'walk' (the model has no tags)")
    cases.refused("play_action_frames on a learned character", lambda: character.play_action_frames(0, 1),
                  "lmm_character_play_action_frames is for database characters; this is a learned character")
    cases.refused("set_constraint with an unknown tag", lambda: walker.set_constraint(exclude=["armed"]),
                  "unknown tag 'armed'")
    cases.refused("set_constraint with a number", lambda: walker.set_constraint(require=3), "require must be a str")
    cases.refused("play_action of an unknown tag", lambda: walker.play_action("flying"), "unknown tag 'flying'")
    cases.refused("play_action_frames(2**40, 1)", lambda: walker.play_action_frames(2**40, 1), "first = ")
    cases.refused("play_action_frames across clips", lambda: walker.play_action_frames(0, 10**8),
                  "are not a run of one clip")
    cases.refused("set_states with bad text", lambda: walker.set_states("[states.a]\nidle = yes\n"),
                  "controller config: 2: [states.a]: 'idle' must be true or false")
    cases.refused("set_states naming an unknown tag", lambda: walker.set_states("[states.a]\nrequire = [\"x\"]\n"),
                  "state 'a': unknown tag 'x'")
    cases.refused("set_state of an unknown state", lambda: walker.set_state("armed"), "no state named 'armed'")
    cases.c_refused("C: set_state(NULL)", lib.c.lmm_character_set_state(walker._handle, None), lib, "name is NULL")
    walker.set_constraint(require=None, exclude=[])  # None and no names: no constraint (C takes NULL here)

    strings_checked(cases, lib, walker, database_path)
    numbers_checked(cases, lmmkit, lib, walker, crowd, model, database)
    quaternions_checked(cases, lmmkit, character)

    # The C checks under the Python ones: handles of the wrong kind, released handles.
    c = lib.c
    cases.c_refused("C: a database as a model",
                    c.lmm_character_create_learned(database._handle, 0.0, 0.0, 0.0), lib, "is a database handle")
    cases.c_refused("C: a character as a crowd", c.lmm_crowd_update(character._handle, 0, 1, 0.01, 0, 0.0), lib,
                    "is a character handle")
    spare = c.lmm_character_create_database(database._handle, 0.0, 0.0, 0.0)
    c.lmm_character_release(spare)
    c.lmm_character_release(spare)  # double release: refused with a message, nothing freed twice
    cases.c_refused("C: double release", 0, lib, "not a live character handle")
    cases.c_refused("C: update after release", c.lmm_character_update(spare, None, 0.01), lib, "not a live")

    crowd.close()
    cases.refused("crowd member after crowd.close()", lambda: member.root_position(), "crowd was closed")
    cases.refused("crowd after close()", lambda: crowd.update(1 / 60), "crowd was closed")
    cases.c_refused("C: crowd member after its crowd", c.lmm_character_joint_count(member._handle), lib,
                    "released with its crowd")
    database.close()
    cases.refused("database after close()", lambda: lib.database_character(database), "database was closed")
    cases.refused("character after close()", lambda: (walker.close(), walker.update(lmmkit.Gamepad(), 0.1)),
                  "character was closed")
    character.update(lmmkit.Gamepad(left_y=1.0), 1 / 60)  # what stays open still works

    if cases.problems:
        sys.exit("misuse.py: %d of %d cases failed:\n  %s" % (len(cases.problems), cases.count,
                                                              "\n  ".join(cases.problems)))
    print("misuse.py: %d cases passed (misuse refused with a message, quaternions composed)" % cases.count)


if __name__ == "__main__":
    main()
