"""Python misuse of python/lmmkit.py and of the C API under it (ctest c_api.python_misuse, also
under ASan/UBSan): every case must raise LmmError with a message (or, for the raw C calls, fail
with lmm_last_error()) instead of reading past a buffer, truncating an integer or touching a
released handle (issue 40, item 4).

    misuse.py LMMKIT_PY LIBRARY DATABASE.mmdb MODEL.lmmw
"""
import ctypes
import importlib.util
import math
import sys


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

    def c_refused(self, name, result, lib, expected):
        """A raw C call's `result` must be a failure (0 / NULL) with `expected` in lmm_last_error()."""
        self.count += 1
        message = lib.c.lmm_last_error().decode()
        if result or expected not in message:
            self.problems.append("%s: result %r, last error %r" % (name, result, message))


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
    cases.refused("path of pairs", lambda: lib.path_character(database, [(0, 0), (1, 1)]), "rows of (t, x, z)")

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
    print("misuse.py: %d misuse cases refused with a message" % cases.count)


if __name__ == "__main__":
    main()
