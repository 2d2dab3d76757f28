// Pose vectors of learned motion matching (Kleanthous & Martini 2023 Sec. 4.1): local joint positions, 6D
// rotations, root velocities in character space and contact labels, laid out by
// PoseVectorLayout. The training data, the evaluation tools and the learned character all use
// these conversions, so a database frame and a decoded pose are read the same way.
#pragma once

#include <string>

#include "lmm/database.hpp"
#include "lmm/model.hpp"
#include "lmm/nn.hpp"

namespace lmm {

// First two columns of q's rotation matrix, (c0, c1) as 6 floats (Kleanthous & Martini 2023 Sec. 4.1, ref. [27]).
void quat_to_6d(Quat q, float* out);
// The rotation of a 6D vector: Gram-Schmidt on its two columns (identity when degenerate).
Quat quat_from_6d(const float* r6);
// quat_from_6d of `count` consecutive 6D rotations (6 floats each) into out[0..count), equal to
// it bit for bit: sixteen (AVX-512) or eight (AVX2) at a time where the CPU has them (the last
// group overlapping the one before where count is no multiple), then four at a time with SSE2
// where the build has it. out must not overlap r6. No allocation.
void quats_from_6d(const float* r6, int count, Quat* out);
// The same with the lanes of `path` (Auto: the widest; Scalar: one at a time; a path this build or
// CPU lacks: the next narrower one).
void quats_from_6d(const float* r6, int count, Quat* out, KernelPath path);

// forward_kinematics of every pose of `poses` over `parents` (`joints` joints each), equal to it
// bit for bit: sixteen poses at once, one per lane, where `path` allows AVX-512 (Auto or Avx512)
// and the CPU has it, the rest one by one. `scratch` holds forward_kinematics_scratch(joints)
// floats. No allocation.
void forward_kinematics_many(const int* parents, int joints, const PoseArrays& poses, float* scratch,
                             KernelPath path = KernelPath::Auto);

// The pose vector layout of a database's skeleton and contact joints.
PoseVectorLayout pose_layout_of(const Database& db);

// Writes the pose vector of database frame `frame` (pose_layout_of(db).size() floats; contacts
// 0 / 1). No allocation.
void database_pose_vector(const Database& db, int frame, float* out);

// Local pose of skeleton joints 1..layout.joints from a pose vector; joint 0 (the simulation
// bone) is set to the origin, unrotated, so forward kinematics gives model-space positions.
// Rotations are renormalised from their 6D form. No allocation.
void pose_from_vector(const PoseVectorLayout& layout, const float* pose, Vec3* local_positions, Quat* local_rotations);

// Root linear and angular velocity (character space) stored in a pose vector.
Vec3 pose_root_velocity(const PoseVectorLayout& layout, const float* pose);
Vec3 pose_root_angular_velocity(const PoseVectorLayout& layout, const float* pose);

// Whether `model` was trained on data shaped like `db`: same skeleton (names, parents, offsets
// within 1 mm), contact joints, frame rate, feature schema (name, groups, kinds, items,
// weights) and feature normalisation (within 0.1%). False with a message naming the first
// difference.
bool model_matches_database(const Model& model, const Database& db, std::string& error);

}  // namespace lmm
