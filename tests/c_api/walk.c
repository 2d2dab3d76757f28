/* Drives a database character and a learned character through the script of walk_script.h
 * (walking, a teleport, a root the game owns against a wall, a reset) through the C API
 * (lmm/lmm.h) and prints their root positions once a second; walk.cpp prints the same through
 * the C++ API and python/lmmkit.py through ctypes, and run.sh checks that all three agree. Also
 * checks the joint lookup, that the matrices and the quaternion transforms describe the same
 * pose, that root motion is the root's displacement and that teleport lands where it was sent.
 * Usage: walk DATABASE.mmdb MODEL.lmmw */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lmm/lmm.h"
#include "walk_script.h"

static int fail(const char* what) {
  fprintf(stderr, "walk: %s: %s\n", what, lmm_last_error());
  return 1;
}

/* 0 when every joint's name maps back to its index and each matrix holds the position and the
 * rotation of the quaternion transforms. */
static int check_pose(const lmm_character* c) {
  const int joints = lmm_character_joint_count(c);
  float* positions = malloc(sizeof(float) * 3 * (size_t)joints);
  float* rotations = malloc(sizeof(float) * 4 * (size_t)joints);
  float* matrices = malloc(sizeof(float) * 16 * (size_t)joints);
  int bad = !lmm_character_world_transforms(c, positions, rotations, (size_t)joints) ||
            !lmm_character_world_matrices(c, matrices, (size_t)joints) ||
            lmm_character_world_matrices(c, matrices, (size_t)joints - 1);  /* too small: must fail */
  for (int j = 0; j < joints && !bad; ++j) {
    const float* m = matrices + 16 * j;
    const float* q = rotations + 4 * j; /* x, y, z, w */
    const float yy = q[1] * q[1], zz = q[2] * q[2];
    bad |= lmm_character_joint_index(c, lmm_character_joint_name(c, j)) != j;
    bad |= fabsf(m[12] - positions[3 * j]) > 1e-6f || fabsf(m[14] - positions[3 * j + 2]) > 1e-6f;
    bad |= fabsf(m[0] - (1.0f - 2.0f * (yy + zz))) > 1e-4f || m[15] != 1.0f;
  }
  free(positions);
  free(rotations);
  free(matrices);
  return bad;
}

/* The game's side of a game-owned root: the root after the update, kept behind the wall at
 * x <= wall, handed back. 0 when the root motion read back is the root's displacement. */
static int game_moves_root(lmm_character* c, const float before[3], float wall) {
  float root[3], rotation[4], motion[3];
  if (!lmm_character_root_position(c, root) || !lmm_character_root_rotation(c, rotation) ||
      !lmm_character_root_motion(c, motion, NULL)) {
    return 1;
  }
  const int consistent = fabsf(before[0] + motion[0] - root[0]) < 1e-5f && fabsf(before[2] + motion[2] - root[2]) < 1e-5f;
  if (root[0] > wall) root[0] = wall;
  return !consistent || !lmm_character_set_root(c, root, rotation);
}

/* Teleports `c` (started at x = start_x) and gives its root to the game; 0 when it landed there. */
static int teleport(lmm_character* c, float start_x) {
  float root[3];
  const float x = start_x + WALK_TELEPORT_DX;
  if (!lmm_character_teleport(c, x, WALK_TELEPORT_Z, WALK_TELEPORT_HEADING) ||
      !lmm_character_set_root_owner(c, LMM_ROOT_GAME) || !lmm_character_root_position(c, root)) {
    return 1;
  }
  return fabsf(root[0] - x) > 1e-5f || fabsf(root[2] - WALK_TELEPORT_Z) > 1e-5f;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DATABASE.mmdb MODEL.lmmw\n", argv[0]);
    return 2;
  }
  lmm_database* database = lmm_database_load(argv[1]);
  if (database == NULL) return fail("loading the database");
  lmm_model* model = lmm_model_load(argv[2]);
  if (model == NULL) return fail("loading the model");
  lmm_character* characters[2] = {lmm_character_create_database(database, 0.0f, 0.0f, 0.0f),
                                  lmm_character_create_learned(model, 2.0f, 0.0f, 0.0f)};
  if (characters[0] == NULL || characters[1] == NULL) return fail("creating the characters");
  /* The characters keep the assets alive: the caller's references can go now. */
  lmm_database_release(database);
  lmm_model_release(model);
  const char* names[2] = {"database", "learned"};
  const float start_x[2] = {0.0f, 2.0f};
  for (int frame = 1; frame <= WALK_FRAMES; ++frame) {
    const lmm_gamepad input = walk_input(frame);
    const lmm_gamepad inputs[2] = {input, input};
    const int game_owns_root = frame > WALK_TELEPORT_FRAME && frame <= WALK_RESET_FRAME;
    float before[2][3];
    for (int c = 0; c < 2; ++c) lmm_character_root_position(characters[c], before[c]);
    /* Two ranges, as a job system would split a crowd. */
    if (!lmm_characters_update(characters, inputs, 0, 1, WALK_DT) ||
        !lmm_characters_update(characters, inputs, 1, 2, WALK_DT)) {
      return fail("updating");
    }
    for (int c = 0; c < 2 && game_owns_root; ++c) {
      if (game_moves_root(characters[c], before[c], start_x[c] + WALK_TELEPORT_DX + WALK_WALL_DX)) {
        return fail("moving a game-owned root");
      }
    }
    for (int c = 0; c < 2 && frame == WALK_TELEPORT_FRAME; ++c) {
      if (teleport(characters[c], start_x[c])) return fail("teleporting");
    }
    for (int c = 0; c < 2 && frame == WALK_RESET_FRAME; ++c) {
      if (!lmm_character_set_root_owner(characters[c], LMM_ROOT_LIBRARY) ||
          !lmm_character_reset(characters[c], start_x[c], 0.0f, 0.0f)) {
        return fail("resetting");
      }
    }
    if (frame % WALK_PRINT_EVERY != 0) continue;
    for (int c = 0; c < 2; ++c) {
      float root[3];
      if (!lmm_character_root_position(characters[c], root)) return fail("reading the root");
      printf(WALK_LINE_FORMAT, names[c], frame, (double)root[0], (double)root[2]);
    }
  }
  for (int c = 0; c < 2; ++c) {
    if (check_pose(characters[c])) {
      fprintf(stderr, "walk: the %s character's joints or transforms disagree\n", names[c]);
      return 1;
    }
    lmm_character_release(characters[c]);
  }
  return 0;
}
