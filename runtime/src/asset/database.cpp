#include "lmm/asset/database.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace lmm {
namespace {

static_assert(sizeof(Vec3) == 3 * sizeof(float), "Vec3 must be three packed floats");
static_assert(sizeof(Quat) == 4 * sizeof(float), "Quat must be four packed floats");

// Index of the first value of `v` (n floats) that is not finite or exceeds `limit` in magnitude,
// or -1 when all are in range.
int64_t first_out_of_range(const float* v, uint64_t n, float limit) {
  for (uint64_t i = 0; i < n; ++i) {
    if (!(std::fabs(v[i]) <= limit)) return int64_t(i);
  }
  return -1;
}

// Index of the first quaternion of `q` (n of them) that is not of unit length within
// kMaxRotationNormError, or -1.
int64_t first_non_unit(const Quat* q, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const float norm2 = q[i].w * q[i].w + q[i].x * q[i].x + q[i].y * q[i].y + q[i].z * q[i].z;
    if (!(std::fabs(norm2 - 1.0f) <= kMaxRotationNormError)) return int64_t(i);
  }
  return -1;
}

// "tensor NAME: frame F, joint J ('NAME')" for flat element `index` of a [frames, joints, width] tensor.
std::string joint_value_location(const char* tensor, int64_t index, int width, const Skeleton& skeleton) {
  const int64_t item = index / width;
  const int joint = int(item % skeleton.joint_count());
  return std::string(tensor) + ": frame " + std::to_string(item / skeleton.joint_count()) + ", joint " +
         std::to_string(joint) + " ('" + skeleton.names[size_t(joint)] + "')";
}

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<float> run_seconds_left(const Database& db, TagMask tags) {
  std::vector<float> left(size_t(db.frame_count()), 0.0f);
  const FrameAnnotations& a = db.annotations();
  const auto holds = [&](int f) { return tags != 0 && (a.tags(f) & tags) == tags; };
  for (const DatabaseRange& r : db.ranges()) {  // backwards: each frame's run ends where the next one's does
    for (int f = r.stop - 2; f >= r.start; --f) {
      if (holds(f) && holds(f + 1)) left[size_t(f)] = left[size_t(f) + 1] + 1.0f / db.fps();
    }
  }
  return left;
}

bool frame_tags_over(const Database& db, const std::vector<std::string>& names, std::vector<TagMask>& masks,
                     std::string& error) {
  const FrameAnnotations& a = db.annotations();
  std::vector<int> bits;
  for (const std::string& name : names) {
    TagMask known = 0;
    if (!a.tag_mask(name, known, error)) return false;
    bits.push_back(a.tag(name));
  }
  masks.assign(size_t(db.frame_count()), 0);
  for (int f = 0; f < db.frame_count(); ++f) {
    for (size_t t = 0; t < bits.size(); ++t) masks[size_t(f)] |= (a.tags(f) >> bits[t] & 1) << t;
  }
  return true;
}

std::shared_ptr<const Database> Database::load_file(const std::string& path, std::string& error) {
  return detail::load_blob_file<Database>(path, error);
}

std::shared_ptr<const Database> Database::load_buffer(const uint8_t* data, size_t size, std::string& error) {
  return detail::load_blob_buffer<Database>(data, size, error);
}

bool Database::parse(const uint8_t* data, size_t size, std::string& error) {
  if (!view_.open(data, size, kDatabaseKind, kOldestDatabaseVersion, kDatabaseVersion, error)) {
    return false;
  }
  return read_skeleton_section(view_, skeleton_, roles_, fps_, error) &&
         read_source_unit_scale(view_, source_unit_scale_, error) && read_ranges(error) && read_frames(error) &&
         read_contact_joints(view_, joint_count(), contact_joints_, error) && read_contacts(error) &&
         read_schema_section(view_, joint_count(), schema_, error) && read_features(error) && read_phase(error) &&
         annotations_.read(view_, frames_, error) && (measure_root_speeds(), true);
}

void Database::measure_root_speeds() {
  std::vector<Vec3> local(static_cast<size_t>(frames_));
  for (int f = 0; f < frames_; ++f) local[size_t(f)] = inverse_rotate(rotations(f)[0], velocities(f)[0]);
  speeds_ = measure_speeds(local.data(), frames_);
}

int Database::role(const std::string& name) const {
  for (const auto& r : roles_) {
    if (r.first == name) return r.second;
  }
  return -1;
}

bool read_skeleton_section(const BlobView& view, Skeleton& skeleton,
                           std::vector<std::pair<std::string, int>>& roles_out, float& fps_out, std::string& error) {
  const TensorView* fps = view.require_shape(db_tensor::kFps, DType::F32, {1}, error);
  const TensorView* parents = fps ? view.require_shape(db_tensor::kParents, DType::I32, {kAnyDim}, error) : nullptr;
  if (parents == nullptr) return false;
  const int64_t joints = int64_t(parents->dims[0]);
  const TensorView* offsets = view.require_shape(db_tensor::kOffsets, DType::F32, {joints, 3}, error);
  const TensorView* names = offsets ? view.require_shape(db_tensor::kJointNames, DType::U8, {kAnyDim}, error) : nullptr;
  const TensorView* roles = names ? view.require_shape(db_tensor::kRoles, DType::U8, {kAnyDim}, error) : nullptr;
  if (roles == nullptr) return false;
  fps_out = fps->f32()[0];
  if (!(fps_out > 0.0f && fps_out < 10000.0f)) {
    error = "frame rate " + std::to_string(fps_out) + " is not valid";
    return false;
  }
  skeleton.names = split_lines(names->text());
  skeleton.parents.assign(parents->i32(), parents->i32() + joints);
  const Vec3* o = reinterpret_cast<const Vec3*>(offsets->f32());
  skeleton.offsets.assign(o, o + joints);
  if (!skeleton.validate(error)) return false;
  roles_out.clear();
  for (const std::string& line : split_lines(roles->text())) {
    const size_t eq = line.find('=');
    int joint = -1;
    if (eq != std::string::npos) {
      const auto r = std::from_chars(line.data() + eq + 1, line.data() + line.size(), joint);
      if (r.ec != std::errc() || r.ptr != line.data() + line.size()) joint = -1;
    }
    if (joint < 0 || joint >= joints) {
      error = "bad role entry '" + line + "'";
      return false;
    }
    roles_out.emplace_back(line.substr(0, eq), joint);
  }
  return true;
}

bool read_source_unit_scale(const BlobView& view, float& unit_scale, std::string& error) {
  unit_scale = 0.0f;
  if (view.find(db_tensor::kUnitScale) == nullptr) return true;
  const TensorView* t = view.require_shape(db_tensor::kUnitScale, DType::F32, {1}, error);
  if (t == nullptr) return false;
  if (!(std::isfinite(t->f32()[0]) && t->f32()[0] > 0.0f)) {
    error = std::string(db_tensor::kUnitScale) + " " + std::to_string(t->f32()[0]) + " is not a positive number";
    return false;
  }
  unit_scale = t->f32()[0];
  return true;
}

bool Database::read_ranges(std::string& error) {
  const TensorView* start = view_.require_shape(db_tensor::kRangeStart, DType::I32, {kAnyDim}, error);
  if (start == nullptr) return false;
  const int64_t count = int64_t(start->dims[0]);
  const TensorView* stop = view_.require_shape(db_tensor::kRangeStop, DType::I32, {count}, error);
  const TensorView* mirrored =
      stop ? view_.require_shape(db_tensor::kRangeMirrored, DType::I32, {count}, error) : nullptr;
  const TensorView* names =
      mirrored ? view_.require_shape(db_tensor::kRangeNames, DType::U8, {kAnyDim}, error) : nullptr;
  if (names == nullptr) return false;
  const std::vector<std::string> lines = split_lines(names->text());
  if (count == 0 || lines.size() != size_t(count)) {
    error = "range names do not match the range count " + std::to_string(count);
    return false;
  }
  ranges_.clear();
  int expected_start = 0;
  for (int64_t r = 0; r < count; ++r) {
    DatabaseRange range{start->i32()[r], stop->i32()[r], mirrored->i32()[r] != 0, lines[r]};
    if (range.start != expected_start || range.stop <= range.start) {
      error = "range '" + range.name + "' [" + std::to_string(range.start) + ", " + std::to_string(range.stop) +
              ") is not contiguous and non-empty";
      return false;
    }
    expected_start = range.stop;
    ranges_.push_back(std::move(range));
  }
  frames_ = expected_start;
  return true;
}

bool Database::read_frames(std::string& error) {
  const int64_t n = frames_, j = joint_count();
  const TensorView* pos = view_.require_shape(db_tensor::kPositions, DType::F32, {n, j, 3}, error);
  const TensorView* rot = pos ? view_.require_shape(db_tensor::kRotations, DType::F32, {n, j, 4}, error) : nullptr;
  const TensorView* vel = rot ? view_.require_shape(db_tensor::kVelocities, DType::F32, {n, j, 3}, error) : nullptr;
  const TensorView* ang =
      vel ? view_.require_shape(db_tensor::kAngularVelocities, DType::F32, {n, j, 3}, error) : nullptr;
  if (ang == nullptr) return false;
  struct Check {
    const TensorView* tensor;
    const char* name;
    int width;
    float limit;
  };
  for (const Check& c :
       {Check{pos, db_tensor::kPositions, 3, kMaxJointPosition}, Check{vel, db_tensor::kVelocities, 3, kMaxJointSpeed},
        Check{ang, db_tensor::kAngularVelocities, 3, kMaxJointAngularSpeed},
        Check{rot, db_tensor::kRotations, 4, 1.0f + kMaxRotationNormError}}) {
    const int64_t bad = first_out_of_range(c.tensor->f32(), c.tensor->element_count, c.limit);
    if (bad >= 0) {
      error = joint_value_location(c.name, bad, c.width, skeleton_) + " holds " + std::to_string(c.tensor->f32()[bad]) +
              ", outside [-" + std::to_string(c.limit) + ", " + std::to_string(c.limit) + "]";
      return false;
    }
  }
  const int64_t bad_rotation = first_non_unit(reinterpret_cast<const Quat*>(rot->f32()), uint64_t(n * j));
  if (bad_rotation >= 0) {
    error = joint_value_location(db_tensor::kRotations, bad_rotation * 4, 4, skeleton_) + " is not a unit quaternion";
    return false;
  }
  positions_ = reinterpret_cast<const Vec3*>(pos->f32());
  rotations_ = reinterpret_cast<const Quat*>(rot->f32());
  velocities_ = reinterpret_cast<const Vec3*>(vel->f32());
  angular_velocities_ = reinterpret_cast<const Vec3*>(ang->f32());
  return true;
}

bool Database::read_contacts(std::string& error) {
  const TensorView* contacts =
      view_.require_shape(db_tensor::kContacts, DType::U8, {frames_, int64_t(contact_joints_.size())}, error);
  if (contacts == nullptr) return false;
  for (uint64_t i = 0; i < contacts->element_count; ++i) {
    if (contacts->data[i] > 1) {
      error = std::string(db_tensor::kContacts) + ": frame " + std::to_string(i / contact_joints_.size()) +
              " holds contact state " + std::to_string(contacts->data[i]) + " (0 or 1 expected)";
      return false;
    }
  }
  contacts_ = contacts->data;
  return true;
}

bool read_contact_joints(const BlobView& view, int joints, std::vector<int>& contact_joints, std::string& error) {
  const TensorView* cj = view.require_shape(db_tensor::kContactJoints, DType::I32, {kAnyDim}, error);
  if (cj == nullptr) return false;
  contact_joints.assign(cj->i32(), cj->i32() + cj->dims[0]);
  for (int c : contact_joints) {
    if (c < 0 || c >= joints) {
      error = "contact joint index " + std::to_string(c) + " out of range";
      return false;
    }
  }
  return true;
}

bool read_schema_section(const BlobView& view, int joints, FeatureSchema& schema, std::string& error) {
  const TensorView* kind = view.require_shape(db_tensor::kGroupKind, DType::I32, {kAnyDim}, error);
  if (kind == nullptr) return false;
  const int64_t groups = int64_t(kind->dims[0]);
  const TensorView* weight = view.require_shape(db_tensor::kGroupWeight, DType::F32, {groups}, error);
  const TensorView* counts =
      weight ? view.require_shape(db_tensor::kGroupItemCount, DType::I32, {groups}, error) : nullptr;
  const TensorView* items = counts ? view.require_shape(db_tensor::kGroupItems, DType::I32, {kAnyDim}, error) : nullptr;
  const TensorView* names = items ? view.require_shape(db_tensor::kGroupNames, DType::U8, {kAnyDim}, error) : nullptr;
  const TensorView* schema_name =
      names ? view.require_shape(db_tensor::kSchemaName, DType::U8, {kAnyDim}, error) : nullptr;
  if (schema_name == nullptr) return false;
  const std::vector<std::string> group_names = split_lines(names->text());
  if (group_names.size() != size_t(groups)) {
    error = "feature group names do not match the group count";
    return false;
  }
  schema = FeatureSchema{};
  schema.name = schema_name->text();
  uint64_t next_item = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int count = counts->i32()[g];
    if (count <= 0 || next_item + uint64_t(count) > items->element_count) {
      error = "feature group '" + group_names[g] + "' has a bad item count";
      return false;
    }
    FeatureGroup group;
    group.name = group_names[g];
    group.kind = static_cast<FeatureKind>(kind->i32()[g]);
    group.weight = weight->f32()[g];
    group.items.assign(items->i32() + next_item, items->i32() + next_item + count);
    next_item += uint64_t(count);
    schema.groups.push_back(std::move(group));
  }
  if (next_item != items->element_count) {
    error = "feature group items hold " + std::to_string(items->element_count - next_item) + " unused entries";
    return false;
  }
  return schema.finalize(joints, error);
}

bool read_feature_scaling(const BlobView& view, int dims, const float*& offset_out, const float*& scale_out,
                          std::string& error) {
  const int64_t d = dims;
  const TensorView* offset = view.require_shape(db_tensor::kFeatureOffset, DType::F32, {d}, error);
  const TensorView* scale = offset ? view.require_shape(db_tensor::kFeatureScale, DType::F32, {d}, error) : nullptr;
  if (scale == nullptr) return false;
  for (int64_t i = 0; i < d; ++i) {
    if (!(scale->f32()[i] > 0.0f) || !std::isfinite(scale->f32()[i])) {
      error = "feature scale of dimension " + std::to_string(i) + " is not positive";
      return false;
    }
  }
  if (!all_finite(offset->f32(), size_t(offset->element_count))) {
    error = "feature offsets contain NaN or infinite values";
    return false;
  }
  offset_out = offset->f32();
  scale_out = scale->f32();
  return true;
}

bool Database::read_features(std::string& error) {
  const TensorView* values = view_.require_shape(db_tensor::kFeatures, DType::F32, {frames_, schema_.dims}, error);
  if (values == nullptr || !read_feature_scaling(view_, schema_.dims, feature_offset_, feature_scale_, error)) {
    return false;
  }
  if (!all_finite(values->f32(), size_t(values->element_count))) {
    error = "features contain NaN or infinite values";
    return false;
  }
  features_ = values->f32();
  return true;
}

bool Database::read_phase(std::string& error) {
  const auto phase_group = std::find_if(schema_.groups.begin(), schema_.groups.end(),
                                        [](const FeatureGroup& g) { return g.kind == FeatureKind::Phase; });
  if (view_.find(db_tensor::kPhase) == nullptr) {
    if (phase_group == schema_.groups.end()) return true;
    error = "feature group '" + phase_group->name + "' (kind phase) needs the per-frame phases, but the database " +
            "has no " + db_tensor::kPhase;
    return false;
  }
  const TensorView* phase = view_.require_shape(db_tensor::kPhase, DType::F32, {frames_, kAnyDim}, error);
  if (phase == nullptr) return false;
  // The phase groups read channels [0, phase_channels): exactly those are stored.
  const uint64_t width = phase->dims[1], wanted = 2 * uint64_t(schema_.phase_channels);
  if (wanted > 0 ? width != wanted : width % 2 != 0 || width < 2 || width > 2 * uint64_t(kMaxPhaseChannels)) {
    error = std::string(db_tensor::kPhase) + " has " + std::to_string(width) + " columns, expected " +
            (wanted > 0 ? std::to_string(wanted) + " (2 for each of the " + std::to_string(schema_.phase_channels) +
                              " channels the phase groups read)"
                        : "2 x channels, channels in [1, " + std::to_string(kMaxPhaseChannels) + "]");
    return false;
  }
  const int64_t bad = first_out_of_range(phase->f32(), phase->element_count, std::numeric_limits<float>::max());
  if (bad >= 0) {
    error = std::string(db_tensor::kPhase) + ": frame " + std::to_string(uint64_t(bad) / width) + ", column " +
            std::to_string(uint64_t(bad) % width) + " holds " + std::to_string(phase->f32()[bad]) +
            " (finite values expected)";
    return false;
  }
  phase_ = phase->f32();
  phase_channels_ = int(width / 2);
  return true;
}

int clip_index(const Database& db, int frame) {
  const auto& ranges = db.ranges();
  const auto it =
      std::upper_bound(ranges.begin(), ranges.end(), frame, [](int f, const DatabaseRange& r) { return f < r.stop; });
  return static_cast<int>(it - ranges.begin());
}

}  // namespace lmm
