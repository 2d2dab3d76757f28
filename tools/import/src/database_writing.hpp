// Internal to the pipeline library: writing databases, shared by lmm-import (import.cpp) and
// re-featuring (phase_features.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/motion/controller.hpp"
#include "lmm/asset/features.hpp"

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
  // Adds the tensors to `b`, pointing at this section (which must outlive b.build).
  void add_to(BlobBuilder& b) const;
};

// Builds `b` as a database, checks it with the runtime loader, writes it atomically to `out_path`
// and reads it back; returns its size in bytes and, when `speeds` is given, the controller speeds
// the database gives. Throws InputError naming `out_path`; nothing is written when the database
// does not load, and a file that does not read back is removed.
size_t write_database_blob(const BlobBuilder& b, const std::string& out_path, SpeedProfile* speeds = nullptr);

}  // namespace lmm::pipeline
