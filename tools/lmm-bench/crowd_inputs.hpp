// The input and start point of each character of a benchmarked crowd (lmm-bench crowd).
#pragma once

#include "lmm/motion/controller.hpp"
#include "lmm/core/math.hpp"

namespace lmm::bench {

// Character i's stick on frame f: a new random direction and gait every 1 to 2 seconds at 60 Hz.
GamepadInput input_of(int i, int f);
// Where character i starts: a grid 32 characters wide, 2 m apart.
Vec3 start_of(int i);

}  // namespace lmm::bench
