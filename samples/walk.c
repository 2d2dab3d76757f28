/* Characters through the C API (lmm/lmm.h), for engine plugins and other languages: a learned
 * character from a model bundle and, when a database is given, a database character beside it. A
 * scripted stick walks them forward, then to the right; every 2 s the program prints their roots and
 * hips, read as an engine would: world positions and x, y, z, w quaternions for every joint.
 * Link lmm::runtime (static) or liblmmkit.so.  Usage: walk MODEL.lmmw [DATABASE.mmdb] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lmm/lmm.h"

#define MAX_CHARACTERS 2

/* Prints what failed and lmm_last_error() (the library's message, per thread); returns 1. */
static int fail(const char* what) {
  fprintf(stderr, "walk: %s: %s\n", what, lmm_last_error());
  return 1;
}

/* Prints the root and the hips of `c` in world space; 0 on success. */
static int print_character(const lmm_character* c, const char* name, int frame) {
  const int joints = lmm_character_joint_count(c);
  const int hips = lmm_character_joint_index(c, "Hips");         /* by name, -1 when absent: look up once in a game */
  float* positions = malloc(sizeof(float) * 3 * (size_t)joints); /* a game allocates these once */
  float* rotations = malloc(sizeof(float) * 4 * (size_t)joints);
  float root[3];
  int ok = positions != NULL && rotations != NULL && lmm_character_root_position(c, root) &&
           lmm_character_world_transforms(c, positions, rotations, (size_t)joints);
  if (ok) {
    printf("t %2d s: %-8s root (%6.2f, %6.2f)", frame / 60, name, (double)root[0], (double)root[2]);
    if (hips >= 0) printf(", hips %.2f m up", (double)positions[3 * hips + 1]);
    printf("\n");
  }
  free(positions);
  free(rotations);
  return !ok;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s MODEL.lmmw [DATABASE.mmdb]\n", argv[0]);
    return 2;
  }
  printf("lmmkit %s\n", lmm_version());
  lmm_character* characters[MAX_CHARACTERS];
  const char* names[MAX_CHARACTERS] = {"learned", "database"};
  const float start_x[MAX_CHARACTERS] = {0.0f, 2.0f}; /* side by side, facing +Z */
  size_t count = 0;
  lmm_model* model = lmm_model_load(argv[1]);
  if (model == NULL) return fail("loading the model");
  characters[count++] = lmm_character_create_learned(model, start_x[0], 0.0f, 0.0f); /* x, z, heading */
  lmm_model_release(model); /* the character keeps the model alive */
  if (characters[0] == NULL) return fail("creating the learned character");
  if (argc == 3) {
    lmm_database* database = lmm_database_load(argv[2]); /* also builds its search index */
    if (database == NULL) return fail("loading the database");
    characters[count++] = lmm_character_create_database(database, start_x[1], 0.0f, 0.0f);
    lmm_database_release(database);
    if (characters[1] == NULL) return fail("creating the database character");
  }

  lmm_gamepad inputs[MAX_CHARACTERS] = {{0}};  /* sticks in [-1, 1]: x right, y forward */
  for (int frame = 1; frame <= 600; ++frame) { /* 10 s at 60 Hz */
    for (size_t i = 0; i < count; ++i) {
      inputs[i].left_x = frame <= 300 ? 0.0f : 1.0f; /* forward, then to the right at a jog */
      inputs[i].left_y = frame <= 300 ? 1.0f : 0.0f;
      inputs[i].gait = frame <= 300 ? 0.0f : 0.5f;
    }
    /* Characters [begin, end): a job system would update disjoint ranges on its threads. */
    if (!lmm_characters_update(characters, inputs, 0, count, 1.0f / 60.0f)) return fail("updating");
    for (size_t i = 0; i < count && frame % 120 == 0; ++i) {
      if (print_character(characters[i], names[i], frame)) return fail("reading the pose");
    }
  }
  for (size_t i = 0; i < count; ++i) {
    float root[3];
    if (!lmm_character_root_position(characters[i], root)) return fail("reading the root");
    const double moved = hypot((double)root[0] - start_x[i], (double)root[2]);
    lmm_character_release(characters[i]);
    if (moved < 3.0) {
      fprintf(stderr, "walk: the %s character ended only %.2f m from its start\n", names[i], moved);
      return 1;
    }
  }
  printf("%zu character(s) walked 10 s\n", count);
  return 0;
}
