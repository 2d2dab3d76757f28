#include "database_writing.hpp"

#include <cmath>

#include "lmm/common/errors.hpp"
#include "lmm/import/import.hpp"

namespace lmm::pipeline {

void normalize_groups(const FeatureSchema& schema, std::vector<float>& features,
                      std::vector<float>& offset, std::vector<float>& scale) {
  const size_t dims = size_t(schema.dims);
  const size_t rows = dims == 0 ? 0 : features.size() / dims;
  offset.assign(dims, 0.0f);
  scale.assign(dims, 1.0f);
  for (const FeatureGroup& g : schema.groups) {
    const size_t first = size_t(g.first_dim), size = size_t(feature_group_dims(g));
    double mean_std = 0.0;
    for (size_t d = first; d < first + size; ++d) {
      double sum = 0.0, sum_sq = 0.0;
      for (size_t r = 0; r < rows; ++r) sum += features[r * dims + d];
      const double mean = sum / double(rows);
      for (size_t r = 0; r < rows; ++r) sum_sq += (features[r * dims + d] - mean) * (features[r * dims + d] - mean);
      offset[d] = float(mean);
      mean_std += std::sqrt(sum_sq / double(rows)) / double(size);
    }
    if (!(mean_std > 1e-6)) {
      throw InputError("feature group '" + g.name + "' has zero variance over the database "
                       "(constant feature: check its bones, offsets or the input clips)");
    }
    for (size_t d = first; d < first + size; ++d) scale[d] = float(mean_std / g.weight);
  }
  for (size_t r = 0; r < rows; ++r) normalize_features(&features[r * dims], offset.data(), scale.data(), int(dims));
}

FeatureSection::FeatureSection(const FeatureSchema& schema, std::vector<float> raw)
    : values(std::move(raw)), schema_name(schema.name) {
  frames = schema.dims == 0 ? 0 : values.size() / size_t(schema.dims);
  normalize_groups(schema, values, offset, scale);
  for (const FeatureGroup& g : schema.groups) {
    kinds.push_back(static_cast<int32_t>(g.kind));
    counts.push_back(static_cast<int32_t>(g.items.size()));
    items.insert(items.end(), g.items.begin(), g.items.end());
    weights.push_back(g.weight);
    group_names += g.name + "\n";
  }
}

DatabaseFeatureTensors FeatureSection::tensors() const {
  DatabaseFeatureTensors t;
  t.frames = frames;
  t.values = values;
  t.offset = offset;
  t.scale = scale;
  t.schema_name = schema_name;
  t.group_names = group_names;
  t.group_kind = kinds;
  t.group_item_count = counts;
  t.group_items = items;
  t.group_weight = weights;
  return t;
}

size_t write_database_blob(const BlobBuilder& b, const std::string& out_path, SpeedProfile* speeds) {
  size_t bytes = 0;
  std::string error;
  const std::shared_ptr<const Database> written = write_database_file(b, out_path, bytes, error);
  if (written == nullptr) throw InputError(error);
  if (speeds != nullptr) *speeds = written->speeds();
  return bytes;
}

}  // namespace lmm::pipeline
