// Pose math over many rotations or poses at once, with the widest lanes the CPU has, each result
// equal to the scalar function's bit for bit: 6D rotations to quaternions, and forward kinematics of
// many poses of one skeleton; and decoding a pose vector into a local pose.
#pragma once

#include "lmm/asset/model.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/core/kernel_path.hpp"
#include "lmm/core/math.hpp"

namespace lmm {

// quat_from_6d of `count` consecutive 6D rotations (6 floats each) into out[0..count), equal to
// it bit for bit: sixteen (AVX-512) or eight (AVX2) at a time where the CPU has them (the last
// group overlapping the one before where count is no multiple), then four at a time with SSE2
// where the build has it. out must not overlap r6. No allocation.
void quats_from_6d(const float* r6, int count, Quat* out);
// The same with the lanes of `path` (Auto: the widest; Scalar: one at a time; a path this build or
// CPU lacks: the next narrower one).
void quats_from_6d(const float* r6, int count, Quat* out, KernelPath path);

// The joint arrays of many poses over one skeleton, pose c's at index c of each (for
// forward_kinematics_many).
struct PoseArrays {
  const Vec3* const* local_positions;
  const Quat* const* local_rotations;
  Vec3* const* global_positions;
  Quat* const* global_rotations;
  int count;  // poses
};

// forward_kinematics of every pose of `poses` over `parents` (`joints` joints each), equal to it
// bit for bit: sixteen poses at once, one per lane, where `path` allows AVX-512 (Auto or Avx512)
// and the CPU has it, the rest one by one. `scratch` holds forward_kinematics_scratch(joints)
// floats. No allocation.
void forward_kinematics_many(const int* parents, int joints, const PoseArrays& poses, float* scratch,
                             KernelPath path = KernelPath::Auto);
// Floats of scratch forward_kinematics_many needs for a skeleton of `joints` joints.
int forward_kinematics_scratch(int joints);

// Local pose of skeleton joints 1..layout.joints from a pose vector; joint 0 (the simulation
// bone) is set to the origin, unrotated, so forward kinematics gives model-space positions.
// Rotations are renormalised from their 6D form. No allocation.
void pose_from_vector(const PoseVectorLayout& layout, const float* pose, Vec3* local_positions, Quat* local_rotations);

}  // namespace lmm
