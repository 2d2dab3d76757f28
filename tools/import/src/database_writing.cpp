#include "database_writing.hpp"

#include <algorithm>
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

namespace {

// Index of `name` in `names` (joined with '\n' into `text`), adding it when new.
int32_t name_index(const std::string& name, std::vector<std::string>& names, std::string& text) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) return int32_t(it - names.begin());
  names.push_back(name);
  text += name + "\n";
  return int32_t(names.size() - 1);
}

bool any_set(const std::vector<uint8_t>& flags) {
  return std::any_of(flags.begin(), flags.end(), [](uint8_t f) { return f != 0; });
}

bool any_nonzero(const std::vector<float>& values) {
  return std::any_of(values.begin(), values.end(), [](float v) { return v != 0.0f; });
}

}  // namespace

AnnotationSection::AnnotationSection(const std::vector<std::string>& names, TagMask actions,
                                     const std::vector<const ClipAnnotations*>& clips)
    : tag_frames(names.size(), 0) {
  for (size_t t = 0; t < names.size(); ++t) {
    tag_names += names[t] + "\n";
    if ((actions >> t & 1) != 0) kept_out_names += names[t] + "\n";
  }
  std::vector<std::string> events;
  int32_t start = 0;
  for (const ClipAnnotations* clip : clips) {
    for (const TagMask tags : clip->tags) {
      tag_masks.push_back(int32_t(uint32_t(tags)));
      tag_masks.push_back(int32_t(uint32_t(tags >> 32)));
      for (size_t t = 0; t < names.size(); ++t) tag_frames[t] += int(tags >> t & 1);
    }
    no_entry.insert(no_entry.end(), clip->no_entry.begin(), clip->no_entry.end());
    cost_bias.insert(cost_bias.end(), clip->cost_bias.begin(), clip->cost_bias.end());
    for (const auto& [frame, name] : clip->events) {
      event_frames.push_back(start + frame);
      event_name_index.push_back(name_index(name, events, event_names));
    }
    start += int32_t(clip->tags.size());
  }
  if (names.empty()) tag_masks.clear();
  if (!any_set(no_entry)) no_entry.clear();
  if (!any_nonzero(cost_bias)) cost_bias.clear();
}

DatabaseAnnotationTensors AnnotationSection::tensors() const {
  DatabaseAnnotationTensors t;
  t.tag_names = tag_names;
  t.kept_out_names = kept_out_names;
  t.tag_masks = tag_masks;
  t.no_entry = no_entry;
  t.cost_bias = cost_bias;
  t.event_names = event_names;
  t.event_frames = event_frames;
  t.event_name_index = event_name_index;
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
