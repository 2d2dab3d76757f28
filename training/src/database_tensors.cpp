#include "lmm/training/database_tensors.hpp"

namespace lmm::training {
namespace {

// A float tensor of `shape` copied from `data`.
torch::Tensor copy_floats(const float* data, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat32).clone();
}

}  // namespace

DatabaseTensors to_tensors(const Database& db) {
  const int64_t n = db.frame_count(), j = db.joint_count();
  const int64_t c = static_cast<int64_t>(db.contact_joints().size());
  DatabaseTensors t;
  t.positions = copy_floats(&db.positions(0)->x, {n, j, 3});
  t.rotations = copy_floats(&db.rotations(0)->w, {n, j, 4});
  t.velocities = copy_floats(&db.velocities(0)->x, {n, j, 3});
  t.angular_velocities = copy_floats(&db.angular_velocities(0)->x, {n, j, 3});
  t.features = copy_floats(db.features(0), {n, db.schema().dims});
  t.contacts = torch::from_blob(const_cast<uint8_t*>(db.contacts(0)), {n, c}, torch::kUInt8)
                   .to(torch::kFloat32);
  std::vector<int64_t> starts, stops;
  for (const DatabaseRange& r : db.ranges()) {
    starts.push_back(r.start);
    stops.push_back(r.stop);
  }
  t.range_starts = torch::tensor(starts, torch::kInt64);
  t.range_stops = torch::tensor(stops, torch::kInt64);
  return t;
}

}  // namespace lmm::training
