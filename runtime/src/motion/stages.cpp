#include "lmm/motion/stages.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/asset/skeleton.hpp"

namespace lmm {
namespace {

template <typename T>
bool sized(Span<T> span, size_t size) {
  return span.data != nullptr && span.size == size;
}

}  // namespace

bool QueryJob::validate() const {
  if (schema == nullptr) return false;
  const size_t dims = size_t(schema->dims);
  const bool overlaps = static_cast<const void*>(query.data) == static_cast<const void*>(trajectory.data);
  return sized(offset, dims) && sized(scale, dims) && sized(pose_features, dims) && sized(query, dims) &&
         sized(trajectory, schema->trajectory_offsets.size()) && !overlaps;
}

bool QueryJob::run() const {
  if (!validate()) return false;
  if (pose_features.data != query.data) std::copy(pose_features.data, pose_features.data + query.size, query.data);
  compute_trajectory_features(*schema, root, trajectory.data, offset.data, scale.data, query.data);
  return true;
}

QueryJob query_job_for(const Database& db) {
  QueryJob job;
  job.schema = &db.schema();
  job.offset = Span<const float>(db.feature_offset(), size_t(db.schema().dims));
  job.scale = Span<const float>(db.feature_scale(), size_t(db.schema().dims));
  return job;
}

QueryJob query_job_for(const Model& model) {
  QueryJob job;
  job.schema = &model.schema();
  job.offset = Span<const float>(model.feature_offset(), size_t(model.feature_dims()));
  job.scale = Span<const float>(model.feature_scale(), size_t(model.feature_dims()));
  return job;
}

bool SearchMatchJob::validate() const {
  return index != nullptr && index->database() != nullptr && sized(query, size_t(index->dims())) &&
         scratch != nullptr && result != nullptr;
}

bool SearchMatchJob::run() const {
  if (!validate()) return false;
  *result = SearchResult{};
  return index->search(query.data, current_frame, params, result, 1, *scratch) > 0;
}

bool ProjectMatchJob::validate() const {
  if (evaluator == nullptr || evaluator->model() == nullptr) return false;
  const Model& model = *evaluator->model();
  return sized(query, size_t(model.projector_input_size())) && sized(state, size_t(model.state_size()));
}

bool ProjectMatchJob::run() const {
  return validate() && evaluator->project(query.data, state.data) && all_finite(state.data, state.size);
}

bool ForwardKinematicsJob::validate() const {
  const size_t n = parents.size;
  if (parents.data == nullptr || !sized(local_positions, n) || !sized(local_rotations, n) ||
      !sized(global_positions, n) || !sized(global_rotations, n)) {
    return false;
  }
  for (size_t j = 0; j < n; ++j) {
    if (parents[j] >= int(j) || parents[j] < -1) return false;
  }
  return true;
}

bool ForwardKinematicsJob::run() const {
  if (!validate()) return false;
  forward_kinematics(parents.data, int(parents.size), local_positions.data, local_rotations.data, global_positions.data,
                     global_rotations.data);
  return true;
}

}  // namespace lmm
