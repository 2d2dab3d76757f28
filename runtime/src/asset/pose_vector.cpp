#include "lmm/asset/pose_vector.hpp"

#include <cmath>

#include "lmm/core/rotation_6d.hpp"

namespace lmm {
namespace {

bool near(float a, float b, float tolerance) { return std::fabs(a - b) <= tolerance; }

bool skeletons_match(const Skeleton& m, const Skeleton& d, std::string& error) {
  if (m.joint_count() != d.joint_count()) {
    error = "skeleton: model has " + std::to_string(m.joint_count()) + " joints, database has " +
            std::to_string(d.joint_count());
    return false;
  }
  for (int j = 0; j < m.joint_count(); ++j) {
    const size_t i = size_t(j);
    const std::string where = "skeleton joint " + std::to_string(j) + " ('" + d.names[i] + "'): ";
    if (m.names[i] != d.names[i]) {
      error =
          "skeleton joint " + std::to_string(j) + ": model has '" + m.names[i] + "', database has '" + d.names[i] + "'";
      return false;
    }
    if (m.parents[i] != d.parents[i]) {
      error = where + "parent differs (model " + std::to_string(m.parents[i]) + ", database " +
              std::to_string(d.parents[i]) + ")";
      return false;
    }
    const Vec3 a = m.offsets[i], b = d.offsets[i];
    if (!near(a.x, b.x, 1e-3f) || !near(a.y, b.y, 1e-3f) || !near(a.z, b.z, 1e-3f)) {
      error = where + "rest offset differs by more than 1 mm";
      return false;
    }
  }
  return true;
}

bool groups_match(const FeatureGroup& m, const FeatureGroup& d, std::string& error) {
  const std::string where = "feature group '" + d.name + "': ";
  if (m.name != d.name || m.kind != d.kind) {
    error = where + "model has '" + m.name + "' (" + feature_kind_name(m.kind) + "), database has '" + d.name + "' (" +
            feature_kind_name(d.kind) + ")";
    return false;
  }
  if (m.items != d.items) {
    error = where + "joints or time offsets differ";
    return false;
  }
  if (!near(m.weight, d.weight, 1e-6f)) {
    error =
        where + "weight differs (model " + std::to_string(m.weight) + ", database " + std::to_string(d.weight) + ")";
    return false;
  }
  return true;
}

bool schemas_match(const Model& model, const Database& db, std::string& error) {
  const FeatureSchema& m = model.schema();
  const FeatureSchema& d = db.schema();
  if (m.name != d.name || m.groups.size() != d.groups.size() || m.dims != d.dims) {
    error = "feature schema: model has '" + m.name + "' (" + std::to_string(m.groups.size()) + " groups, " +
            std::to_string(m.dims) + " dims), database has '" + d.name + "' (" + std::to_string(d.groups.size()) +
            " groups, " + std::to_string(d.dims) + " dims)";
    return false;
  }
  for (size_t g = 0; g < m.groups.size(); ++g) {
    if (!groups_match(m.groups[g], d.groups[g], error)) return false;
  }
  for (int i = 0; i < m.dims; ++i) {
    const float mo = model.feature_offset()[i], ms = model.feature_scale()[i];
    const float dof = db.feature_offset()[i], ds = db.feature_scale()[i];
    if (!near(mo, dof, 1e-3f * std::max(1.0f, std::fabs(ds))) || !near(ms, ds, 1e-3f * std::fabs(ds))) {
      error = "feature normalisation differs at dim " + std::to_string(i) +
              " (was the database imported from other data or with other settings?)";
      return false;
    }
  }
  return true;
}

}  // namespace

bool model_matches_database(const Model& model, const Database& db, std::string& error) {
  if (!skeletons_match(model.skeleton(), db.skeleton(), error)) return false;
  if (model.contact_joints() != db.contact_joints()) {
    error = "contact joints differ (model " + std::to_string(model.contact_joints().size()) + ", database " +
            std::to_string(db.contact_joints().size()) + ")";
    return false;
  }
  if (!near(model.fps(), db.fps(), 1e-3f)) {
    error = "frame rate: model " + std::to_string(model.fps()) + " fps, database " + std::to_string(db.fps()) + " fps";
    return false;
  }
  return schemas_match(model, db, error);
}

PoseVectorLayout pose_layout_of(const Database& db) {
  PoseVectorLayout layout;
  layout.joints = db.joint_count() - 1;
  layout.contacts = static_cast<int>(db.contact_joints().size());
  return layout;
}

void database_pose_vector(const Database& db, int frame, float* out) {
  const PoseVectorLayout l = pose_layout_of(db);
  const Vec3* positions = db.positions(frame);
  const Quat* rotations = db.rotations(frame);
  for (int j = 0; j < l.joints; ++j) {
    const Vec3 p = positions[j + 1];
    float* position = out + l.positions() + 3 * j;
    position[0] = p.x, position[1] = p.y, position[2] = p.z;
    quat_to_6d(rotations[j + 1], out + l.rotations() + 6 * j);
  }
  const Quat root = rotations[0];
  const Vec3 v = inverse_rotate(root, db.velocities(frame)[0]);
  const Vec3 w = inverse_rotate(root, db.angular_velocities(frame)[0]);
  const float root_motion[6] = {v.x, v.y, v.z, w.x, w.y, w.z};
  for (int i = 0; i < 6; ++i) out[l.root_velocity() + i] = root_motion[i];
  for (int c = 0; c < l.contacts; ++c) out[l.contact() + c] = db.contacts(frame)[c] ? 1.0f : 0.0f;
}

Vec3 pose_root_velocity(const PoseVectorLayout& layout, const float* pose) {
  return vec3_at(pose + layout.root_velocity());
}

Vec3 pose_root_angular_velocity(const PoseVectorLayout& layout, const float* pose) {
  return vec3_at(pose + layout.root_angular());
}

}  // namespace lmm
