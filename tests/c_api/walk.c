/* Drives a database character and a learned character for 10 s through the C API (lmm/lmm.h)
 * and prints their root positions once a second; walk.cpp prints the same through the C++ API
 * and python/lmmkit.py through ctypes, and run.sh checks that all three agree. Also checks the
 * joint lookup and that the matrices and the quaternion transforms describe the same pose.
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
  for (int frame = 1; frame <= WALK_FRAMES; ++frame) {
    const lmm_gamepad input = walk_input(frame);
    const lmm_gamepad inputs[2] = {input, input};
    /* Two ranges, as a job system would split a crowd. */
    if (!lmm_characters_update(characters, inputs, 0, 1, WALK_DT) ||
        !lmm_characters_update(characters, inputs, 1, 2, WALK_DT)) {
      return fail("updating");
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
