/* The scripted input of the C API walk tests (walk.c, walk.cpp; python/lmmkit.py repeats it):
 * 10 s at 60 Hz, forward, then right at a jog, then diagonally back at a run. */
#ifndef LMM_TESTS_WALK_SCRIPT_H
#define LMM_TESTS_WALK_SCRIPT_H

#include "lmm/lmm.h"

#define WALK_FRAMES 600
#define WALK_DT (1.0f / 60.0f)
#define WALK_PRINT_EVERY 60
#define WALK_LINE_FORMAT "%s frame %d root %.5f %.5f\n"

/* The input held at `frame` (1-based). */
static inline lmm_gamepad walk_input(int frame) {
  lmm_gamepad g = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0, 0.0f};
  if (frame <= 180) {
    g.left_y = 1.0f;
  } else if (frame <= 360) {
    g.left_x = 1.0f;
    g.gait = 0.5f;
  } else {
    g.left_x = -0.7f;
    g.left_y = -0.7f;
    g.gait = 1.0f;
  }
  return g;
}

#endif
