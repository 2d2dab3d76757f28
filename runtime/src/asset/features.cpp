#include "lmm/asset/features.hpp"

#include <algorithm>

namespace lmm {
namespace {

const struct {
  FeatureKind kind;
  const char* name;
} kKindNames[] = {
    {FeatureKind::BonePosition, "bone_position"},
    {FeatureKind::BoneVelocity, "bone_velocity"},
    {FeatureKind::TrajectoryPosition, "trajectory_position"},
    {FeatureKind::TrajectoryDirection, "trajectory_direction"},
    {FeatureKind::Phase, "phase"},
};

bool is_bone_kind(FeatureKind kind) { return kind == FeatureKind::BonePosition || kind == FeatureKind::BoneVelocity; }

}  // namespace

const char* feature_kind_name(FeatureKind kind) {
  for (const auto& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "";
}

bool is_trajectory_kind(FeatureKind kind) {
  return kind == FeatureKind::TrajectoryPosition || kind == FeatureKind::TrajectoryDirection;
}

bool parse_feature_kind(const std::string& name, FeatureKind& kind) {
  for (const auto& k : kKindNames) {
    if (name == k.name) {
      kind = k.kind;
      return true;
    }
  }
  return false;
}

int feature_group_dims(const FeatureGroup& group) {
  return static_cast<int>(group.items.size()) * (is_bone_kind(group.kind) ? 3 : 2);
}

namespace {

// "" when `item` is a valid item of `g`, else why not.
std::string item_error(const FeatureGroup& g, int item, int joint_count) {
  if (is_bone_kind(g.kind) && (item < 0 || item >= joint_count)) {
    return "joint index " + std::to_string(item) + " out of range";
  }
  if (is_trajectory_kind(g.kind) && (item < -kMaxTrajectoryOffsetFrames || item > kMaxTrajectoryOffsetFrames)) {
    return "frame offset " + std::to_string(item) + " outside [-" + std::to_string(kMaxTrajectoryOffsetFrames) + ", " +
           std::to_string(kMaxTrajectoryOffsetFrames) + "]";
  }
  if (g.kind == FeatureKind::Phase && (item < 0 || item >= kMaxPhaseChannels)) {
    return "phase channel " + std::to_string(item) + " outside [0, " + std::to_string(kMaxPhaseChannels - 1) + "]";
  }
  return "";
}

}  // namespace

bool FeatureSchema::finalize(int joint_count, std::string& error) {
  dims = 0;
  phase_channels = 0;
  trajectory_offsets.clear();
  for (FeatureGroup& g : groups) {
    const std::string where = "feature group '" + g.name + "'";
    if (feature_kind_name(g.kind)[0] == '\0') {
      error = where + ": unknown kind " + std::to_string(static_cast<int>(g.kind));
      return false;
    }
    if (g.items.empty() || !(g.weight >= kMinFeatureWeight && g.weight <= kMaxFeatureWeight)) {
      error = where + ": needs at least one item and a weight in [" + std::to_string(kMinFeatureWeight) + ", " +
              std::to_string(kMaxFeatureWeight) + "] (has " + std::to_string(g.weight) + ")";
      return false;
    }
    for (int item : g.items) {
      const std::string bad = item_error(g, item, joint_count);
      if (!bad.empty()) {
        error = where + ": " + bad;
        return false;
      }
      if (is_trajectory_kind(g.kind)) trajectory_offsets.push_back(item);
      if (g.kind == FeatureKind::Phase) phase_channels = std::max(phase_channels, item + 1);
    }
    g.first_dim = dims;
    dims += feature_group_dims(g);
    if (dims > kMaxFeatureDims) {
      error = where + ": the schema exceeds " + std::to_string(kMaxFeatureDims) + " feature dimensions";
      return false;
    }
  }
  std::sort(trajectory_offsets.begin(), trajectory_offsets.end());
  trajectory_offsets.erase(std::unique(trajectory_offsets.begin(), trajectory_offsets.end()), trajectory_offsets.end());
  for (FeatureGroup& g : groups) {
    g.sample_indices.clear();
    if (!is_trajectory_kind(g.kind)) continue;
    for (int item : g.items) {
      const auto it = std::lower_bound(trajectory_offsets.begin(), trajectory_offsets.end(), item);
      g.sample_indices.push_back(static_cast<int>(it - trajectory_offsets.begin()));
    }
  }
  return true;
}

namespace {

// Item i of group g in character space (`root`), before dropping y for trajectory kinds.
Vec3 feature_item(const FeatureGroup& g, size_t i, const Vec3* positions, const Vec3* velocities,
                  const RootSample& root, const RootSample* trajectory) {
  switch (g.kind) {
    case FeatureKind::BonePosition: return inverse_rotate(root.rotation, positions[g.items[i]] - root.position);
    case FeatureKind::BoneVelocity: return inverse_rotate(root.rotation, velocities[g.items[i]]);
    case FeatureKind::TrajectoryPosition:
      return inverse_rotate(root.rotation, trajectory[g.sample_indices[i]].position - root.position);
    case FeatureKind::TrajectoryDirection:
      return inverse_rotate(root.rotation, rotate(trajectory[g.sample_indices[i]].rotation, Vec3{0, 0, 1}));
    case FeatureKind::Phase:  // written by write_phase_features
      break;
  }
  return Vec3{};
}

// Writes group g's dims into out + g.first_dim.
void write_group(const FeatureGroup& g, const Vec3* positions, const Vec3* velocities, const RootSample& root,
                 const RootSample* trajectory, float* out) {
  float* o = out + g.first_dim;
  for (size_t i = 0; i < g.items.size(); ++i) {
    const Vec3 v = feature_item(g, i, positions, velocities, root, trajectory);
    *o++ = v.x;
    if (is_bone_kind(g.kind)) *o++ = v.y;
    *o++ = v.z;
  }
}

}  // namespace

void compute_features(const FeatureSchema& schema, const Vec3* positions, const Vec3* velocities,
                      const RootSample& root, const RootSample* trajectory, float* out) {
  for (const FeatureGroup& g : schema.groups) {
    if (g.kind != FeatureKind::Phase) write_group(g, positions, velocities, root, trajectory, out);
  }
}

void write_phase_features(const FeatureSchema& schema, const float* phase, float* out) {
  for (const FeatureGroup& g : schema.groups) {
    if (g.kind != FeatureKind::Phase) continue;
    float* o = out + g.first_dim;
    for (int channel : g.items) {
      *o++ = phase[2 * channel];
      *o++ = phase[2 * channel + 1];
    }
  }
}

void compute_trajectory_features(const FeatureSchema& schema, const RootSample& root, const RootSample* trajectory,
                                 const float* offset, const float* scale, float* out) {
  for (const FeatureGroup& g : schema.groups) {
    if (!is_trajectory_kind(g.kind)) continue;
    write_group(g, nullptr, nullptr, root, trajectory, out);
    const int first = g.first_dim;
    normalize_features(out + first, offset + first, scale + first, feature_group_dims(g));
  }
}

void trajectory_from_features(const FeatureSchema& schema, const float* features, const float* offset,
                              const float* scale, const RootSample& root, Vec3* positions, Vec3* directions) {
  const size_t samples = schema.trajectory_offsets.size();
  for (size_t m = 0; m < samples; ++m) positions[m] = root.position, directions[m] = Vec3{};
  for (const FeatureGroup& g : schema.groups) {
    if (!is_trajectory_kind(g.kind)) continue;
    for (size_t i = 0; i < g.items.size(); ++i) {
      const int x = g.first_dim + 2 * int(i), z = x + 1;
      const Vec3 local{features[x] * scale[x] + offset[x], 0.0f, features[z] * scale[z] + offset[z]};
      const Vec3 world = rotate(root.rotation, local);
      const size_t m = size_t(g.sample_indices[i]);
      if (g.kind == FeatureKind::TrajectoryPosition)
        positions[m] = root.position + world;
      else
        directions[m] = normalize(world);
    }
  }
}

void PoseScratch::resize(int joints) {
  positions.resize(size_t(joints));
  velocities.resize(size_t(joints));
  angular_velocities.resize(size_t(joints));
  rotations.resize(size_t(joints));
}

void features_from_local_pose(const FeatureSchema& schema, const int* parents, int joints, const Vec3* local_positions,
                              const Quat* local_rotations, const Vec3* local_velocities,
                              const Vec3* local_angular_velocities, const RootSample* trajectory, PoseScratch& scratch,
                              float* out) {
  forward_kinematics_velocity(parents, joints, local_positions, local_rotations, local_velocities,
                              local_angular_velocities, scratch.positions.data(), scratch.rotations.data(),
                              scratch.velocities.data(), scratch.angular_velocities.data());
  const RootSample root{scratch.positions[0], scratch.rotations[0]};
  compute_features(schema, scratch.positions.data(), scratch.velocities.data(), root, trajectory, out);
}

void normalize_features(float* features, const float* offset, const float* scale, int dims) {
  for (int i = 0; i < dims; ++i) features[i] = (features[i] - offset[i]) / scale[i];
}

}  // namespace lmm
