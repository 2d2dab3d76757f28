// Motion database (*.mmdb): skeleton, clips (ranges), per-frame local pose and velocities,
// contacts, simulation bone (joint 0) and normalised matching features, read in place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/asset/frame_annotations.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/asset/speed_profile.hpp"
#include "lmm/core/math.hpp"

namespace lmm {

constexpr char kDatabaseKind[5] = "MMDB";       // blob kind tag of motion databases
constexpr uint32_t kDatabaseVersion = 3;        // current version (2: phase.values and the phase kind; 3: annotations)
constexpr uint32_t kOldestDatabaseVersion = 1;  // oldest version the loader reads

// Limits the loader enforces on joint data (every frame, every joint): positions in metres,
// speeds in m/s and rad/s, rotation norms. Anything beyond is a corrupt or mis-scaled file.
constexpr float kMaxJointPosition = 1.0e5f;       // 100 km from the parent joint or origin
constexpr float kMaxJointSpeed = 1.0e4f;          // m/s
constexpr float kMaxJointAngularSpeed = 1.0e5f;   // rad/s
constexpr float kMaxRotationNormError = 1.0e-3f;  // | |q|^2 - 1 | of stored rotations

// One clip: frames [start, stop) of the database.
struct DatabaseRange {
  int start = 0;
  int stop = 0;
  bool mirrored = false;
  std::string name;
};

// Tensor names of the database format (shared by the writer and the reader).
namespace db_tensor {
constexpr const char* kFps = "meta.fps";
constexpr const char* kUnitScale = "meta.unit_scale";  // optional: metres per unit of the source BVH files
constexpr const char* kJointNames = "skeleton.names";
constexpr const char* kParents = "skeleton.parents";
constexpr const char* kOffsets = "skeleton.offsets";
constexpr const char* kRoles = "skeleton.roles";
constexpr const char* kRangeNames = "ranges.names";
constexpr const char* kRangeStart = "ranges.start";
constexpr const char* kRangeStop = "ranges.stop";
constexpr const char* kRangeMirrored = "ranges.mirrored";
constexpr const char* kPositions = "bones.positions";
constexpr const char* kRotations = "bones.rotations";
constexpr const char* kVelocities = "bones.velocities";
constexpr const char* kAngularVelocities = "bones.angular_velocities";
constexpr const char* kContactJoints = "contacts.joints";
constexpr const char* kContacts = "contacts.states";
constexpr const char* kFeatures = "features.values";
constexpr const char* kFeatureOffset = "features.offset";
constexpr const char* kFeatureScale = "features.scale";
constexpr const char* kSchemaName = "features.schema_name";
constexpr const char* kGroupNames = "features.group_names";
constexpr const char* kGroupKind = "features.group_kind";
constexpr const char* kGroupWeight = "features.group_weight";
constexpr const char* kGroupItemCount = "features.group_item_count";
constexpr const char* kGroupItems = "features.group_items";
constexpr const char* kPhase = "phase.values";  // optional: each frame's phase embedding
}  // namespace db_tensor

// A loaded, validated motion database: an immutable asset, created only by the factories below
// and shared by whatever uses it (search indexes and characters hold the shared_ptr), so it
// can be neither reloaded, moved nor freed under a user. Safe to share between threads.
class Database {
 public:
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&&) = delete;
  Database& operator=(Database&&) = delete;

  // Reads and validates `path`; nullptr with a message naming the file on failure.
  static std::shared_ptr<const Database> load_file(const std::string& path, std::string& error);
  // Validates and reads in place a caller-owned buffer (16-byte aligned, e.g. a memory map)
  // that must stay valid and unchanged as long as the returned database (or any copy of the
  // pointer) lives; nullptr with a message on failure.
  static std::shared_ptr<const Database> load_buffer(const uint8_t* data, size_t size, std::string& error);

  // Identity of this asset: unique in the process (from 1), assigned at load.
  uint64_t id() const { return id_; }

  // Number of frames.
  int frame_count() const { return frames_; }
  // Number of joints (joint 0 is the simulation bone).
  int joint_count() const { return skeleton_.joint_count(); }
  // Frames per second.
  float fps() const { return fps_; }
  // Metres per unit of the BVH files the database was imported from (the skeleton config's
  // unit_scale); 0 for databases written before meta.unit_scale existed.
  float source_unit_scale() const { return source_unit_scale_; }
  // Joint hierarchy and rest offsets.
  const Skeleton& skeleton() const { return skeleton_; }
  // Named joint roles (e.g. "hips", "left_foot") and their joint indices.
  const std::vector<std::pair<std::string, int>>& roles() const { return roles_; }
  // Joint index of a role, or -1.
  int role(const std::string& name) const;
  // Clips in frame order.
  const std::vector<DatabaseRange>& ranges() const { return ranges_; }
  // Walk and run speeds of the data, measured at load from the root velocities of every frame.
  const SpeedProfile& speeds() const { return speeds_; }
  // Matching feature schema.
  const FeatureSchema& schema() const { return schema_; }
  // Local joint positions of `frame` (joint_count entries).
  const Vec3* positions(int frame) const { return positions_ + size_t(frame) * joint_count(); }
  // Local joint rotations of `frame`.
  const Quat* rotations(int frame) const { return rotations_ + size_t(frame) * joint_count(); }
  // Local joint velocities of `frame` (parent frame, m/s).
  const Vec3* velocities(int frame) const { return velocities_ + size_t(frame) * joint_count(); }
  // Local joint angular velocities of `frame` (parent frame, rad/s).
  const Vec3* angular_velocities(int frame) const { return angular_velocities_ + size_t(frame) * joint_count(); }
  // Joints that carry contact labels.
  const std::vector<int>& contact_joints() const { return contact_joints_; }
  // Contact states (0 / 1) of `frame`, one per contact joint.
  const uint8_t* contacts(int frame) const { return contacts_ + size_t(frame) * contact_joints_.size(); }
  // Normalised features of `frame` (schema().dims floats).
  const float* features(int frame) const { return features_ + size_t(frame) * schema_.dims; }
  // Per-dimension normalisation offset (mean).
  const float* feature_offset() const { return feature_offset_; }
  // Per-dimension normalisation scale (group std / weight).
  const float* feature_scale() const { return feature_scale_; }
  // Channels of the stored phase embedding (phase.values), 0 when the database holds none.
  int phase_channels() const { return phase_channels_; }
  // Phase embedding of `frame` (2 x phase_channels() floats: amplitude x sin, amplitude x cos
  // per channel); only when phase_channels() > 0.
  const float* phase(int frame) const { return phase_ + size_t(frame) * 2 * size_t(phase_channels_); }
  // Tags, no-entry frames, cost biases and events (empty for databases without them).
  const FrameAnnotations& annotations() const { return annotations_; }
  // The validated blob the database reads from (e.g. to copy its sections into a bundle).
  const BlobView& blob() const { return view_; }

 private:
  template <typename T>
  friend std::shared_ptr<const T> detail::load_blob_file(const std::string&, std::string&);
  template <typename T>
  friend std::shared_ptr<const T> detail::load_blob_buffer(const uint8_t*, size_t, std::string&);
  Database() = default;
  bool parse(const uint8_t* data, size_t size, std::string& error);
  bool read_ranges(std::string& error);
  bool read_frames(std::string& error);
  bool read_contacts(std::string& error);
  bool read_features(std::string& error);
  bool read_phase(std::string& error);
  void measure_root_speeds();

  AlignedBuffer owned_;
  BlobView view_;
  Skeleton skeleton_;
  std::vector<std::pair<std::string, int>> roles_;
  std::vector<DatabaseRange> ranges_;
  FeatureSchema schema_;
  std::vector<int> contact_joints_;
  SpeedProfile speeds_;
  int frames_ = 0;
  float fps_ = 0.0f;
  float source_unit_scale_ = 0.0f;
  const Vec3* positions_ = nullptr;
  const Quat* rotations_ = nullptr;
  const Vec3* velocities_ = nullptr;
  const Vec3* angular_velocities_ = nullptr;
  const uint8_t* contacts_ = nullptr;
  const float* features_ = nullptr;
  const float* feature_offset_ = nullptr;
  const float* feature_scale_ = nullptr;
  const float* phase_ = nullptr;
  int phase_channels_ = 0;
  FrameAnnotations annotations_;
  uint64_t id_ = 0;
};

// Sections shared by motion databases and model bundles (same tensor names, same checks).

// Reads meta.fps and skeleton.* of `view`; false with a message on any inconsistency.
bool read_skeleton_section(const BlobView& view, Skeleton& skeleton, std::vector<std::pair<std::string, int>>& roles,
                           float& fps, std::string& error);
// Reads the optional meta.unit_scale into `unit_scale` (0 when absent); false with a message
// when it is present but not one finite, positive f32.
bool read_source_unit_scale(const BlobView& view, float& unit_scale, std::string& error);
// Reads contacts.joints (indices below `joints`); false with a message otherwise.
bool read_contact_joints(const BlobView& view, int joints, std::vector<int>& contact_joints, std::string& error);
// Reads the features.* schema tensors, validated against `joints`.
bool read_schema_section(const BlobView& view, int joints, FeatureSchema& schema, std::string& error);
// Points `offset` / `scale` at features.offset / features.scale (`dims` finite values each,
// scales positive); false with a message otherwise.
bool read_feature_scaling(const BlobView& view, int dims, const float*& offset, const float*& scale,
                          std::string& error);

// Splits `text` at '\n' (no trailing empty entry).
std::vector<std::string> split_lines(const std::string& text);

// Per frame of `db`, the seconds left in the run of consecutive frames of its clip that hold every
// tag of `tags` and that the frame is in (0 on the run's last frame and on frames without them):
// the remaining-seconds state dimension of a learned model's action tag. Allocates.
std::vector<float> run_seconds_left(const Database& db, TagMask tags);

// Per frame of `db`, its tags among `names` as a mask with bit t for names[t] (a learned model's
// tags, e.g.); false with a message naming the first tag the database lacks. Allocates.
bool frame_tags_over(const Database& db, const std::vector<std::string>& names, std::vector<TagMask>& masks,
                     std::string& error);

// Index of the clip (range) of `db` that holds `frame` (a frame in range).
int clip_index(const Database& db, int frame);

}  // namespace lmm
