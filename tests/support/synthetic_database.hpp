// Builds small, valid motion database blobs in memory for runtime tests (no pipeline needed).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/database_writer.hpp"

namespace lmm::test {

// Every tensor of a tiny database: 3 joints (Simulation -> Hips -> Foot), two ranges, a
// bone-position group and a trajectory-position group. Tests edit fields, then call build().
struct SyntheticDatabase {
  uint32_t version = kDatabaseVersion;
  float fps = 60.0f;
  std::string joint_names = "Simulation\nHips\nFoot\n";
  std::vector<int32_t> parents = {-1, 0, 1};
  std::vector<float> offsets = {0, 0, 0, 0, 1, 0, 0, -1, 0};
  std::string roles = "hips=1\nleft_foot=2\n";
  std::vector<float> unit_scale;  // meta.unit_scale when not empty (empty: a file from before it existed)
  std::string range_names = "walk\nwalk (mirrored)\n";
  std::vector<int32_t> range_start = {0, 5};
  std::vector<int32_t> range_stop = {5, 12};
  std::vector<int32_t> range_mirrored = {0, 1};
  std::vector<float> positions, rotations, velocities, angular_velocities;
  std::vector<int32_t> contact_joints = {2};
  std::vector<uint8_t> contacts;
  std::vector<float> features, feature_offset = {0, 0, 0, 0, 0}, feature_scale = {1, 1, 1, 1, 1};
  std::string schema_name = "tiny";
  std::string group_names = "foot_position\ntrajectory\n";
  std::vector<int32_t> group_kind = {1, 3};
  std::vector<float> group_weight = {1.0f, 2.0f};
  std::vector<int32_t> group_item_count = {1, 1};
  std::vector<int32_t> group_items = {2, 20};
  std::vector<float> phase;    // phase.values when not empty: frames x phase_width
  uint64_t phase_width = 0;
  // Annotations (version 3), each written when not empty.
  std::string tag_names, event_names;
  std::string kept_out_names;  // tags.kept_out: the action tags free searches leave out
  std::vector<int32_t> tag_masks, event_frames, event_name_index;  // frames x 2; events each
  std::vector<uint8_t> no_entry;
  std::vector<float> cost_bias;

  // Appends a phase group reading `channels` channels (2 x channels dims, offset 0, scale 1) and
  // stores a phase embedding of that width, each frame's values `phase_value(frame, column)`;
  // the group's features are the embedding itself.
  void add_phase_group(int channels) {
    const size_t old_dims = feature_offset.size(), dims = old_dims + 2 * size_t(channels);
    const size_t frames = features.size() / old_dims;
    std::vector<float> widened;
    phase.clear();
    phase_width = 2 * uint64_t(channels);
    for (size_t f = 0; f < frames; ++f) {
      widened.insert(widened.end(), features.begin() + long(f * old_dims), features.begin() + long((f + 1) * old_dims));
      for (uint64_t c = 0; c < phase_width; ++c) phase.push_back(phase_value(f, c));
      widened.insert(widened.end(), phase.end() - long(phase_width), phase.end());
    }
    features = widened;
    feature_offset.resize(dims, 0.0f);
    feature_scale.resize(dims, 1.0f);
    group_names += "phase\n";
    group_kind.push_back(int32_t(FeatureKind::Phase));
    group_weight.push_back(1.0f);
    group_item_count.push_back(channels);
    for (int c = 0; c < channels; ++c) group_items.push_back(c);
  }

  // A distinct, frame-dependent value of phase column `column` of `frame`.
  static float phase_value(size_t frame, uint64_t column) {
    return std::sin(0.3f * float(frame) + float(column)) * (1.0f + 0.1f * float(column));
  }

  // Fills per-frame arrays for 12 frames with deterministic values.
  SyntheticDatabase() { fill_frames(12); }

  // Replaces the clips by ranges of the given lengths whose features are seeded random walks
  // (so neighbouring frames are similar, as in real motion).
  void randomize(const std::vector<int>& lengths, uint32_t seed) {
    range_start.clear();
    range_stop.clear();
    range_mirrored.clear();
    range_names.clear();
    int frames = 0;
    for (size_t r = 0; r < lengths.size(); ++r) {
      range_start.push_back(frames);
      frames += lengths[r];
      range_stop.push_back(frames);
      range_mirrored.push_back(int32_t(r % 2));
      range_names += "clip" + std::to_string(r) + "\n";
    }
    fill_frames(frames);
    std::mt19937 rng(seed);
    std::normal_distribution<float> step(0.0f, 0.15f);
    std::uniform_real_distribution<float> start(-2.0f, 2.0f);
    for (size_t r = 0; r < lengths.size(); ++r) {
      float x[5];
      for (float& v : x) v = start(rng);
      for (int f = range_start[r]; f < range_stop[r]; ++f) {
        for (int d = 0; d < 5; ++d) features[size_t(f) * 5 + size_t(d)] = x[d] += step(rng);
      }
    }
  }

  // Sizes and fills the per-frame arrays for `n` frames.
  void fill_frames(int n) {
    const int j = 3;
    positions.clear();
    rotations.clear();
    velocities.clear();
    angular_velocities.clear();
    contacts.clear();
    features.clear();
    for (int f = 0; f < n; ++f) {
      for (int k = 0; k < j; ++k) {
        positions.insert(positions.end(), {0.01f * f, float(k), 0.5f});
        rotations.insert(rotations.end(), {1, 0, 0, 0});
        velocities.insert(velocities.end(), {0.6f, 0, 0});
        angular_velocities.insert(angular_velocities.end(), {0, 0.1f * k, 0});
      }
      contacts.push_back(uint8_t(f % 2));
      for (int d = 0; d < 5; ++d) features.push_back(0.1f * f - 0.05f * d);
    }
  }

  // Serialises the fields as a database blob (hash on) with lmm::writer, unchecked (tests break
  // fields on purpose).
  std::vector<uint8_t> build() const {
    DatabaseTensors t;
    t.fps = fps;
    t.unit_scale = unit_scale;
    t.joint_names = joint_names;
    t.roles = roles;
    t.range_names = range_names;
    t.parents = parents;
    t.offsets = offsets;
    t.range_start = range_start;
    t.range_stop = range_stop;
    t.range_mirrored = range_mirrored;
    t.positions = positions;
    t.rotations = rotations;
    t.velocities = velocities;
    t.angular_velocities = angular_velocities;
    t.contact_joints = contact_joints;
    t.contacts = contacts;
    t.features.frames = positions.size() / 9;
    t.features.values = features;
    t.features.offset = feature_offset;
    t.features.scale = feature_scale;
    t.features.schema_name = schema_name;
    t.features.group_names = group_names;
    t.features.group_kind = group_kind;
    t.features.group_weight = group_weight;
    t.features.group_item_count = group_item_count;
    t.features.group_items = group_items;
    t.phase = phase;
    t.phase_width = phase_width;
    t.annotations.tag_names = tag_names;
    t.annotations.kept_out_names = kept_out_names;
    t.annotations.tag_masks = tag_masks;
    t.annotations.no_entry = no_entry;
    t.annotations.cost_bias = cost_bias;
    t.annotations.event_names = event_names;
    t.annotations.event_frames = event_frames;
    t.annotations.event_name_index = event_name_index;
    BlobBuilder b;
    t.add_to(b);
    std::vector<uint8_t> out;
    std::string error;
    b.build(kDatabaseKind, version, true, out, error);
    return out;
  }
};

// Copies `bytes` into a 64-byte aligned buffer (what a file load gives).
inline AlignedBuffer aligned_copy(const std::vector<uint8_t>& bytes) {
  AlignedBuffer buffer(bytes.size());
  std::copy(bytes.begin(), bytes.end(), buffer.data());
  return buffer;
}

}  // namespace lmm::test
