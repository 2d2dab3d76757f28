#include "lmm/model_builder.hpp"

#include <algorithm>
#include <memory>

#include "lmm/asset/database.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/blob_writer.hpp"

namespace lmm {
namespace {

// The database tensors a bundle carries over unchanged.
constexpr const char* kSharedSections[] = {db_tensor::kFps,
                                           db_tensor::kJointNames,
                                           db_tensor::kParents,
                                           db_tensor::kOffsets,
                                           db_tensor::kRoles,
                                           db_tensor::kContactJoints,
                                           db_tensor::kFeatureOffset,
                                           db_tensor::kFeatureScale,
                                           db_tensor::kSchemaName,
                                           db_tensor::kGroupNames,
                                           db_tensor::kGroupKind,
                                           db_tensor::kGroupWeight,
                                           db_tensor::kGroupItemCount,
                                           db_tensor::kGroupItems};

// Adds tensors to a BlobBuilder, keeping converted (f16) and derived arrays alive until build.
class BundleWriter {
 public:
  BlobBuilder blob;

  void add_f32(const std::string& name, const std::vector<float>& v) {
    blob.add(name, DType::F32, {v.size()}, v.data());
  }

  void add_i32(const std::string& name, std::vector<int32_t> v) {
    ints_.push_back(std::make_unique<std::vector<int32_t>>(std::move(v)));
    blob.add(name, DType::I32, {ints_.back()->size()}, ints_.back()->data());
  }

  // Adds a weight array with `shape`, as f16 when `half`.
  void add_weights(const std::string& name, const std::vector<float>& v, std::vector<uint64_t> shape, bool half) {
    if (!half) {
      blob.add(name, DType::F32, std::move(shape), v.data());
      return;
    }
    halves_.push_back(std::make_unique<std::vector<uint16_t>>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) (*halves_.back())[i] = float_to_half(v[i]);
    blob.add(name, DType::F16, std::move(shape), halves_.back()->data());
  }

 private:
  std::vector<std::unique_ptr<std::vector<int32_t>>> ints_;
  std::vector<std::unique_ptr<std::vector<uint16_t>>> halves_;
};

// Checks that `layer` holds `stack` (>= 1) copies of an in x out layer.
bool check_layer(const std::string& name, const LayerValues& layer, size_t stack, std::string& error) {
  if (layer.in <= 0 || layer.out <= 0 || layer.weight.size() != stack * layer.in * layer.out ||
      layer.bias.size() != stack * layer.out) {
    error = "layer '" + name + "' values do not match its " + std::to_string(layer.in) + " x " +
            std::to_string(layer.out) + " shape";
    return false;
  }
  return true;
}

bool add_network(BundleWriter& w, const std::string& name, const NetworkValues& net, bool half, std::string& error) {
  const uint64_t experts = uint64_t(net.experts);
  if (net.experts > 0) {  // the gate stays f32 even in half bundles: routing must not change
    if (!check_layer(name + ".gate", net.gate, 1, error)) return false;
    w.add_weights(name + ".gate.weight", net.gate.weight, {uint64_t(net.gate.in), uint64_t(net.gate.out)}, false);
    w.add_weights(name + ".gate.bias", net.gate.bias, {uint64_t(net.gate.out)}, false);
  }
  for (size_t l = 0; l < net.expert_layers.size(); ++l) {
    const LayerValues& layer = net.expert_layers[l];
    const std::string prefix = name + ".expert" + std::to_string(l);
    if (!check_layer(prefix, layer, experts, error)) return false;
    w.add_weights(prefix + ".weight", layer.weight, {experts, uint64_t(layer.in), uint64_t(layer.out)}, half);
    w.add_weights(prefix + ".bias", layer.bias, {experts, uint64_t(layer.out)}, half);
  }
  for (size_t l = 0; l < net.mlp.size(); ++l) {
    const LayerValues& layer = net.mlp[l];
    const std::string prefix = name + ".mlp" + std::to_string(l);
    if (!check_layer(prefix, layer, 1, error)) return false;
    w.add_weights(prefix + ".weight", layer.weight, {uint64_t(layer.in), uint64_t(layer.out)}, half);
    w.add_weights(prefix + ".bias", layer.bias, {uint64_t(layer.out)}, half);
  }
  w.add_i32(name + ".config", {net.experts, net.top_k, int32_t(net.expert_layers.size()), int32_t(net.mlp.size())});
  return true;
}

}  // namespace

bool build_model_bundle(const ModelValues& values, const BlobView& database, bool half, std::vector<uint8_t>& out,
                        std::string& error) {
  BundleWriter w;
  auto copy = [&](const char* name, const TensorView& t) {
    w.blob.add(name, t.dtype, std::vector<uint64_t>(t.dims, t.dims + t.rank), t.data);
  };
  for (const char* name : kSharedSections) {
    const TensorView* t = database.find(name);
    if (t == nullptr) {
      error = std::string("the database has no '") + name + "' section";
      return false;
    }
    copy(name, *t);
  }
  // Optional: databases written before meta.unit_scale lack it.
  if (const TensorView* unit_scale = database.find(db_tensor::kUnitScale)) copy(db_tensor::kUnitScale, *unit_scale);
  const TensorView* parents = database.find(db_tensor::kParents);
  const TensorView* contacts = database.find(db_tensor::kContactJoints);
  const TensorView* features = database.find(db_tensor::kFeatureOffset);
  w.blob.add_text(model_tensor::kPreset, values.preset);
  w.blob.add_text(model_tensor::kActivation, kActivationGeluErf);
  w.add_i32(model_tensor::kLayout, {values.latent, int32_t(features->element_count),
                                    int32_t(parents->element_count) - 1, int32_t(contacts->element_count)});
  w.add_f32(model_tensor::kPoseMean, values.pose_mean);
  w.add_f32(model_tensor::kPoseStd, values.pose_std);
  w.add_f32(model_tensor::kDeltaScale, values.delta_scale);
  w.add_f32(model_tensor::kStateMean, values.state_mean);
  w.add_f32(model_tensor::kStateStd, values.state_std);
  if (!values.speeds.empty()) w.add_f32(model_tensor::kSpeeds, values.speeds);
  for (const auto& [tensor, names] : {std::make_pair(model_tensor::kTagNames, &values.tag_names),
                                       std::make_pair(model_tensor::kActionTagNames, &values.action_tag_names),
                                       std::make_pair(model_tensor::kKeptOutTagNames, &values.kept_out_tag_names),
                                       std::make_pair(model_tensor::kFootPlantNames, &values.foot_plant_names)}) {
    std::string lines;
    for (const std::string& name : *names) lines += (lines.empty() ? "" : "\n") + name;
    if (!names->empty()) w.blob.add_text(tensor, lines);
  }
  if (!add_network(w, "decoder", values.decoder, half, error) ||
      !add_network(w, "stepper", values.stepper, half, error) ||
      !add_network(w, "projector", values.projector, half, error)) {
    return false;
  }
  if (values.encoder.experts > 0 || !values.encoder.mlp.empty()) {
    if (!add_network(w, "encoder", values.encoder, half, error)) return false;
    w.add_f32(model_tensor::kEncoderMean, values.encoder_mean);
    w.add_f32(model_tensor::kEncoderStd, values.encoder_std);
  }
  std::vector<uint8_t> bytes;
  if (!w.blob.build(kModelKind, kModelVersion, true, bytes, error)) return false;
  // Validate what was written with the loader itself, so no inconsistent bundle leaves here.
  AlignedBuffer aligned(bytes.size());
  std::copy(bytes.begin(), bytes.end(), aligned.data());
  if (Model::load_buffer(aligned.data(), aligned.size(), error) == nullptr) {
    error = "the bundle would not load: " + error;
    return false;
  }
  out = std::move(bytes);
  return true;
}

}  // namespace lmm
