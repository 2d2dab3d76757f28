"""lmmkit from Python through the C API (lmm/lmm.h) and ctypes: load a database or a model bundle,
step characters, read their joints into numpy arrays.

    lib = lmmkit.Library("build/release/runtime/liblmmkit.so")
    model = lib.load_model("walk.lmmw")
    character = lib.learned_character(model, x=0.0, z=0.0, heading=0.0)
    character.update(lmmkit.Gamepad(left_y=1.0), 1 / 60)
    positions, rotations_xyzw = character.world_transforms()   # (joints, 3), (joints, 4)
    character.teleport(x=5.0, z=-3.0, heading=1.0)
    character.set_root_owner(lmmkit.ROOT_GAME)                # the game moves the root:
    character.update(lmmkit.Gamepad(left_y=1.0), 1 / 60)
    translation, turn_xyzw = character.root_motion()           # ... by this much,
    capsule_position = capsule_position + translation          # the game moves its capsule (world)
    capsule_rotation = lmmkit.quat_multiply(turn_xyzw, capsule_rotation)  # and turns it: turn * before
    character.set_root(capsule_position, capsule_rotation)     # ... and says where it went
    forward = lmmkit.quat_rotate(capsule_rotation, (0, 0, 1))  # quaternions are x, y, z, w
    crowd = lib.learned_crowd(model, 1024, workers=2)           # many characters, batched networks
    crowd.set_input(0, lmmkit.Gamepad(left_y=1.0))
    crowd.update(1 / 60)                                       # or ranges: begin, end, worker
    walker = lib.path_character(database, [(0, 0, 0), (4, 0, 5)])  # (t, x, z): LHMM(3, 3) follows it
    walker.update(None, 1 / 60); walker.path_progress()        # desired point, points, completed
    times, positions, facings = character.played_trajectory()  # what the played animation predicts
    hero = lib.database_character(database)                    # gameplay control (database characters):
    hero.set_constraint(require="walk", exclude=["left"])      # tag names; hero.tags() after an update
    hero.events()                                              # [(name, frame, seconds into the update)]
    hero.play_action("wave"); hero.set_states(config_text); hero.set_state("armed")

Arguments are checked before C sees them: a str holding a NUL character or text UTF-8 cannot encode,
a number, flag or vector of the wrong type, or None where C refuses NULL raise LmmError naming the
argument (a bool is a flag, not a number or an integer).

Run as a script it repeats tests/c_api/walk.c (same script, same printed root positions), which
the ctest case c_api.walk compares with the C and C++ programs, checks that a crowd's character
0 follows the script's first 2 s with the same pose, bit for bit, and that a path character walks a
straight path to its end near the path, with the panel queries (trajectories, contacts, counters,
clip, decoder experts) answering.
"""
import argparse
import ctypes
import os
import sys

import numpy as np


class Gamepad(ctypes.Structure):
    """Gamepad input of one update (lmm_gamepad): sticks in [-1, 1], camera azimuth in radians."""
    _fields_ = [("left_x", ctypes.c_float), ("left_y", ctypes.c_float),
                ("right_x", ctypes.c_float), ("right_y", ctypes.c_float),
                ("camera_azimuth", ctypes.c_float), ("strafe", ctypes.c_int), ("gait", ctypes.c_float)]


class LmmError(RuntimeError):
    """A failed lmmkit call; the message is lmm_last_error()."""


ROOT_LIBRARY, ROOT_GAME = 0, 1  # lmm_root_owner: who moves the root between updates

_FLOAT_P = ctypes.POINTER(ctypes.c_float)
_INT_P = ctypes.POINTER(ctypes.c_int)
LMM_PATH_LOCAL, LMM_PATH_GLOBAL = 0, 1  # lmm_path_mode: a path moved to the character or kept where drawn


class Counters(ctypes.Structure):
    """A character's counters (lmm_counters) since its creation or reset."""
    _fields_ = [("updates", ctypes.c_int), ("searches", ctypes.c_int), ("transitions", ctypes.c_int),
                ("constraint_searches", ctypes.c_int), ("unsatisfied_searches", ctypes.c_int)]


class _Event(ctypes.Structure):
    """An event marker an update played (lmm_event)."""
    _fields_ = [("name", ctypes.c_int), ("frame", ctypes.c_int), ("time", ctypes.c_float)]


ACTION_END_EVENT = -1  # LMM_ACTION_END_EVENT: Character.events() names it None
_U64_P = ctypes.POINTER(ctypes.c_uint64)


_SIGNATURES = {
    "lmm_version": (ctypes.c_char_p, []),
    "lmm_last_error": (ctypes.c_char_p, []),
    "lmm_database_load": (ctypes.c_void_p, [ctypes.c_char_p]),
    "lmm_database_release": (None, [ctypes.c_void_p]),
    "lmm_database_tag_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_database_tag_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_database_event_name_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_database_event_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_model_tag_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_model_tag_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_model_action_tags": (ctypes.c_int, [ctypes.c_void_p, _U64_P, _U64_P]),
    "lmm_model_event_name_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_model_event_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_model_load": (ctypes.c_void_p, [ctypes.c_char_p]),
    "lmm_model_release": (None, [ctypes.c_void_p]),
    "lmm_character_create_database": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_create_learned": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_create_path": (ctypes.c_void_p, [ctypes.c_void_p, _FLOAT_P, ctypes.c_size_t, ctypes.c_int,
                                                    ctypes.c_float, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_path_progress": (ctypes.c_int, [ctypes.c_void_p, _INT_P, _INT_P, _INT_P]),
    "lmm_character_path_points": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, ctypes.c_size_t]),
    "lmm_character_release": (None, [ctypes.c_void_p]),
    "lmm_character_update": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(Gamepad), ctypes.c_float]),
    "lmm_character_reset": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_teleport": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
    "lmm_character_set_foot_lock": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_float]),
    "lmm_character_set_root_owner": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_character_root_motion": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, _FLOAT_P]),
    "lmm_character_set_root": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, _FLOAT_P]),
    "lmm_character_joint_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_joint_index": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "lmm_character_joint_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_character_root_position": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P]),
    "lmm_character_root_rotation": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P]),
    "lmm_character_world_transforms": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, _FLOAT_P, ctypes.c_size_t]),
    "lmm_character_world_matrices": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, ctypes.c_size_t]),
    "lmm_character_trajectory_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_trajectory": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, _FLOAT_P, _FLOAT_P, ctypes.c_size_t]),
    "lmm_character_played_trajectory": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, _FLOAT_P, _FLOAT_P, ctypes.c_size_t]),
    "lmm_character_contact_count": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_contact": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, _INT_P, _INT_P]),
    "lmm_character_counters": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(Counters)]),
    "lmm_character_frame": (ctypes.c_int, [ctypes.c_void_p, _INT_P, _INT_P]),
    "lmm_character_clip_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "lmm_character_decoder_experts": (ctypes.c_int, [ctypes.c_void_p, _INT_P, _FLOAT_P, ctypes.c_int]),
    "lmm_character_set_constraint": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
    "lmm_character_constraint": (ctypes.c_int, [ctypes.c_void_p, _U64_P, _U64_P, _U64_P]),
    "lmm_character_tags": (ctypes.c_int, [ctypes.c_void_p, _U64_P]),
    "lmm_character_constraint_held": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_idle": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_events": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_Event), ctypes.c_int]),
    "lmm_character_play_action": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]),
    "lmm_character_play_action_frames": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                        ctypes.c_int]),
    "lmm_character_cancel_action": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_action_playing": (ctypes.c_int, [ctypes.c_void_p]),
    "lmm_character_action_seconds_left": (ctypes.c_float, [ctypes.c_void_p]),
    "lmm_character_set_states": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "lmm_character_set_state": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "lmm_character_state": (ctypes.c_char_p, [ctypes.c_void_p]),
    "lmm_crowd_create_database": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "lmm_crowd_create_learned": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]),
    "lmm_crowd_release": (None, [ctypes.c_void_p]),
    "lmm_crowd_size": (ctypes.c_size_t, [ctypes.c_void_p]),
    "lmm_crowd_character": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "lmm_crowd_set_input": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(Gamepad)]),
    "lmm_crowd_update": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_float,
                                        ctypes.c_int, ctypes.c_double]),
    "lmm_crowd_set_rate_divisor": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]),
    "lmm_crowd_set_priorities": (ctypes.c_int, [ctypes.c_void_p, _FLOAT_P, ctypes.c_size_t]),
    "lmm_crowd_shown_transform": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, _FLOAT_P]),
}


def _floats(array):
    return array.ctypes.data_as(_FLOAT_P)


_INT_MIN, _INT_MAX, _SIZE_MAX = -2**31, 2**31 - 1, 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1


def _integer(value, name, low, high):
    """`value` as an int in [low, high]; LmmError (before C sees a truncated value) otherwise."""
    if isinstance(value, (bool, float)) or not isinstance(value, (int, np.integer)):
        raise LmmError("%s must be an integer, not %r" % (name, value))
    if not low <= int(value) <= high:
        raise LmmError("%s = %d is outside %d..%d" % (name, value, low, high))
    return int(value)


def _number(value, name):
    """`value` (an int or float, not a bool) as a float for C; LmmError otherwise (C judges NaN and infinities)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise LmmError("%s must be a number, not %r" % (name, value))
    try:
        return float(value)
    except OverflowError:
        raise LmmError("%s is too large for a float" % name) from None


def _boolean(value, name):
    """`value` (a bool, or the integer 0 or 1) as 0 or 1 for C; LmmError otherwise."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
        return int(value)
    raise LmmError("%s must be a bool, not %r" % (name, value))


def _vectors(values, name, size, ndim=None):
    """`values` as a contiguous float32 array of vectors of `size` numbers, shape (..., size), with
    `ndim` axes when given (1: one vector, 2: rows); LmmError for another shape or what is not numbers."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as error:  # ragged lists
        raise LmmError("%s must hold numbers (%s)" % (name, error)) from None
    if array.dtype.kind not in "iuf":
        raise LmmError("%s must hold numbers, not %s" % (name, array.dtype.name))
    if array.shape[-1:] != (size,) or ndim not in (None, array.ndim):
        rows = {1: "", 2: "rows of "}.get(ndim, "vectors of ")
        raise LmmError("%s must hold %s%d numbers, not shape %s" % (name, rows, size, array.shape))
    return np.ascontiguousarray(array, dtype=np.float32)


class _Handle:
    """An owned C handle released with `release` when the object is closed or collected."""

    def __init__(self, lib, handle, release):
        self._lib, self._handle, self._release = lib, handle, release

    def _live(self):
        """The C handle; LmmError once the object (or the crowd owning it) is closed."""
        if not self._handle:
            raise LmmError("this %s was closed" % type(self).__name__.lower())
        return self._handle

    def close(self):
        if self._handle:
            self._release(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class _NamedAsset(_Handle):
    """An asset with tag and event names."""

    def _names(self, count, name):
        """The names name(handle, i) for i below count(handle)."""
        handle = self._live()
        return [self._lib.check(name(handle, i)).decode() for i in range(count(handle))]


class Database(_NamedAsset):
    """A loaded motion database (*.mmdb) with its search index."""

    def tag_names(self):
        """The frame tags, in bit order (tag i is bit 1 << i of a mask)."""
        return self._names(self._lib.c.lmm_database_tag_count, self._lib.c.lmm_database_tag_name)

    def event_names(self):
        """The distinct event names (an event's name index into this list)."""
        return self._names(self._lib.c.lmm_database_event_name_count, self._lib.c.lmm_database_event_name)


class Model(_NamedAsset):
    """A loaded model bundle (*.lmmw)."""

    def tag_names(self):
        """The tags its states carry, in bit order (none for a bundle trained without [tags])."""
        return self._names(self._lib.c.lmm_model_tag_count, self._lib.c.lmm_model_tag_name)

    def action_tags(self):
        """(actions, kept_out): the tag names play_action can play, and those free projections leave out."""
        actions, kept_out = ctypes.c_uint64(), ctypes.c_uint64()
        self._lib.check(self._lib.c.lmm_model_action_tags(self._live(), ctypes.byref(actions), ctypes.byref(kept_out)))
        names = self.tag_names()
        return ([n for bit, n in enumerate(names) if actions.value >> bit & 1],
                [n for bit, n in enumerate(names) if kept_out.value >> bit & 1])

    def event_names(self):
        """The names of a learned character's events: foot plants, then each tag's enter_ and leave_."""
        return self._names(self._lib.c.lmm_model_event_name_count, self._lib.c.lmm_model_event_name)


def _placement(function, x, z, heading):
    """(x, z, heading) given to `function` as floats for C, which refuses what is not finite; as _number."""
    names = ("x", "z", "heading")
    return tuple(_number(value, "%s: %s" % (function, name)) for name, value in zip(names, (x, z, heading)))


def _gamepad(gamepad):
    """A reference to `gamepad` for C; LmmError unless it is a Gamepad."""
    if not isinstance(gamepad, Gamepad):
        raise LmmError("expected a Gamepad, not %s" % type(gamepad).__name__)
    return ctypes.byref(gamepad)


def _asset(value, kind):
    """The live C handle of `value`, which must be a `kind` (Database or Model); LmmError otherwise."""
    if not isinstance(value, kind):
        raise LmmError("expected a %s, not %s" % (kind.__name__.lower(), type(value).__name__))
    return value._live()


def _text(value, name, optional=False):
    """`value` (a str; None for NULL where `optional`) as UTF-8 for C; LmmError for another type, a NUL
    character (C would read up to it) or text UTF-8 cannot encode."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise LmmError("%s must be a str, not %s" % (name, type(value).__name__))
    if "\0" in value:
        raise LmmError("%s holds a NUL character" % name)
    try:
        return value.encode()
    except UnicodeEncodeError as error:
        raise LmmError("%s cannot be encoded as UTF-8 (%s)" % (name, error.reason)) from None


def _path(path, name):
    """A file path (a str or an os.PathLike of one) for C, as _text."""
    return _text(os.fspath(path) if isinstance(path, os.PathLike) else path, name)


def _tags(names, name, optional=False):
    """Tag names for C: a comma-separated str or a list or tuple of names (None: NULL, no tags, where
    `optional`), as _text."""
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        names = ",".join(names)
    return _text(names, name, optional)


class Character(_Handle):
    """One character; joints are read into numpy arrays the caller may keep. A crowd's character
    (Crowd.character) keeps its crowd alive, and fails with LmmError once the crowd is closed.
    A character knows its database's (learned: its model's) tag and event names (`names`: their two lists)."""

    def __init__(self, lib, handle, crowd=None, names=([], [])):
        super().__init__(lib, handle, lib.c.lmm_character_release if crowd is None else lambda handle: None)
        self.crowd = crowd
        self.joint_count = lib.c.lmm_character_joint_count(handle)
        self.tag_names, self.event_names = names

    def _live(self):
        if self.crowd is not None:
            self.crowd._live()
        return super()._live()

    def update(self, gamepad, dt):
        """Advances by dt seconds (a path character takes None)."""
        pad = _gamepad(gamepad) if gamepad is not None else None
        self._lib.check(self._lib.c.lmm_character_update(self._live(), pad, _number(dt, "update: dt")))

    def reset(self, x=0.0, z=0.0, heading=0.0):
        """Back to the state creation left, at (x, 0, z) facing `heading`."""
        self._lib.check(self._lib.c.lmm_character_reset(self._live(), *_placement("reset", x, z, heading)))

    def teleport(self, x, z, heading):
        """Moves the character rigidly to (x, 0, z) facing `heading` radians about +Y."""
        self._lib.check(self._lib.c.lmm_character_teleport(self._live(), *_placement("teleport", x, z, heading)))

    def set_foot_lock(self, on=True, unlock_distance=0.0, blend_halflife=0.0):
        """Locks contact joints in contact with two-joint IK from the next update (any character
        kind); 0 for a distance or halflife takes its default (0.25 m, 0.03 s)."""
        self._lib.check(self._lib.c.lmm_character_set_foot_lock(
            self._live(), _boolean(on, "set_foot_lock: on"), _number(unlock_distance, "set_foot_lock: unlock_distance"),
            _number(blend_halflife, "set_foot_lock: blend_halflife")))

    def set_root_owner(self, owner):
        """ROOT_LIBRARY (update integrates the root) or ROOT_GAME (the game moves it)."""
        owner = _integer(owner, "set_root_owner: owner", _INT_MIN, _INT_MAX)
        self._lib.check(self._lib.c.lmm_character_set_root_owner(self._live(), owner))

    def root_motion(self):
        """The last update's root translation (3,) and turn as x, y, z, w (4,)."""
        translation, turn = np.zeros(3, dtype=np.float32), np.zeros(4, dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_root_motion(self._live(), _floats(translation), _floats(turn)))
        return translation, turn

    def set_root(self, position, rotation_xyzw):
        """The game's root for the next update (ROOT_GAME): position (3,) and rotation x, y, z, w (4,)."""
        position = _vectors(position, "set_root: position", 3, ndim=1)
        rotation = _vectors(rotation_xyzw, "set_root: rotation_xyzw", 4, ndim=1)
        self._lib.check(self._lib.c.lmm_character_set_root(self._live(), _floats(position), _floats(rotation)))

    def joint_index(self, name):
        """Index of the joint called `name`, or -1."""
        return self._lib.c.lmm_character_joint_index(self._live(), _text(name, "joint_index: name"))

    def joint_name(self, joint):
        """Name of joint `joint` (LmmError when out of range)."""
        joint = _integer(joint, "joint_name: joint", _INT_MIN, _INT_MAX)
        name = self._lib.c.lmm_character_joint_name(self._live(), joint)
        return self._lib.check(name).decode()

    def root_position(self):
        """World position of the root, shape (3,)."""
        out = np.zeros(3, dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_root_position(self._live(), _floats(out)))
        return out

    def root_rotation(self):
        """Facing of the root as x, y, z, w, shape (4,)."""
        out = np.zeros(4, dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_root_rotation(self._live(), _floats(out)))
        return out

    def world_transforms(self):
        """World positions (joints, 3) and rotations as x, y, z, w quaternions (joints, 4)."""
        positions = np.zeros((self.joint_count, 3), dtype=np.float32)
        rotations = np.zeros((self.joint_count, 4), dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_world_transforms(
            self._live(), _floats(positions), _floats(rotations), self.joint_count))
        return positions, rotations

    def world_matrices(self):
        """World transforms as 4x4 matrices (joints, 4, 4), translation in [:, :3, 3]."""
        column_major = np.zeros((self.joint_count, 4, 4), dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_world_matrices(self._live(), _floats(column_major), self.joint_count))
        return column_major.transpose(0, 2, 1).copy()

    def _samples(self, function, width):
        """Times (n,), positions (n, 3) and a (n, width) array filled by a trajectory call."""
        n = self._lib.c.lmm_character_trajectory_count(self._live())
        times, positions = np.zeros(n, dtype=np.float32), np.zeros((n, 3), dtype=np.float32)
        third = np.zeros((n, width), dtype=np.float32)
        self._lib.check(function(self._live(), _floats(times), _floats(positions), _floats(third), n))
        return times, positions, third

    def trajectory(self):
        """The desired trajectory: times (n,) in s from now, world positions (n, 3), facings x, y, z, w (n, 4)."""
        return self._samples(self._lib.c.lmm_character_trajectory, 4)

    def played_trajectory(self):
        """The trajectory the played animation predicts: times (n,), positions (n, 3), unit facing directions (n, 3)."""
        return self._samples(self._lib.c.lmm_character_played_trajectory, 3)

    def contacts(self):
        """Per contact label: (joint index, whether it is in contact in the pose shown)."""
        joint, in_contact = ctypes.c_int(), ctypes.c_int()
        out = []
        for k in range(self._lib.c.lmm_character_contact_count(self._live())):
            self._lib.check(self._lib.c.lmm_character_contact(self._live(), k, ctypes.byref(joint), ctypes.byref(in_contact)))
            out.append((joint.value, bool(in_contact.value)))
        return out

    def counters(self):
        """Updates, searches (projections, LHMM matches) and transitions since creation or reset."""
        out = Counters()
        self._lib.check(self._lib.c.lmm_character_counters(self._live(), ctypes.byref(out)))
        return out

    def frame(self):
        """The database frame played, its clip index and clip name (database and path characters)."""
        frame, clip = ctypes.c_int(), ctypes.c_int()
        self._lib.check(self._lib.c.lmm_character_frame(self._live(), ctypes.byref(frame), ctypes.byref(clip)))
        return frame.value, clip.value, self._lib.check(self._lib.c.lmm_character_clip_name(self._live(), clip.value)).decode()

    def decoder_experts(self, capacity=2):
        """The decoder experts routed for the pose shown (learned characters): indices and weights, best first."""
        capacity = _integer(capacity, "decoder_experts: capacity", 1, 1024)
        experts, weights = (ctypes.c_int * capacity)(), np.zeros(capacity, dtype=np.float32)
        count = self._lib.check(self._lib.c.lmm_character_decoder_experts(self._live(), experts, _floats(weights), capacity))
        return list(experts[:count]), weights[:count]

    def set_constraint(self, require=None, require_any=None, exclude=None):
        """The tag constraint searches honour from the next update (every kind of character):
        every tag of `require`, one of `require_any`, none of `exclude` (each a comma-separated str,
        a list of names or None)."""
        names = [_tags(value, "set_constraint: " + key, optional=True)
                 for key, value in (("require", require), ("require_any", require_any), ("exclude", exclude))]
        self._lib.check(self._lib.c.lmm_character_set_constraint(self._live(), *names))

    def _tag_names_of(self, mask):
        """The names of the tags of `mask`."""
        return [name for bit, name in enumerate(self.tag_names) if mask >> bit & 1]

    def constraint(self):
        """The constraint the game set: (require, require_any, exclude) lists of tag names."""
        masks = [ctypes.c_uint64() for _ in range(3)]
        self._lib.check(self._lib.c.lmm_character_constraint(self._live(), *[ctypes.byref(m) for m in masks]))
        return tuple(self._tag_names_of(m.value) for m in masks)

    def tags(self):
        """The names of the tags of the frame being played."""
        mask = ctypes.c_uint64()
        self._lib.check(self._lib.c.lmm_character_tags(self._live(), ctypes.byref(mask)))
        return self._tag_names_of(mask.value)

    def _flag(self, function):
        """A 1 / 0 / -1 (failure) query as a bool."""
        value = function(self._live())
        self._lib.check(value >= 0)
        return bool(value)

    def constraint_held(self):
        """Whether the constraint allows the frame being played."""
        return self._flag(self._lib.c.lmm_character_constraint_held)

    def idle(self):
        """Whether the released stick has the character idle on standing frames."""
        return self._flag(self._lib.c.lmm_character_idle)

    def events(self):
        """The markers the last update played, in order: (name, frame, seconds into the update); the
        name is None for the end of an action (ACTION_END_EVENT)."""
        count = self._lib.c.lmm_character_events(self._live(), None, 0)
        self._lib.check(count >= 0)
        events = (_Event * count)()
        if count > 0:
            self._lib.check(self._lib.c.lmm_character_events(self._live(), events, count) >= 0)
        return [(None if e.name == ACTION_END_EVENT else self.event_names[e.name], e.frame, e.time) for e in events]

    def play_action(self, tags, in_place=False, interruptible=False):
        """Plays the run of frames holding every tag of `tags` (a comma-separated str or a list)
        closest to the pose played, once, then matches again; the root stays when `in_place`, a
        stick push ends it when `interruptible`."""
        self._lib.check(self._lib.c.lmm_character_play_action(
            self._live(), _tags(tags, "play_action: tags"), _boolean(in_place, "play_action: in_place"),
            _boolean(interruptible, "play_action: interruptible")))

    def play_action_frames(self, first, last, in_place=False, interruptible=False):
        """Plays database frames first..last (one clip) once, as play_action."""
        first = _integer(first, "play_action_frames: first", _INT_MIN, _INT_MAX)
        last = _integer(last, "play_action_frames: last", _INT_MIN, _INT_MAX)
        self._lib.check(self._lib.c.lmm_character_play_action_frames(
            self._live(), first, last, _boolean(in_place, "play_action_frames: in_place"),
            _boolean(interruptible, "play_action_frames: interruptible")))

    def cancel_action(self):
        """Ends the playing action (the next update reports its end)."""
        self._lib.check(self._lib.c.lmm_character_cancel_action(self._live()))

    def action_playing(self):
        """Whether a one-shot action plays."""
        return self._flag(self._lib.c.lmm_character_action_playing)

    def action_seconds_left(self):
        """Seconds until the playing action ends (0 without one; a learned character's from the update after play_action)."""
        seconds = self._lib.c.lmm_character_action_seconds_left(self._live())
        self._lib.check(seconds >= 0.0)
        return seconds

    def set_states(self, controller_config):
        """Defines the game states from the [states.NAME] tables of a controller config's text."""
        config = _text(controller_config, "set_states: controller_config")
        self._lib.check(self._lib.c.lmm_character_set_states(self._live(), config))

    def set_state(self, name):
        """Switches to game state `name` (its constraint, transition cost and idle)."""
        self._lib.check(self._lib.c.lmm_character_set_state(self._live(), _text(name, "set_state: name")))

    def state(self):
        """The name of the state set last ("" before any)."""
        name = self._lib.c.lmm_character_state(self._live())
        self._lib.check(name is not None)
        return name.decode()

    def path_progress(self):
        """A path character's desired path point, number of path points and whether it completed the path."""
        desired, points, completed = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self._lib.check(self._lib.c.lmm_character_path_progress(
            self._live(), ctypes.byref(desired), ctypes.byref(points), ctypes.byref(completed)))
        return desired.value, points.value, bool(completed.value)

    def path_points(self):
        """The points a path character follows (placed and smoothed), shape (points, 3)."""
        points = np.zeros((self.path_progress()[1], 3), dtype=np.float32)
        self._lib.check(self._lib.c.lmm_character_path_points(self._live(), _floats(points), len(points)))
        return points


class Crowd(_Handle):
    """Many characters over one asset, updated together (docs/c-api.md#crowds)."""

    def __init__(self, lib, handle):
        super().__init__(lib, handle, lib.c.lmm_crowd_release)
        self.size = lib.c.lmm_crowd_size(handle)
        self.names = ([], [])  # the crowd's database's (or model's) tag and event names, for its characters

    def _member(self, i):
        """`i` checked as a character index of the crowd (LmmError otherwise)."""
        return _integer(i, "character index", 0, self.size - 1)

    def character(self, i):
        """Character i, owned by the crowd (the object keeps the crowd alive); updated by update()."""
        handle = self._lib.check(self._lib.c.lmm_crowd_character(self._live(), self._member(i)))
        return Character(self._lib, handle, crowd=self, names=self.names)

    def set_input(self, i, gamepad):
        """The input character i follows from the next update on."""
        self._lib.check(self._lib.c.lmm_crowd_set_input(self._live(), self._member(i), _gamepad(gamepad)))

    def update(self, dt, begin=0, end=None, worker=0, budget_seconds=0.0):
        """Updates the characters of ranks [begin, end) by dt with batch scratch `worker`."""
        begin = _integer(begin, "update: begin", 0, self.size)
        end = _integer(self.size if end is None else end, "update: end", begin, self.size)
        worker = _integer(worker, "update: worker", 0, _INT_MAX)
        dt, budget = _number(dt, "update: dt"), _number(budget_seconds, "update: budget_seconds")
        self._lib.check(self._lib.c.lmm_crowd_update(self._live(), begin, end, dt, worker, budget))

    def set_rate_divisor(self, i, divisor):
        """Level of detail: character i updates every `divisor`-th update (1..16)."""
        divisor = _integer(divisor, "set_rate_divisor: divisor", _INT_MIN, _INT_MAX)
        self._lib.check(self._lib.c.lmm_crowd_set_rate_divisor(self._live(), self._member(i), divisor))

    def set_priorities(self, priorities):
        """Update order, higher first: one value per character."""
        values = _vectors(priorities, "set_priorities: priorities", self.size, ndim=1)
        self._lib.check(self._lib.c.lmm_crowd_set_priorities(self._live(), _floats(values), values.size))

    def shown_transform(self, i):
        """Where to draw character i between its updates: a 4x4 matrix to put before its world matrices."""
        column_major = np.zeros((4, 4), dtype=np.float32)
        self._lib.check(self._lib.c.lmm_crowd_shown_transform(self._live(), self._member(i), _floats(column_major)))
        return column_major.T.copy()


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
        path = _path(path, "load_database: path")
        return Database(self, self.check(self.c.lmm_database_load(path)), self.c.lmm_database_release)

    def load_model(self, path):
        """A model bundle (*.lmmw)."""
        return Model(self, self.check(self.c.lmm_model_load(_path(path, "load_model: path"))), self.c.lmm_model_release)

    def database_character(self, database, x=0.0, z=0.0, heading=0.0):
        """A database motion-matching character at (x, 0, z) facing `heading` radians about +Y."""
        placement = _placement("database_character", x, z, heading)
        handle = self.c.lmm_character_create_database(_asset(database, Database), *placement)
        return Character(self, self.check(handle), names=(database.tag_names(), database.event_names()))

    def learned_character(self, model, x=0.0, z=0.0, heading=0.0):
        """A learned motion-matching character."""
        placement = _placement("learned_character", x, z, heading)
        return Character(self, self.check(self.c.lmm_character_create_learned(_asset(model, Model), *placement)),
                         names=(model.tag_names(), model.event_names()))

    def path_character(self, database, samples_txz, mode=LMM_PATH_LOCAL, speed_scale=1.0, x=0.0, z=0.0, heading=0.0):
        """A database character following the drawn path `samples_txz` ((t, x, z) rows) with LHMM(3, 3)."""
        samples = _vectors(samples_txz, "path_character: samples_txz (t, x, z)", 3, ndim=2)
        mode = _integer(mode, "path_character: mode", _INT_MIN, _INT_MAX)
        speed_scale = _number(speed_scale, "path_character: speed_scale")
        return Character(self, self.check(self.c.lmm_character_create_path(
            _asset(database, Database), _floats(samples), len(samples), mode, speed_scale,
            *_placement("path_character", x, z, heading))),
            names=(database.tag_names(), database.event_names()))

    def database_crowd(self, database, count):
        """A crowd of `count` database characters at the origin (place them with character(i).reset())."""
        count = _integer(count, "database_crowd: count", 0, _SIZE_MAX)
        crowd = Crowd(self, self.check(self.c.lmm_crowd_create_database(_asset(database, Database), count)))
        crowd.names = (database.tag_names(), database.event_names())
        return crowd

    def learned_crowd(self, model, count, workers=1):
        """A crowd of `count` learned characters, `workers` concurrent update calls at most."""
        count = _integer(count, "learned_crowd: count", 0, _SIZE_MAX)
        workers = _integer(workers, "learned_crowd: workers", _INT_MIN, _INT_MAX)
        crowd = Crowd(self, self.check(self.c.lmm_crowd_create_learned(_asset(model, Model), count, workers)))
        crowd.names = (model.tag_names(), model.event_names())
        return crowd


def quat_multiply(a, b):
    """The x, y, z, w quaternion a * b (b's rotation, then a's) as float32; arrays of shape (..., 4) broadcast."""
    a, b = _vectors(a, "quat_multiply: a", 4), _vectors(b, "quat_multiply: b", 4)
    xyz = a[..., 3:] * b[..., :3] + b[..., 3:] * a[..., :3] + np.cross(a[..., :3], b[..., :3])
    w = a[..., 3:] * b[..., 3:] - np.sum(a[..., :3] * b[..., :3], axis=-1, keepdims=True)
    return np.concatenate([xyz, w], axis=-1)


def quat_rotate(q, v):
    """The vectors v (..., 3) rotated by the unit x, y, z, w quaternions q (..., 4) as float32; shapes broadcast."""
    q, v = _vectors(q, "quat_rotate: q", 4), _vectors(v, "quat_rotate: v", 3)
    u, w = q[..., :3], q[..., 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


# The script of tests/c_api/walk_script.h.
WALK_FRAMES, TELEPORT_FRAME, RESET_FRAME = 780, 600, 720
TELEPORT_DX, TELEPORT_Z, TELEPORT_HEADING, WALL_DX = 5.0, -3.0, 1.0, 0.5


def walk_input(frame):
    """The input of tests/c_api/walk_script.h at `frame` (1-based)."""
    if frame <= 180 or frame > RESET_FRAME:
        return Gamepad(left_y=1.0)
    if frame <= 360:
        return Gamepad(left_x=1.0, gait=0.5)
    if frame <= TELEPORT_FRAME:
        return Gamepad(left_x=-0.7, left_y=-0.7, gait=1.0)
    return Gamepad(left_x=-1.0, left_y=0.3)


def follow_script(character, frame, start_x):
    """The script's steps after the update of `frame` (as walk.c and walk.cpp)."""
    if TELEPORT_FRAME < frame <= RESET_FRAME:  # the game keeps its root behind a wall
        root = character.root_position()
        root[0] = min(root[0], np.float32(start_x + TELEPORT_DX + WALL_DX))
        character.set_root(root, character.root_rotation())
    if frame == TELEPORT_FRAME:
        character.teleport(start_x + TELEPORT_DX, TELEPORT_Z, TELEPORT_HEADING)
        character.set_root_owner(ROOT_GAME)
    if frame == RESET_FRAME:
        character.set_root_owner(ROOT_LIBRARY)
        character.reset(start_x, 0.0, 0.0)


CROWD_FRAMES = 120  # before the script's teleport, set_root and reset


def check_crowd_member(crowd, character, gamepad, name):
    """Updates `crowd` (worker 1 for the second half) and exits unless its character 0 has the pose of
    `character` (the same input, updated alone) bit for bit."""
    for i in range(crowd.size):
        crowd.set_input(i, gamepad)
    crowd.update(ctypes.c_float(1.0 / 60.0).value, 0, 1, 0)
    crowd.update(ctypes.c_float(1.0 / 60.0).value, 1, crowd.size, 1 if name == "learned" else 0)
    member_positions, member_rotations = crowd.character(0).world_transforms()
    positions, rotations = character.world_transforms()
    if not (np.array_equal(member_positions, positions) and np.array_equal(member_rotations, rotations)):
        sys.exit("lmmkit.py: the %s crowd's character 0 and the %s character made alone differ" % (name, name))


def check_path_character(lib, database):
    """Exits unless a path character walks a straight 4 m path (1.3 m/s) to its end within 0.15 m of it
    on average, its played trajectory runs along the path and every panel query answers."""
    walker = lib.path_character(database, [(0.0, 0.0, 0.0), (4.0 / 1.3, 0.0, 4.0)], x=-3.0)
    distances = []
    for frame in range(600):
        walker.update(None, ctypes.c_float(1.0 / 60.0).value)
        distances.append(abs(walker.root_position()[0] + 3.0))  # the path runs along x = -3
        if walker.path_progress()[2]:
            break
    _, played, _ = walker.played_trajectory()
    times, desired, _ = walker.trajectory()
    problems = []
    if not walker.path_progress()[2] or np.mean(distances) > 0.15:
        problems.append("path not completed within 0.15 m: %s, %.3f m" % (walker.path_progress(), np.mean(distances)))
    if not (len(played) == len(desired) == len(times) and np.all(np.isfinite(played))):
        problems.append("trajectories of %d, %d and %d samples" % (len(played), len(desired), len(times)))
    if not (walker.counters().searches > 0 and walker.frame()[2] and walker.contacts() and len(walker.path_points()) > 0):
        problems.append("panel queries: %s %s %s" % (walker.counters().searches, walker.frame(), walker.contacts()))
    if problems:
        sys.exit("lmmkit.py: " + "; ".join(problems))


def main():
    parser = argparse.ArgumentParser(description="Run a database and a learned character through the script of "
                                                 "tests/c_api/walk_script.h (as tests/c_api/walk.c).")
    parser.add_argument("library", help="liblmmkit.so")
    parser.add_argument("database", help="*.mmdb")
    parser.add_argument("model", help="*.lmmw")
    args = parser.parse_args()
    lib = Library(args.library)
    database, model = lib.load_database(args.database), lib.load_model(args.model)
    start_x = {"database": 0.0, "learned": 2.0}
    characters = {"database": lib.database_character(database, start_x["database"], 0.0, 0.0),
                  "learned": lib.learned_character(model, start_x["learned"], 0.0, 0.0)}
    # Crowds whose character 0 (search phase 0, as a character made alone) follows the script's
    # first seconds alongside.
    crowds = {"database": lib.database_crowd(database, 3), "learned": lib.learned_crowd(model, 3, 2)}
    for name, crowd in crowds.items():
        crowd.character(0).reset(start_x[name], 0.0, 0.0)
    check_path_character(lib, database)
    try:
        experts, weights = characters["learned"].decoder_experts()
        if not (0 < len(experts) == len(weights) and abs(float(np.sum(weights)) - 1.0) < 1e-4):
            sys.exit("lmmkit.py: decoder experts %s with weights %s" % (experts, weights))
    except LmmError as error:  # a bundle whose decoder is a plain network
        if "not a mixture of experts" not in str(error):
            raise
    database.close()  # the characters keep the assets alive
    model.close()
    for frame in range(1, WALK_FRAMES + 1):
        for name, character in characters.items():
            character.update(walk_input(frame), ctypes.c_float(1.0 / 60.0).value)
            follow_script(character, frame, start_x[name])
            if frame <= CROWD_FRAMES:
                check_crowd_member(crowds[name], character, walk_input(frame), name)
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
