#include "lmm/import/database_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "lmm/common/errors.hpp"

namespace lmm::pipeline {
namespace {

// Throws unless `a` and `b` have the same frames, joints and feature dims.
void check_comparable(const Database& a, const Database& b) {
  if (a.frame_count() != b.frame_count()) {
    throw InputError("the databases have " + std::to_string(a.frame_count()) + " and " + std::to_string(b.frame_count()) + " frames");
  }
  if (a.skeleton().parents != b.skeleton().parents) {
    throw InputError("the databases have other hierarchies: " + a.skeleton().joined_names() + " and " + b.skeleton().joined_names());
  }
  if (a.schema().dims != b.schema().dims) {
    throw InputError("the databases have " + std::to_string(a.schema().dims) + " and " + std::to_string(b.schema().dims) + " feature dims");
  }
}

// Squared Euclidean distance of frame `f` of `db` to `query`.
float cost(const Database& db, int f, const std::vector<float>& query) {
  const float* x = db.features(f);
  float d = 0.0f;
  for (size_t i = 0; i < query.size(); ++i) d += (x[i] - query[i]) * (x[i] - query[i]);
  return d;
}

// The frame of `db` whose features are nearest `query` (first on ties).
int nearest_frame(const Database& db, const std::vector<float>& query) {
  int best = 0;
  float best_cost = 1e30f;
  for (int f = 0; f < db.frame_count(); ++f) {
    const float c = cost(db, f, query);
    if (c < best_cost) best = f, best_cost = c;
  }
  return best;
}

void compare_positions(const Database& a, const Database& b, DatabaseDifference& out) {
  const int joints = a.joint_count();
  std::vector<Vec3> pa(static_cast<size_t>(joints)), pb(static_cast<size_t>(joints));
  std::vector<Quat> ra(static_cast<size_t>(joints)), rb(static_cast<size_t>(joints));
  for (int f = 0; f < a.frame_count(); ++f) {
    forward_kinematics(a.skeleton().parents.data(), joints, a.positions(f), a.rotations(f), pa.data(), ra.data());
    forward_kinematics(b.skeleton().parents.data(), joints, b.positions(f), b.rotations(f), pb.data(), rb.data());
    for (int j = 0; j < joints; ++j) {
      const float d = length(pa[size_t(j)] - pb[size_t(j)]);
      if (d > out.max_position_m) out.max_position_m = d, out.max_position_frame = f, out.max_position_joint = a.skeleton().names[size_t(j)];
    }
  }
}

}  // namespace

DatabaseDifference compare_databases(const Database& a, const Database& b, int queries) {
  check_comparable(a, b);
  DatabaseDifference out;
  out.frames = a.frame_count();
  compare_positions(a, b, out);
  const int dims = a.schema().dims;
  for (int f = 0; f < a.frame_count(); ++f) {
    for (int d = 0; d < dims; ++d) out.max_feature = std::max(out.max_feature, std::fabs(a.features(f)[d] - b.features(f)[d]));
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> frame(0, a.frame_count() - 1);
  std::vector<float> qa(static_cast<size_t>(dims)), qb(static_cast<size_t>(dims));
  for (out.queries = 0; out.queries < queries; ++out.queries) {
    const int f = frame(rng), g = frame(rng);
    for (int d = 0; d < dims; ++d) {
      qa[size_t(d)] = 0.5f * (a.features(f)[d] + a.features(g)[d]);
      qb[size_t(d)] = 0.5f * (b.features(f)[d] + b.features(g)[d]);
    }
    const int in_a = nearest_frame(a, qa), in_b = nearest_frame(b, qb);
    out.same_nearest += in_a == in_b ? 1 : 0;
    out.max_cost_gap = std::max(out.max_cost_gap, cost(a, in_b, qa) - cost(a, in_a, qa));
  }
  return out;
}

}  // namespace lmm::pipeline
