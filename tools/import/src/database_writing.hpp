// Internal to the pipeline library: writing databases, shared by lmm-import (import.cpp) and
// re-featuring (phase_features.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lmm/asset/features.hpp"
#include "lmm/asset/speed_profile.hpp"
#include "lmm/database_writer.hpp"
#include "lmm/import/tags.hpp"

namespace lmm::pipeline {

// The features.* tensors of a database (docs/formats/mmdb.md): normalised values, normalisation
// and schema, kept here for a BlobBuilder.
struct FeatureSection {
  uint64_t frames = 0;
  std::vector<float> values, offset, scale;  // frames x schema dims, normalised; per dim
  std::string schema_name, group_names;
  std::vector<int32_t> kinds, counts, items;
  std::vector<float> weights;

  // Normalises `raw` (frames x schema.dims) with normalize_groups and lays out `schema`.
  // Throws InputError like normalize_groups.
  FeatureSection(const FeatureSchema& schema, std::vector<float> raw);
  // The tensors as the writer takes them: views of this section, which must outlive their use.
  DatabaseFeatureTensors tensors() const;
};

// The annotation tensors of a database (docs/formats/mmdb.md) from the annotations of its clips,
// laid end to end in order: tag names and masks when `tag_names` is not empty, no-entry flags
// and cost biases when a frame has one, events when there are any.
struct AnnotationSection {
  std::string tag_names, event_names;  // one per line
  std::string kept_out_names;            // the tags searches requiring no tag leave out, one per line
  std::vector<int32_t> tag_masks;      // frames x 2 (low, high 32 bits)
  std::vector<uint8_t> no_entry;
  std::vector<float> cost_bias;
  std::vector<int32_t> event_frames, event_name_index;
  std::vector<int> tag_frames;  // frames with each tag

  // The tensors of `clips` over the tags `tag_names`, of which `actions` are kept out of searches
  // that require no tag.
  AnnotationSection(const std::vector<std::string>& tag_names, TagMask actions,
                    const std::vector<const ClipAnnotations*>& clips);
  // The tensors as the writer takes them: views of this section, which must outlive their use.
  DatabaseAnnotationTensors tensors() const;
};

// write_database_file(b, out_path) that throws InputError on failure; returns the size in bytes
// and, when `speeds` is given, the controller speeds the database gives.
size_t write_database_blob(const BlobBuilder& b, const std::string& out_path, SpeedProfile* speeds = nullptr);

}  // namespace lmm::pipeline
