"""Gameplay control from Python through python/lmmkit.py: gameplay.cpp in Python. A database character
walks, switches to a game state of a controller config, plays a one-shot action by its tag and reads
the events each update played; it prints when the action ended. Every failing call raises
lmmkit.LmmError saying why.

    python3 samples/gameplay.py BUILD/runtime/liblmmkit.so DATABASE.mmdb

DATABASE.mmdb: imported with tags, e.g. samples/import_database.sh --gameplay (a walk, a run and a wave
with configs/skeletons/bandai.toml). It finds lmmkit.py in ../python (from this folder).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import lmmkit  # noqa: E402  (found through the path set above)

STATES = """
[states.strolling]
require = ["walk"]
[states.hurrying]
require = ["run"]
idle = false
"""
DT = 1.0 / 60.0


def play(character, gamepad, seconds, clock):
    """Updates `character` for `seconds` with `gamepad`, printing its events; returns the action ends seen."""
    ends = 0
    for _ in range(round(seconds / DT)):
        character.update(gamepad, DT)
        clock[0] += DT
        for name, _, time in character.events():  # name None: the end of an action
            print("t %.2f s: %s" % (clock[0] - DT + time, "the action ended" if name is None else "event '%s'" % name))
            ends += name is None
    return ends


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: %s LIBLMMKIT.so DATABASE.mmdb (imported with tags)" % sys.argv[0])
    lib = lmmkit.Library(sys.argv[1])
    character = lib.database_character(lib.load_database(sys.argv[2]))
    character.set_states(STATES)  # once, at load time
    clock = [0.0]
    play(character, lmmkit.Gamepad(left_y=1.0), 2.0, clock)
    print("t %.2f s: walking on %s frames" % (clock[0], character.tags()))
    character.set_state("hurrying")
    play(character, lmmkit.Gamepad(left_y=1.0, gait=1.0), 2.0, clock)
    print("t %.2f s: in state '%s' on %s frames" % (clock[0], character.state(), character.tags()))
    character.play_action("wave", in_place=True)  # its frames hold `action`: only this call enters them
    started = clock[0]
    print("t %.2f s: playing the wave, %.2f s long" % (clock[0], character.action_seconds_left()))
    ends = 0
    while character.action_playing() and clock[0] < started + 30.0:
        ends += play(character, lmmkit.Gamepad(), DT, clock)
    if ends != 1:
        sys.exit("gameplay.py: %d end events for one action" % ends)
    ended = clock[0]
    play(character, lmmkit.Gamepad(left_y=1.0, gait=1.0), 1.0, clock)
    print("t %.2f s: in state '%s' on %s frames" % (clock[0], character.state(), character.tags()))
    print("the wave played %.2f s and ended at t %.2f s" % (ended - started, ended))


if __name__ == "__main__":
    main()
