// Deprecated include path since lmmkit 0.3 (the runtime's headers moved into layer folders); it
// forwards to the headers below and goes in 0.4.
#pragma once

#include "lmm/asset/pose_vector.hpp"
#include "lmm/core/rotation_6d.hpp"
#include "lmm/eval/pose_kernels.hpp"
