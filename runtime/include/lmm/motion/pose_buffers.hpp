// A local pose with velocities: the buffers the playbacks, the inertializer and IK share.
#pragma once

#include <vector>

#include "lmm/core/math.hpp"

namespace lmm {

// Local pose buffers of one skeleton: positions, rotations, linear and angular velocities.
struct PoseBuffers {
  std::vector<Vec3> positions, velocities, angular;
  std::vector<Quat> rotations;

  // Sizes every buffer for `joints` joints (allocates).
  void resize(int joints);
};

}  // namespace lmm
