#include "lmm/database_writer.hpp"

#include <filesystem>
#include <system_error>

namespace lmm {

void DatabaseFeatureTensors::add_to(BlobBuilder& b) const {
  namespace t = db_tensor;
  const uint64_t dims = offset.size;
  b.add(t::kFeatures, DType::F32, {frames, dims}, values.data);
  b.add(t::kFeatureOffset, DType::F32, {dims}, offset.data);
  b.add(t::kFeatureScale, DType::F32, {dims}, scale.data);
  b.add_text(t::kSchemaName, schema_name);
  b.add_text(t::kGroupNames, group_names);
  b.add(t::kGroupKind, DType::I32, {group_kind.size}, group_kind.data);
  b.add(t::kGroupWeight, DType::F32, {group_weight.size}, group_weight.data);
  b.add(t::kGroupItemCount, DType::I32, {group_item_count.size}, group_item_count.data);
  b.add(t::kGroupItems, DType::I32, {group_items.size}, group_items.data);
}

void DatabaseAnnotationTensors::add_to(BlobBuilder& b) const {
  namespace t = annotation_tensor;
  if (!tag_names.empty()) b.add_text(t::kTagNames, tag_names);
  if (!kept_out_names.empty()) b.add_text(t::kKeptOutNames, kept_out_names);
  if (tag_masks.size > 0) b.add(t::kTagMasks, DType::I32, {tag_masks.size / 2, 2}, tag_masks.data);
  if (no_entry.size > 0) b.add(t::kNoEntry, DType::U8, {no_entry.size}, no_entry.data);
  if (cost_bias.size > 0) b.add(t::kCostBias, DType::F32, {cost_bias.size}, cost_bias.data);
  if (!event_names.empty()) b.add_text(t::kEventNames, event_names);
  if (event_frames.size > 0) b.add(t::kEventFrames, DType::I32, {event_frames.size}, event_frames.data);
  if (event_name_index.size > 0) b.add(t::kEventNameIndex, DType::I32, {event_name_index.size}, event_name_index.data);
}

void DatabaseTensors::add_to(BlobBuilder& b) const {
  namespace t = db_tensor;
  const uint64_t joints = parents.size, frames = joints == 0 ? 0 : positions.size / (joints * 3);
  const uint64_t ranges = range_start.size;
  b.add(t::kFps, DType::F32, {1}, &fps);
  if (unit_scale.size > 0) b.add(t::kUnitScale, DType::F32, {unit_scale.size}, unit_scale.data);
  b.add_text(t::kJointNames, joint_names);
  b.add(t::kParents, DType::I32, {joints}, parents.data);
  b.add(t::kOffsets, DType::F32, {joints, 3}, offsets.data);
  b.add_text(t::kRoles, roles);
  b.add_text(t::kRangeNames, range_names);
  b.add(t::kRangeStart, DType::I32, {ranges}, range_start.data);
  b.add(t::kRangeStop, DType::I32, {range_stop.size}, range_stop.data);
  b.add(t::kRangeMirrored, DType::I32, {range_mirrored.size}, range_mirrored.data);
  b.add(t::kPositions, DType::F32, {frames, joints, 3}, positions.data);
  b.add(t::kRotations, DType::F32, {frames, joints, 4}, rotations.data);
  b.add(t::kVelocities, DType::F32, {frames, joints, 3}, velocities.data);
  b.add(t::kAngularVelocities, DType::F32, {frames, joints, 3}, angular_velocities.data);
  b.add(t::kContactJoints, DType::I32, {contact_joints.size}, contact_joints.data);
  b.add(t::kContacts, DType::U8, {frames, contact_joints.size}, contacts.data);
  features.add_to(b);
  if (phase.size > 0) b.add(t::kPhase, DType::F32, {frames, phase_width}, phase.data);
  annotations.add_to(b);
}

std::shared_ptr<const Database> write_database_file(const BlobBuilder& b, const std::string& out_path, size_t& bytes,
                                                    std::string& error) {
  std::vector<uint8_t> blob;
  std::string why;
  if (!b.build(kDatabaseKind, kDatabaseVersion, true, blob, why)) {
    error = out_path + ": " + why;
    return nullptr;
  }
  if (Database::load_buffer(blob.data(), blob.size(), why) == nullptr) {
    error = out_path + ": the database fails the loader's checks (nothing written): " + why;
    return nullptr;
  }
  if (!write_file_atomic(out_path, blob.data(), blob.size(), why)) {
    error = out_path + ": " + why;
    return nullptr;
  }
  std::shared_ptr<const Database> written = Database::load_file(out_path, why);
  if (written == nullptr) {
    std::error_code ignored;
    std::filesystem::remove(out_path, ignored);
    error = "the written database does not read back (removed): " + why;
    return nullptr;
  }
  bytes = blob.size();
  return written;
}

}  // namespace lmm
