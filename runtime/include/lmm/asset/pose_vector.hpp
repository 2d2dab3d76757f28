// Pose vectors of learned motion matching (Kleanthous & Martini 2023 Sec. 4.1): local joint positions, 6D
// rotations, root velocities in character space and contact labels, laid out by
// PoseVectorLayout; and whether a model bundle fits a database. The training data, the evaluation
// tools and the learned character all read pose vectors through these functions and
// pose_from_vector (lmm/eval/pose_kernels.hpp), so a database frame and a decoded pose are read the
// same way.
#pragma once

#include <string>

#include "lmm/asset/database.hpp"
#include "lmm/asset/model.hpp"

namespace lmm {

// The pose vector layout of a database's skeleton and contact joints.
PoseVectorLayout pose_layout_of(const Database& db);

// Writes the pose vector of database frame `frame` (pose_layout_of(db).size() floats; contacts
// 0 / 1). No allocation.
void database_pose_vector(const Database& db, int frame, float* out);

// Root linear and angular velocity (character space) stored in a pose vector.
Vec3 pose_root_velocity(const PoseVectorLayout& layout, const float* pose);
Vec3 pose_root_angular_velocity(const PoseVectorLayout& layout, const float* pose);

// Whether `model` was trained on data shaped like `db`: same skeleton (names, parents, offsets
// within 1 mm), contact joints, frame rate, feature schema (name, groups, kinds, items,
// weights) and feature normalisation (within 0.1%). False with a message naming the first
// difference.
bool model_matches_database(const Model& model, const Database& db, std::string& error);

}  // namespace lmm
