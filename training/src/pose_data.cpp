#include "lmm/training/pose_data.hpp"

#include <stdexcept>

#include "lmm/asset/pose_vector.hpp"

namespace lmm::training {
namespace {

// Per joint: 1 + number of descendants (each joint votes for all its ancestors).
std::vector<float> descendant_votes(const std::vector<int64_t>& parents) {
  std::vector<float> votes(parents.size(), 1.0f);
  for (size_t j = 0; j < parents.size(); ++j) {
    for (int64_t p = parents[j]; p >= 0; p = parents[size_t(p)]) votes[size_t(p)] += 1.0f;
  }
  return votes;
}

torch::Tensor mean_one(torch::Tensor w) { return w / w.mean(); }

}  // namespace

torch::Tensor matrices_from_6d(const torch::Tensor& r6) {
  const torch::Tensor a = r6.narrow(-1, 0, 3), b = r6.narrow(-1, 3, 3);
  const torch::Tensor c0 = torch::nn::functional::normalize(a, torch::nn::functional::NormalizeFuncOptions().dim(-1).eps(1e-8));
  const torch::Tensor b_orth = b - (c0 * b).sum(-1, true) * c0;
  const torch::Tensor c1 = torch::nn::functional::normalize(b_orth, torch::nn::functional::NormalizeFuncOptions().dim(-1).eps(1e-8));
  const torch::Tensor c2 = torch::cross(c0, c1, -1);
  return torch::stack({c0, c1, c2}, -1);  // columns
}

torch::Tensor model_space_positions(const std::vector<int64_t>& parents, const torch::Tensor& local_positions,
                                    const torch::Tensor& local_matrices) {
  std::vector<torch::Tensor> positions(parents.size()), matrices(parents.size());
  // unbind, not select per joint: its backward stacks the joints' gradients once, where each
  // select's scatters into a zeroed copy of the whole batch.
  const std::vector<torch::Tensor> joint_positions = local_positions.unbind(1), joint_matrices = local_matrices.unbind(1);
  for (size_t j = 0; j < parents.size(); ++j) {
    const torch::Tensor& p = joint_positions[j];
    const torch::Tensor& m = joint_matrices[j];
    const int64_t parent = parents[j];
    if (parent < 0) {
      positions[j] = p;
      matrices[j] = m;
    } else {
      positions[j] = positions[size_t(parent)] + torch::matmul(matrices[size_t(parent)], p.unsqueeze(-1)).squeeze(-1);
      matrices[j] = torch::matmul(matrices[size_t(parent)], m);
    }
  }
  return torch::stack(positions, 1);
}

torch::Tensor pose_to_model_positions(const PoseData& data, const torch::Tensor& pose) {
  const PoseLayout& l = data.layout;
  const int64_t b = pose.size(0);
  const torch::Tensor positions = pose.narrow(1, l.positions(), 3 * l.joints).reshape({b, l.joints, 3});
  const torch::Tensor rotations = pose.narrow(1, l.rotations(), 6 * l.joints).reshape({b, l.joints, 6});
  return model_space_positions(data.parents, positions, matrices_from_6d(rotations));
}

PoseData pose_data_layout(const Database& db) {
  const int64_t j_all = db.joint_count();
  if (db.schema().dims <= 0) throw std::runtime_error("database has no matching features");
  PoseData d;
  d.fps = db.fps();
  d.layout.joints = j_all - 1;
  d.layout.contacts = static_cast<int64_t>(db.contact_joints().size());
  for (int64_t j = 1; j < j_all; ++j) {
    d.parents.push_back(db.skeleton().parents[size_t(j)] - 1);
    d.joint_names.push_back(db.skeleton().names[size_t(j)]);
  }
  for (int c : db.contact_joints()) {
    if (c < 1) throw std::runtime_error("contact joint " + std::to_string(c) + " is the simulation bone");
    d.contact_joints.push_back(c - 1);
  }
  std::vector<int64_t> starts;
  for (const DatabaseRange& r : db.ranges()) {
    for (int f = r.start; f + 1 < r.stop; ++f) starts.push_back(f);
  }
  if (starts.empty()) throw std::runtime_error("database has no clip with two or more frames");
  d.pair_starts = torch::tensor(starts, torch::kInt64);
  const std::vector<float> votes = descendant_votes(d.parents);
  d.local_weights = mean_one(torch::tensor(votes));
  d.model_weights = mean_one(1.0 / torch::tensor(votes));
  return d;
}

PoseData make_pose_data(const Database& db) {
  PoseData d = pose_data_layout(db);
  const PoseLayout& l = d.layout;
  const int64_t n = db.frame_count();
  d.pose = torch::zeros({n, l.size()});
  float* y = d.pose.data_ptr<float>();
  for (int64_t f = 0; f < n; ++f) database_pose_vector(db, int(f), y + f * l.size());
  d.features = torch::from_blob(const_cast<float*>(db.features(0)), {n, int64_t(db.schema().dims)}).clone();
  d.pose_mean = d.pose.mean(0);
  d.pose_std = d.pose.std(0).clamp_min(1e-4);
  d.pose_mean.narrow(0, l.contact(), l.contacts).zero_();
  d.pose_std.narrow(0, l.contact(), l.contacts).fill_(1.0f);
  {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> chunks;
    for (int64_t s = 0; s < n; s += 8192) chunks.push_back(pose_to_model_positions(d, d.pose.narrow(0, s, std::min<int64_t>(8192, n - s))));
    d.model_positions = torch::cat(chunks, 0);
  }
  return d;
}

}  // namespace lmm::training
