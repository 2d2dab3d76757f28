#include "lmm/asset/model.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/asset/database.hpp"

namespace lmm {
namespace {

// Whether every f16 value is finite (finite halves are at most 65504 in magnitude).
bool all_finite_half(const uint16_t* v, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    if ((v[i] & 0x7c00u) == 0x7c00u) return false;
  }
  return true;
}

// The part of `t`'s name after its last dot ("weight" for "decoder.mlp0.weight").
std::string leaf_name(const TensorView& t) {
  const size_t dot = t.name.rfind('.');
  return dot == std::string::npos ? std::string() : t.name.substr(dot + 1);
}

// The binary16 values of an f16 tensor.
const uint16_t* half_values(const TensorView& t) { return reinterpret_cast<const uint16_t*>(t.data); }

}  // namespace

int NetworkWeights::max_width() const {
  int width = std::max({in, out, experts});
  for (const DenseLayer& l : expert_layers) width = std::max({width, l.in, l.out});
  for (const DenseLayer& l : mlp) width = std::max({width, l.in, l.out});
  return width;
}

int64_t NetworkWeights::macs() const {
  int64_t total = experts > 0 ? int64_t(gate.in) * gate.out : 0;
  for (const DenseLayer& l : expert_layers) total += int64_t(top_k) * l.in * l.out;
  for (const DenseLayer& l : mlp) total += int64_t(l.in) * l.out;
  return total;
}

int64_t NetworkWeights::parameter_count() const {
  int64_t total = experts > 0 ? int64_t(gate.in + 1) * gate.out : 0;
  for (const DenseLayer& l : expert_layers) total += int64_t(experts) * (l.in + 1) * l.out;
  for (const DenseLayer& l : mlp) total += int64_t(l.in + 1) * l.out;
  return total;
}

std::shared_ptr<const Model> Model::load_file(const std::string& path, std::string& error) {
  return detail::load_blob_file<Model>(path, error);
}

std::shared_ptr<const Model> Model::load_buffer(const uint8_t* data, size_t size, std::string& error) {
  return detail::load_blob_buffer<Model>(data, size, error);
}

bool Model::parse(const uint8_t* data, size_t size, std::string& error) {
  if (!view_.open(data, size, kModelKind, kModelVersion, kModelVersion, error)) return false;
  const TensorView* preset = view_.require_shape(model_tensor::kPreset, DType::U8, {kAnyDim}, error);
  const TensorView* activation =
      preset ? view_.require_shape(model_tensor::kActivation, DType::U8, {kAnyDim}, error) : nullptr;
  if (activation == nullptr) return false;
  if (activation->text() != kActivationGeluErf) {
    error = "unsupported activation '" + activation->text() + "' (this runtime knows " + kActivationGeluErf + ")";
    return false;
  }
  preset_ = preset->text();
  if (!read_skeleton_section(view_, skeleton_, roles_, fps_, error) ||
      !read_source_unit_scale(view_, source_unit_scale_, error) ||
      !read_contact_joints(view_, skeleton_.joint_count(), contact_joints_, error) ||
      !read_schema_section(view_, skeleton_.joint_count(), schema_, error) ||
      !read_feature_scaling(view_, schema_.dims, feature_offset_, feature_scale_, error) || !read_layout(error) ||
      !read_tags(error) || !read_event_names(error) || !read_statistics(error) || !read_speeds(error)) {
    return false;
  }
  // f16 weights stay in place; f16 biases become one f32 arena, reserved up front so that
  // pointers into it stay valid.
  size_t half_biases = 0;
  for (const TensorView& t : view_.tensors()) {
    if (t.dtype != DType::F16) continue;
    const std::string leaf = leaf_name(t);
    half_ = half_ || leaf == "weight";
    if (leaf == "bias") half_biases += size_t(t.element_count);
  }
  converted_.reserve(half_biases);
  const int state = state_size();
  const int pose = layout_.size();
  const int encoder_in = pose + 3 * layout_.joints;
  if (!read_network("decoder", state, pose, true, decoder_, error) ||
      !read_network("stepper", state, state, true, stepper_, error) ||
      !read_network("projector", projector_input_size(), state, true, projector_, error) ||
      !read_network("encoder", encoder_in, latent_, false, encoder_, error)) {
    return false;
  }
  if (has_encoder()) {
    encoder_mean_ = statistic(model_tensor::kEncoderMean, encoder_in, false, error);
    encoder_std_ = encoder_mean_ ? statistic(model_tensor::kEncoderStd, encoder_in, true, error) : nullptr;
    if (encoder_std_ == nullptr) return false;
  }
  return true;
}

bool Model::read_speeds(std::string& error) {
  if (view_.find(model_tensor::kSpeeds) == nullptr) return true;  // optional: older bundles
  const TensorView* t = view_.require_shape(model_tensor::kSpeeds, DType::F32, {6}, error);
  if (t == nullptr) return false;
  const float* v = t->f32();
  for (int i = 0; i < 6; ++i) {
    if (!(v[i] > 0.0f && v[i] <= kMaxSpeed)) {
      error = std::string(model_tensor::kSpeeds) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
              " m/s is not in (0, " + std::to_string(int(kMaxSpeed)) + "]";
      return false;
    }
  }
  speeds_.walk_forward = v[0], speeds_.walk_side = v[1], speeds_.walk_back = v[2];
  speeds_.run_forward = v[3], speeds_.run_side = v[4], speeds_.run_back = v[5];
  return true;
}

bool Model::read_tags(std::string& error) {
  if (view_.find(model_tensor::kTagNames) == nullptr) {  // optional: bundles without tags
    for (const char* subset : {model_tensor::kActionTagNames, model_tensor::kKeptOutTagNames}) {
      if (view_.find(subset) == nullptr) continue;
      error = std::string(subset) + " without " + model_tensor::kTagNames;
      return false;
    }
    return true;
  }
  const TensorView* names = view_.require_shape(model_tensor::kTagNames, DType::U8, {kAnyDim}, error);
  if (names == nullptr || !tags_.read(*names, model_tensor::kTagNames, error)) return false;
  return read_tag_subset(model_tensor::kActionTagNames, action_mask_, &action_tags_, error) &&
         read_tag_subset(model_tensor::kKeptOutTagNames, kept_out_mask_, nullptr, error);
}

bool Model::read_tag_subset(const char* tensor, TagMask& mask, std::vector<int>* order, std::string& error) {
  if (view_.find(tensor) == nullptr) return true;
  TagNames subset;
  const TensorView* text = view_.require_shape(tensor, DType::U8, {kAnyDim}, error);
  if (text == nullptr || !subset.read(*text, tensor, error)) return false;
  for (const std::string& name : subset.names()) {
    const int t = tags_.tag(name);
    if (t < 0) {
      error = std::string(tensor) + ": '" + name + "' is not one of " + model_tensor::kTagNames;
      return false;
    }
    if (order != nullptr) order->push_back(t);
    mask |= TagMask(1) << t;
  }
  return true;
}

bool Model::read_event_names(std::string& error) {
  event_names_.clear();
  if (view_.find(model_tensor::kFootPlantNames) != nullptr) {
    const TensorView* text = view_.require_shape(model_tensor::kFootPlantNames, DType::U8, {kAnyDim}, error);
    if (text == nullptr) return false;
    event_names_ = split_lines(text->text());
    if (event_names_.size() != contact_joints_.size()) {
      error = std::string(model_tensor::kFootPlantNames) + " names " + std::to_string(event_names_.size()) +
              " foot plants for " + std::to_string(contact_joints_.size()) + " contact joints";
      return false;
    }
  } else {
    for (const int joint : contact_joints_) event_names_.push_back("foot_plant_" + skeleton_.names[size_t(joint)]);
  }
  for (const std::string& tag : tags_.names()) {
    event_names_.push_back("enter_" + tag);
    event_names_.push_back("leave_" + tag);
  }
  return true;
}

float Model::seconds_left(const float* state, int tag) const {
  const auto slot = std::find(action_tags_.begin(), action_tags_.end(), tag);
  if (slot == action_tags_.end()) return -1.0f;
  return state[latent_ + schema_.dims + tags_.size() + int(slot - action_tags_.begin())];
}

void Model::constraint_code(const TagConstraint& constraint, TagMask starts, float* code) const {
  write_constraint_code(constraint, tags_.size(), code);
  float* start = code + kConstraintCodeWidth * tags_.size();
  for (size_t a = 0; a < action_tags_.size(); ++a) start[a] = (starts >> action_tags_[a] & 1) != 0 ? 1.0f : 0.0f;
}

void write_constraint_code(const TagConstraint& constraint, int tags, float* code) {
  for (int t = 0; t < tags; ++t) {
    const TagMask bit = TagMask(1) << t;
    code[kConstraintCodeWidth * t] = (constraint.require_all & bit) != 0 ? 1.0f : 0.0f;
    code[kConstraintCodeWidth * t + 1] = (constraint.require_any & bit) != 0 ? 1.0f : 0.0f;
    code[kConstraintCodeWidth * t + 2] = (constraint.exclude & bit) != 0 ? 1.0f : 0.0f;
  }
}

TagMask Model::state_tags(const float* state) const {
  const float* tags = state + latent_ + schema_.dims;
  TagMask mask = 0;
  for (int t = 0; t < tags_.size(); ++t) mask |= tags[t] > 0.5f ? TagMask(1) << t : 0;
  return mask;
}

bool Model::read_layout(std::string& error) {
  const TensorView* layout = view_.require_shape(model_tensor::kLayout, DType::I32, {4}, error);
  if (layout == nullptr) return false;
  const int32_t* v = layout->i32();
  latent_ = v[0];
  layout_.joints = v[2];
  layout_.contacts = v[3];
  if (latent_ <= 0 || latent_ > 4096) {
    error = "model.layout latent size " + std::to_string(v[0]) + " is not in 1..4096";
    return false;
  }
  if (v[1] != schema_.dims) {
    error = "model.layout features " + std::to_string(v[1]) + " do not match the schema's " +
            std::to_string(schema_.dims) + " dimensions";
    return false;
  }
  if (layout_.joints < 1 || layout_.joints > 4096 || layout_.contacts < 0 || layout_.contacts > layout_.joints) {
    error = "model.layout pose joints " + std::to_string(v[2]) + " / contacts " + std::to_string(v[3]) +
            " are out of range (1..4096 joints, at most one contact per joint)";
    return false;
  }
  if (layout_.joints != skeleton_.joint_count() - 1 || layout_.contacts != int(contact_joints_.size())) {
    error = "model.layout pose joints " + std::to_string(v[2]) + " / contacts " + std::to_string(v[3]) +
            " do not match the skeleton (" + std::to_string(skeleton_.joint_count() - 1) +
            " animated joints) and contacts.joints (" + std::to_string(contact_joints_.size()) + ")";
    return false;
  }
  return true;
}

const float* Model::statistic(const char* name, int size, bool positive, std::string& error) {
  const TensorView* t = view_.require_shape(name, DType::F32, {size}, error);
  if (t == nullptr) return nullptr;
  for (int i = 0; i < size; ++i) {
    const float v = t->f32()[i];
    if (!all_plausible(&v, 1) || (positive && !(v > 0.0f))) {
      error = std::string("tensor '") + name + "' value " + std::to_string(i) +
              (positive ? " is not positive and at most 65504" : " is not finite and at most 65504");
      return nullptr;
    }
  }
  return t->f32();
}

bool Model::read_statistics(std::string& error) {
  const int state = state_size(), pose = layout_.size();
  pose_mean_ = statistic(model_tensor::kPoseMean, pose, false, error);
  pose_std_ = pose_mean_ ? statistic(model_tensor::kPoseStd, pose, true, error) : nullptr;
  delta_scale_ = pose_std_ ? statistic(model_tensor::kDeltaScale, state, true, error) : nullptr;
  state_mean_ = delta_scale_ ? statistic(model_tensor::kStateMean, state, false, error) : nullptr;
  state_std_ = state_mean_ ? statistic(model_tensor::kStateStd, state, true, error) : nullptr;
  return state_std_ != nullptr;
}

bool Model::read_layer(const std::string& name, int expected_in, int stack, DenseLayer& layer, std::string& error) {
  const TensorView* w = view_.find(name + ".weight");
  const TensorView* b = view_.find(name + ".bias");
  if (w == nullptr || b == nullptr) {
    error = "missing tensor '" + name + (w == nullptr ? ".weight'" : ".bias'");
    return false;
  }
  const int lead = stack > 0 ? 1 : 0;  // stacked expert layers carry a leading expert dimension
  if (w->dtype != b->dtype || (w->dtype != DType::F32 && w->dtype != DType::F16) || w->rank != 2 + lead ||
      b->rank != 1 + lead || (lead && (w->dims[0] != uint64_t(stack) || b->dims[0] != uint64_t(stack)))) {
    error = "tensor '" + name + ".weight' / '.bias' has an unexpected dtype or shape";
    return false;
  }
  const uint64_t in = w->dims[lead], out = w->dims[lead + 1];
  if (in != uint64_t(expected_in) || b->dims[lead] != out || out == 0 || out > 65536) {
    error = "layer '" + name + "' is " + std::to_string(in) + " -> " + std::to_string(out) + " (bias " +
            std::to_string(b->dims[lead]) + "), expected input " + std::to_string(expected_in);
    return false;
  }
  layer.in = int(in);
  layer.out = int(out);
  for (const TensorView* t : {w, b}) {
    weight_bytes_ += t->element_count * dtype_size(t->dtype);
    const bool plausible = t->dtype == DType::F32 ? all_plausible(t->f32(), t->element_count)
                                                  : all_finite_half(half_values(*t), t->element_count);
    if (!plausible) {
      error = "tensor '" + t->name + "' contains NaN, infinite or implausibly large (> 65504) values";
      return false;
    }
  }
  if (w->dtype == DType::F32) {
    layer.weight = w->f32();
    layer.bias = b->f32();
    return true;
  }
  if (converted_.size() + b->element_count > converted_.capacity()) {
    error = "tensor '" + b->name + "' is read twice";  // would move the f16 bias arena
    return false;
  }
  const uint16_t* h = half_values(*b);
  const size_t first = converted_.size();
  for (uint64_t i = 0; i < b->element_count; ++i) converted_.push_back(half_to_float(h[i]));
  layer.weight_half = half_values(*w);
  layer.bias = converted_.data() + first;
  return true;
}

bool Model::read_network(const std::string& name, int in, int out, bool required, NetworkWeights& net,
                         std::string& error) {
  const TensorView* config = view_.find(name + ".config");
  if (config == nullptr && !required) return true;
  config = view_.require_shape(name + ".config", DType::I32, {4}, error);
  if (config == nullptr) return false;
  const int32_t experts = config->i32()[0], top_k = config->i32()[1];
  const int32_t expert_layers = config->i32()[2], mlp_layers = config->i32()[3];
  const bool valid = experts >= 0 && experts <= 65536 && expert_layers >= 0 && expert_layers <= 64 && mlp_layers >= 0 &&
                     mlp_layers <= 64 &&
                     (experts == 0 ? expert_layers == 0 && mlp_layers > 0 && top_k == 0
                                   : expert_layers > 0 && top_k >= 1 && top_k <= std::min(experts, kMaxTopK));
  if (!valid) {
    error = "'" + name + ".config' is not a valid network (experts " + std::to_string(experts) + ", top-k " +
            std::to_string(top_k) + ", layers " + std::to_string(expert_layers) + " + " + std::to_string(mlp_layers) +
            ")";
    return false;
  }
  net = NetworkWeights{};
  net.in = in;
  net.experts = experts;
  net.top_k = experts > 0 ? top_k : 0;
  int width = in;
  if (experts > 0) {
    if (!read_layer(name + ".gate", in, 0, net.gate, error)) return false;
    if (net.gate.out != experts) {
      error = "'" + name + ".gate' has " + std::to_string(net.gate.out) + " outputs for " + std::to_string(experts) +
              " experts";
      return false;
    }
    for (int l = 0; l < expert_layers; ++l) {
      DenseLayer layer;
      if (!read_layer(name + ".expert" + std::to_string(l), width, experts, layer, error)) return false;
      net.expert_layers.push_back(layer);
      width = layer.out;
    }
  }
  for (int l = 0; l < mlp_layers; ++l) {
    DenseLayer layer;
    if (!read_layer(name + ".mlp" + std::to_string(l), width, 0, layer, error)) return false;
    net.mlp.push_back(layer);
    width = layer.out;
  }
  if (width != out) {
    error = "'" + name + "' outputs " + std::to_string(width) + " values, expected " + std::to_string(out);
    return false;
  }
  net.out = out;
  return true;
}

}  // namespace lmm
