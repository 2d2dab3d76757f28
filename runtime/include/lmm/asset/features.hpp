// Motion-matching feature schema and feature computation. The offline importer and the runtime
// query both call compute_features, so database features and queries cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/asset/skeleton.hpp"
#include "lmm/core/math.hpp"

namespace lmm {

// What a feature group measures. Values are stored in database files and never renumbered.
enum class FeatureKind : int32_t {
  BonePosition = 1,         // 3 dims per bone, character space
  BoneVelocity = 2,         // 3 dims per bone, character space
  TrajectoryPosition = 3,   // 2 dims (x, z) per time offset, character space
  TrajectoryDirection = 4,  // 2 dims (x, z) of the facing direction per time offset
  Phase = 5,                // 2 dims per channel of the frame's phase embedding (amplitude x sin, x cos)
};

// Human-readable name of a kind ("bone_position", ...), or "" for an unknown value.
const char* feature_kind_name(FeatureKind kind);
// Parses a kind name; false when unknown.
bool parse_feature_kind(const std::string& name, FeatureKind& kind);
// True for the kinds a controller writes into a query (trajectory position and direction); the
// others are pose kinds, which a query takes from the playing frame or the learned state.
bool is_trajectory_kind(FeatureKind kind);

// Schema limits checked by FeatureSchema::finalize (and so by the importer and every loader).
constexpr int kMaxFeatureDims = 4096;                // total dims of a schema
constexpr int kMaxTrajectoryOffsetFrames = 1 << 20;  // |frame offset| of a trajectory sample
constexpr int kMaxPhaseChannels = 64;                // phase channels a phase group may read
constexpr float kMinFeatureWeight = 1.0e-6f;         // group weights lie in [min, max]
constexpr float kMaxFeatureWeight = 1.0e6f;

// One normalisation group: its features share one scale (basic motion matching, normalize_feature).
struct FeatureGroup {
  std::string name;
  FeatureKind kind = FeatureKind::BonePosition;
  std::vector<int> items;  // joint indices (bone kinds), frame offsets (trajectory kinds) or phase channels
  float weight = 1.0f;
  int first_dim = 0;                // set by FeatureSchema::finalize
  std::vector<int> sample_indices;  // trajectory kinds: index into trajectory_offsets
};

// An ordered list of feature groups.
struct FeatureSchema {
  std::string name;
  std::vector<FeatureGroup> groups;
  int dims = 0;                         // total feature dimensions (after finalize)
  std::vector<int> trajectory_offsets;  // sorted unique frame offsets (after finalize)
  int phase_channels = 0;               // 1 + the largest channel a phase group reads, 0 without (after finalize)

  // Checks items against `joint_count` and the limits above, assigns dims and sample indices.
  // False with a message naming the group on an empty group, a bad joint index, offset or phase
  // channel (in [0, kMaxPhaseChannels)), a weight out of range or too many dims.
  bool finalize(int joint_count, std::string& error);
};

// Number of dimensions a group contributes.
int feature_group_dims(const FeatureGroup& group);

// Root state used for trajectory features: position on the ground and facing rotation.
struct RootSample {
  Vec3 position;
  Quat rotation;
};

// Writes the raw (unnormalised) feature vector of one frame into `out` (schema.dims floats),
// except the phase groups' dims, which it leaves as they are (write_phase_features fills them).
// `positions` / `velocities` are global joint data; `root` defines character space;
// `trajectory` holds one root sample per schema.trajectory_offsets entry. No allocation.
void compute_features(const FeatureSchema& schema, const Vec3* positions, const Vec3* velocities,
                      const RootSample& root, const RootSample* trajectory, float* out);

// Writes the raw phase groups' dims of `out` from one frame's phase embedding `phase`
// (2 x schema.phase_channels floats: amplitude x sin, amplitude x cos of channel 0, then 1, ...).
void write_phase_features(const FeatureSchema& schema, const float* phase, float* out);

// Writes only the trajectory groups' dims of `out`, normalised with `offset` / `scale` (the
// schema's normalisation): the part of a query that comes from the controller. No allocation.
void compute_trajectory_features(const FeatureSchema& schema, const RootSample& root, const RootSample* trajectory,
                                 const float* offset, const float* scale, float* out);

// The world-space trajectory that normalised features `features` (with `offset` / `scale`, the
// schema's normalisation) describe for a character whose root is `root`: per schema trajectory
// offset, the ground position of its trajectory-position item and the unit facing direction of its
// trajectory-direction item. A sample no position group covers stays at root.position, one no
// direction group covers gets (0, 0, 0). The inverse of compute_trajectory_features; no allocation.
void trajectory_from_features(const FeatureSchema& schema, const float* features, const float* offset,
                              const float* scale, const RootSample& root, Vec3* positions, Vec3* directions);

// Scratch buffers of features_from_local_pose, sized once per skeleton (one per thread).
struct PoseScratch {
  std::vector<Vec3> positions, velocities, angular_velocities;
  std::vector<Quat> rotations;

  // Sizes every buffer for `joints` joints (allocates; call outside per-frame code).
  void resize(int joints);
};

// Raw features of a local pose (joint 0 = simulation bone, defining character space):
// velocity forward kinematics into `scratch`, then compute_features. No allocation when
// `scratch` was sized for `joints`.
void features_from_local_pose(const FeatureSchema& schema, const int* parents, int joints, const Vec3* local_positions,
                              const Quat* local_rotations, const Vec3* local_velocities,
                              const Vec3* local_angular_velocities, const RootSample* trajectory, PoseScratch& scratch,
                              float* out);

// In place: features[i] = (features[i] - offset[i]) / scale[i] for `dims` values.
void normalize_features(float* features, const float* offset, const float* scale, int dims);

}  // namespace lmm
