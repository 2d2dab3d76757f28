// The 6D rotation representation (Kleanthous & Martini 2023 Sec. 4.1): the first two columns of
// the rotation matrix.
#pragma once

#include "lmm/core/math.hpp"

namespace lmm {

// First two columns of q's rotation matrix, (c0, c1) as 6 floats (Kleanthous & Martini 2023 Sec. 4.1, ref. [27]).
void quat_to_6d(Quat q, float* out);
// The rotation of a 6D vector: Gram-Schmidt on its two columns (identity when degenerate).
Quat quat_from_6d(const float* r6);

}  // namespace lmm
