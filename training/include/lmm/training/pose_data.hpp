// Training tensors derived from a motion database: pose vectors (local positions, 6D rotations,
// root velocities, contacts; Kleanthous & Martini 2023 Sec. 4.1), model-space positions, joint weights and
// differentiable forward kinematics.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"

namespace lmm::training {

// Where each part lives in a pose vector of `joints` animated joints (the database joints
// without the simulation bone) and `contacts` contact labels.
struct PoseLayout {
  int64_t joints = 0;
  int64_t contacts = 0;
  int64_t positions() const { return 0; }                 // joints x 3 local positions
  int64_t rotations() const { return 3 * joints; }        // joints x 6 (two matrix columns)
  int64_t root_velocity() const { return 9 * joints; }    // 3: root linear velocity, character space
  int64_t root_angular() const { return 9 * joints + 3; } // 3: root angular velocity
  int64_t contact() const { return 9 * joints + 6; }      // contacts
  int64_t size() const { return 9 * joints + 6 + contacts; }
};

// Everything the trainers read, for every frame of a database.
struct PoseData {
  PoseLayout layout;
  float fps = 60.0f;
  torch::Tensor pose;             // [N, P] pose vectors
  torch::Tensor model_positions;  // [N, J, 3] model-space (character-space) joint positions
  torch::Tensor features;         // [N, D] normalised matching features
  torch::Tensor pair_starts;      // [K] int64 frames f whose f + 1 is in the same clip
  torch::Tensor pose_mean, pose_std;  // [P] statistics (contacts: mean 0, std 1)
  std::vector<int64_t> parents;   // per animated joint: parent animated joint or -1 (the root)
  torch::Tensor local_weights;    // [J] hierarchical joint weights, Kleanthous & Martini 2023 Sec. 5.3
  torch::Tensor model_weights;    // [J] the inverse relation, normalised to mean 1
  std::vector<int64_t> contact_joints;  // animated-joint index of each contact label
  std::vector<std::string> joint_names; // animated joints
};

// Builds the training tensors of `db`. Throws std::runtime_error when the database has no
// features or fewer than two frames in every clip.
PoseData make_pose_data(const Database& db);

// make_pose_data's small part: layout, fps, joints, contacts, pair starts and joint weights,
// without the per-frame tensors (pose, model_positions, features, pose_mean, pose_std). Throws
// like make_pose_data.
PoseData pose_data_layout(const Database& db);

// Rotation matrices [..., 3, 3] from 6D vectors [..., 6] (first two columns, Gram-Schmidt).
torch::Tensor matrices_from_6d(const torch::Tensor& r6);

// Model-space joint positions [B, J, 3] from local positions [B, J, 3] and local rotation
// matrices [B, J, 3, 3] (the root of the hierarchy sits at the origin, unrotated).
torch::Tensor model_space_positions(const std::vector<int64_t>& parents, const torch::Tensor& local_positions,
                                    const torch::Tensor& local_matrices);

// Model-space positions [B, J, 3] of pose vectors [B, P].
torch::Tensor pose_to_model_positions(const PoseData& data, const torch::Tensor& pose);

}  // namespace lmm::training
