/* The scripted run of the C API walk tests (walk.c, walk.cpp; python/lmmkit.py repeats it):
 * 10 s at 60 Hz, forward, then right at a jog, then diagonally back at a run; then each character
 * is teleported 5 m along +x to z = -3 and the game owns its root for 2 s, walking it into a
 * wall at x <= teleport x + 0.5; then the library takes the root back, the characters are reset
 * to their start and walk forward for 1 s. */
#ifndef LMM_TESTS_WALK_SCRIPT_H
#define LMM_TESTS_WALK_SCRIPT_H

#include "lmm/lmm.h"

#define WALK_FRAMES 780
#define WALK_DT (1.0f / 60.0f)
#define WALK_PRINT_EVERY 60
#define WALK_LINE_FORMAT "%s frame %d root %.5f %.5f\n"
#define WALK_TELEPORT_FRAME 600 /* after its update: teleport; the game owns the root */
#define WALK_RESET_FRAME 720    /* after its update: the library owns the root; reset */
#define WALK_TELEPORT_DX 5.0f
#define WALK_TELEPORT_Z (-3.0f)
#define WALK_TELEPORT_HEADING 1.0f
#define WALK_WALL_DX 0.5f

/* The input held at `frame` (1-based). */
static inline lmm_gamepad walk_input(int frame) {
  lmm_gamepad g = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0, 0.0f};
  if (frame <= 180 || frame > WALK_RESET_FRAME) {
    g.left_y = 1.0f;
  } else if (frame <= 360) {
    g.left_x = 1.0f;
    g.gait = 0.5f;
  } else if (frame <= WALK_TELEPORT_FRAME) {
    g.left_x = -0.7f;
    g.left_y = -0.7f;
    g.gait = 1.0f;
  } else {
    g.left_x = -1.0f; /* towards +x, into the wall */
    g.left_y = 0.3f;
  }
  return g;
}

#endif
