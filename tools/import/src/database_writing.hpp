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

// write_database_file(b, out_path) that throws InputError on failure; returns the size in bytes
// and, when `speeds` is given, the controller speeds the database gives.
size_t write_database_blob(const BlobBuilder& b, const std::string& out_path, SpeedProfile* speeds = nullptr);

}  // namespace lmm::pipeline
