// Analytic two-joint inverse kinematics (hip -> knee -> ankle), used by the foot lock.
#pragma once

#include "lmm/math.hpp"

namespace lmm {

// Global state of a three-joint chain and of the hip's parent.
struct LegChain {
  Vec3 hip, knee, ankle;                       // global positions
  Quat hip_rotation, knee_rotation, ankle_rotation;  // global rotations
};

// Changes the local rotations of hip, knee and ankle so that the ankle reaches `target` (as
// far as the bone lengths allow) while the ankle keeps its global rotation. `pole` (e.g. the
// character's forward direction) picks the bend plane when the leg is perfectly straight.
void two_joint_ik(const LegChain& chain, Vec3 target, Vec3 pole, Quat& hip_local, Quat& knee_local,
                  Quat& ankle_local);

}  // namespace lmm
