"""Characters from Python through python/lmmkit.py (ctypes over liblmmkit.so, numpy arrays): walk.c
in Python. A learned character from a model bundle and, when a database is given, a database
character beside it walk forward, then to the right; every 2 s the script prints their roots and
hips. Joints come back as numpy arrays: positions (joints, 3), rotations x, y, z, w (joints, 4).

    python3 samples/walk.py BUILD/runtime/liblmmkit.so MODEL.lmmw [DATABASE.mmdb]

It finds lmmkit.py in ../python (from this folder); a copy of this script next to lmmkit.py works too.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import lmmkit  # noqa: E402  (found through the path set above)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: %s LIBLMMKIT.so MODEL.lmmw [DATABASE.mmdb]" % sys.argv[0])
    lib = lmmkit.Library(sys.argv[1])
    print("lmmkit", lib.version)
    start_x = {"learned": 0.0, "database": 2.0}  # side by side, facing +Z
    # A character keeps its asset alive: the model and database objects may go once it exists.
    characters = {"learned": lib.learned_character(lib.load_model(sys.argv[2]), x=start_x["learned"])}
    if len(sys.argv) == 4:
        characters["database"] = lib.database_character(lib.load_database(sys.argv[3]), x=start_x["database"])

    forward, right = lmmkit.Gamepad(left_y=1.0), lmmkit.Gamepad(left_x=1.0, gait=0.5)  # gait: 0 walk, 1 run
    for frame in range(1, 601):  # 10 s at 60 Hz
        for character in characters.values():
            character.update(forward if frame <= 300 else right, 1.0 / 60.0)
        if frame % 120 == 0:
            for name, character in characters.items():
                positions, rotations_xyzw = character.world_transforms()
                root, hips = positions[0], character.joint_index("Hips")  # look joints up once in a game
                line = "t %2d s: %-8s root (%6.2f, %6.2f)" % (frame // 60, name, root[0], root[2])
                print(line + (", hips %.2f m up" % positions[hips][1] if hips >= 0 else ""))
    for name, character in characters.items():
        root = character.root_position()
        moved = math.hypot(root[0] - start_x[name], root[2])
        if moved < 3.0:
            sys.exit("walk.py: the %s character ended only %.2f m from its start" % (name, moved))
    print("%d character(s) walked 10 s" % len(characters))


if __name__ == "__main__":
    try:
        main()
    except lmmkit.LmmError as error:  # a failed call: the library's message
        sys.exit("walk.py: %s" % error)
