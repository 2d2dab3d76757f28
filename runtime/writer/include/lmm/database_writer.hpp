// Writing motion databases (*.mmdb, docs/formats/mmdb.md) for lmm-import, re-featuring and tests:
// DatabaseTensors names every tensor of the format; write_database_file checks a database with
// the runtime's loader before it reaches the disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/blob_writer.hpp"
#include "lmm/core/span.hpp"

namespace lmm {

// The features.* tensors of a database: normalised values and the schema that lays them out.
// Arrays are views of caller data that must outlive the BlobBuilder's build; texts hold one name
// per line.
struct DatabaseFeatureTensors {
  uint64_t frames = 0;
  Span<const float> values;          // frames x dims, normalised
  Span<const float> offset, scale;   // dims each: raw = value * scale + offset
  std::string schema_name, group_names;
  Span<const int32_t> group_kind, group_item_count, group_items;  // FeatureKind, items per group, all items
  Span<const float> group_weight;

  // Adds the features.* tensors to `b`.
  void add_to(BlobBuilder& b) const;
};

// The annotation tensors of a database (lmm/asset/frame_annotations.hpp), each left out when
// empty: tag names and each frame's TagMask as two i32 (low, high 32 bits); no-entry flags; cost
// biases; events (frames ascending, each naming a line of event_names).
struct DatabaseAnnotationTensors {
  std::string tag_names;
  std::string kept_out_names;       // the tags searches requiring no tag leave out, one per line
  Span<const int32_t> tag_masks;  // frames x 2
  Span<const uint8_t> no_entry;   // frames
  Span<const float> cost_bias;    // frames
  std::string event_names;
  Span<const int32_t> event_frames, event_name_index;  // events each

  // Adds the tensors that are not empty to `b`.
  void add_to(BlobBuilder& b) const;
};

// Every tensor of a database, as views of caller data (see DatabaseFeatureTensors); the frame
// count is positions.size / (joints x 3). Nothing is checked here: write_database_file checks.
struct DatabaseTensors {
  float fps = 0.0f;
  Span<const float> unit_scale;  // meta.unit_scale: one value, or empty to leave it out
  std::string joint_names, roles, range_names;
  Span<const int32_t> parents;    // joints
  Span<const float> offsets;      // joints x 3
  Span<const int32_t> range_start, range_stop, range_mirrored;
  Span<const float> positions, rotations, velocities, angular_velocities;  // frames x joints x 3, 4, 3, 3
  Span<const int32_t> contact_joints;
  Span<const uint8_t> contacts;  // frames x contact joints
  DatabaseFeatureTensors features;
  Span<const float> phase;  // phase.values (frames x phase_width), or empty to leave it out
  uint64_t phase_width = 0;
  DatabaseAnnotationTensors annotations;

  // Adds every tensor to `b`.
  void add_to(BlobBuilder& b) const;
};

// Builds `b` as a database of the current version, checks it with the runtime loader, writes it
// atomically to `out_path` and reads it back. Returns the database read back and its size in
// `bytes`, or nullptr with `error` naming `out_path`: nothing is written when the database does
// not load, and a file that does not read back is removed.
std::shared_ptr<const Database> write_database_file(const BlobBuilder& b, const std::string& out_path, size_t& bytes,
                                                    std::string& error);

}  // namespace lmm
