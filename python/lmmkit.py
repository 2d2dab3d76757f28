"""lmmkit from Python through the C API (lmm/lmm.h) and ctypes: load a database or a model bundle,
step characters, read their joints into numpy arrays.

    lib = lmmkit.Library("build/release/runtime/liblmmkit.so")
    model = lib.load_model("walk.lmmw")
    character = lib.learned_character(model, x=0.0, z=0.0, heading=0.0)
    character.update(lmmkit.Gamepad(left_y=1.0), 1 / 60)
    positions, rotations_xyzw = character.world_transforms()   # (joints, 3), (joints, 4)

Run as a script it repeats tests/c_api/walk.c (same input, same printed root positions), which
the ctest case c_api.walk compares with the C and C++ programs.
"""
import argparse
import ctypes
import sys

import numpy as np


class Gamepad(ctypes.Structure):
    """Gamepad input of one update (lmm_gamepad): sticks in [-1, 1], camera azimuth in radians."""
    _fields_ = [("left_x", ctypes.c_float), ("left_y", ctypes.c_float),
                ("right_x", ctypes.c_float), ("right_y", ctypes.c_float),
                ("camera_azimuth", ctypes.c_float), ("strafe", ctypes.c_int), ("gait", ctypes.c_float)]


class LmmError(RuntimeError):
    """A failed lmmkit call; the message is lmm_last_error()."""


_FLOAT_P = ctypes.POINTER(ctypes.c_float)
_SIGNATURES = {
    "lmm_version": (ctypes.c_char_p, []),
    "lmm_last_error": (ctypes.c_char_p, []),
    "lmm_database_load": (ctypes.c_void_p, [ctypes.c_char_p]),
    "lmm_database_release": (None, [ctypes.c_void_p]),
    "lmm_model_load": (ctypes.c_void_p, [ctypes.c_char_p]),
    "lmm_model_release": (None, [ctypes.c_void_p]),
    "lmm_character_create_database": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_create_learned": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_release": (None, [ctypes.c_void_p]),
    "lmm_character_update": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(Gamepad), ctypes.c_float]),
    "lmm_character_joint_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_joint_index": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "lmm_character_joint_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_character_root_position": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P]),
    "lmm_character_world_transforms": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, _FLOAT_P, ctypes.c_size_t]),
    "lmm_character_world_matrices": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, ctypes.c_size_t]),
}


def _floats(array):
    return array.ctypes.data_as(_FLOAT_P)


class _Handle:
    """An owned C handle released with `release` when the object is closed or collected."""

    def __init__(self, lib, handle, release):
        self._lib, self._handle, self._release = lib, handle, release

    def close(self):
        if self._handle:
            self._release(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class Character(_Handle):
    """One character; joints are read into numpy arrays the caller may keep."""

    def __init__(self, lib, handle):
        super().__init__(lib, handle, lib.c.lmm_character_release)
        self.joint_count = lib.c.lmm_character_joint_count(handle)

    def update(self, gamepad, dt):
        """Advances by dt seconds."""
        self._lib.check(self._lib.c.lmm_character_update(self._handle, ctypes.byref(gamepad), dt))

    def joint_index(self, name):
        """Index of the joint called `name`, or -1."""
        return self._lib.c.lmm_character_joint_index(self._handle, name.encode())

    def joint_name(self, joint):
        """Name of joint `joint`."""
        return self._lib.c.lmm_character_joint_name(self._handle, joint).decode()

    def root_position(self):
        """World position of the root, shape (3,)."""
        out = np.zeros(3, dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_root_position(self._handle, _floats(out)))
        return out

    def world_transforms(self):
        """World positions (joints, 3) and rotations as x, y, z, w quaternions (joints, 4)."""
        positions = np.zeros((self.joint_count, 3), dtype=np.float32)
        rotations = np.zeros((self.joint_count, 4), dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_world_transforms(
            self._handle, _floats(positions), _floats(rotations), self.joint_count))
        return positions, rotations

    def world_matrices(self):
        """World transforms as 4x4 matrices (joints, 4, 4), translation in [:, :3, 3]."""
        column_major = np.zeros((self.joint_count, 4, 4), dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_world_matrices(self._handle, _floats(column_major), self.joint_count))
        return column_major.transpose(0, 2, 1).copy()


class Library:
    """The lmmkit shared library (liblmmkit.so) and its asset loaders."""

    def __init__(self, path):
        self.c = ctypes.CDLL(path)
        for name, (result, arguments) in _SIGNATURES.items():
            function = getattr(self.c, name)
            function.restype, function.argtypes = result, arguments
        self.version = self.c.lmm_version().decode()

    def check(self, ok):
        """Raises LmmError with lmm_last_error() when `ok` is 0 or NULL."""
        if not ok:
            raise LmmError(self.c.lmm_last_error().decode())
        return ok

    def load_database(self, path):
        """A motion database (*.mmdb) with its search index."""
        return _Handle(self, self.check(self.c.lmm_database_load(path.encode())), self.c.lmm_database_release)

    def load_model(self, path):
        """A model bundle (*.lmmw)."""
        return _Handle(self, self.check(self.c.lmm_model_load(path.encode())), self.c.lmm_model_release)

    def database_character(self, database, x=0.0, z=0.0, heading=0.0):
        """A database motion-matching character at (x, 0, z) facing `heading` radians about +Y."""
        return Character(self, self.check(self.c.lmm_character_create_database(database._handle, x, z, heading)))

    def learned_character(self, model, x=0.0, z=0.0, heading=0.0):
        """A learned motion-matching character."""
        return Character(self, self.check(self.c.lmm_character_create_learned(model._handle, x, z, heading)))


def walk_input(frame):
    """The input of tests/c_api/walk_script.h at `frame` (1-based)."""
    if frame <= 180:
        return Gamepad(left_y=1.0)
    if frame <= 360:
        return Gamepad(left_x=1.0, gait=0.5)
    return Gamepad(left_x=-0.7, left_y=-0.7, gait=1.0)


def main():
    parser = argparse.ArgumentParser(description="Walk a database and a learned character for 10 s (as tests/c_api/walk.c).")
    parser.add_argument("library", help="liblmmkit.so")
    parser.add_argument("database", help="*.mmdb")
    parser.add_argument("model", help="*.lmmw")
    args = parser.parse_args()
    lib = Library(args.library)
    database, model = lib.load_database(args.database), lib.load_model(args.model)
    characters = {"database": lib.database_character(database, 0.0, 0.0, 0.0),
                  "learned": lib.learned_character(model, 2.0, 0.0, 0.0)}
    database.close()  # the characters keep the assets alive
    model.close()
    for frame in range(1, 601):
        for character in characters.values():
            character.update(walk_input(frame), ctypes.c_float(1.0 / 60.0).value)
        if frame % 60 == 0:
            for name, character in characters.items():
                root = character.root_position()
                print("%s frame %d root %.5f %.5f" % (name, frame, root[0], root[2]))
    for name, character in characters.items():
        positions, _ = character.world_transforms()
        matrices = character.world_matrices()
        if not np.allclose(matrices[:, :3, 3], positions, atol=1e-6):
            sys.exit("lmmkit.py: the %s character's matrices and positions disagree" % name)


if __name__ == "__main__":
    main()
