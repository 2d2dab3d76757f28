#include "lmm/direction_net.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/math.hpp"
#include "nn_kernels.hpp"

namespace lmm {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

std::shared_ptr<const DirectionNet> DirectionNet::load_file(const std::string& path, std::string& error) {
  return detail::load_blob_file<DirectionNet>(path, error);
}

std::shared_ptr<const DirectionNet> DirectionNet::load_buffer(const uint8_t* data, size_t size, std::string& error) {
  return detail::load_blob_buffer<DirectionNet>(data, size, error);
}

const float* DirectionNet::values(const char* name, std::vector<int64_t> shape, std::string& error) const {
  const TensorView* t = view_.require_shape(name, DType::F32, shape, error);
  if (t == nullptr) return nullptr;
  if (!all_plausible(t->f32(), t->element_count)) {
    error = "tensor '" + std::string(name) + "' " + shape_text(shape) +
            " contains NaN, infinite or implausibly large (> 65504) values";
    return nullptr;
  }
  return t->f32();
}

bool DirectionNet::read_layer(const char* weight, const char* bias, int in, int out, DenseLayer& layer,
                              std::string& error) const {
  layer.weight = values(weight, {in, out}, error);
  layer.bias = layer.weight != nullptr ? values(bias, {out}, error) : nullptr;
  layer.in = in;
  layer.out = out;
  return layer.bias != nullptr;
}

bool DirectionNet::parse(const uint8_t* data, size_t size, std::string& error) {
  if (!view_.open(data, size, kDirectionKind, kDirectionVersion, kDirectionVersion, error)) return false;
  const TensorView* config = view_.require_shape(direction_tensor::kConfig, DType::I32, {3}, error);
  if (config == nullptr) return false;
  hidden_ = config->i32()[0], window_ = config->i32()[1], present_ = config->i32()[2];
  if (hidden_ < 1 || hidden_ > kMaxDirectionHidden || window_ < 2 || window_ > kMaxDirectionWindow || present_ < 0 ||
      present_ > window_ - 2) {
    error = "tensor '" + std::string(direction_tensor::kConfig) + "' holds hidden units " + std::to_string(hidden_) +
            ", window " + std::to_string(window_) + ", present step " + std::to_string(present_) + " (need 1.." +
            std::to_string(kMaxDirectionHidden) + " units, 2.." + std::to_string(kMaxDirectionWindow) +
            " steps and a present step with at least one step after it)";
    return false;
  }
  const float* seconds = values(direction_tensor::kStepSeconds, {1}, error);
  if (seconds == nullptr) return false;
  step_seconds_ = seconds[0];
  if (!(step_seconds_ > 0.0f && step_seconds_ <= 1.0f)) {
    error = "tensor '" + std::string(direction_tensor::kStepSeconds) + "' is " + std::to_string(step_seconds_) +
            " s (need 0 < step <= 1 s)";
    return false;
  }
  input_mean_ = values(direction_tensor::kInputMean, {kDirectionInputs}, error);
  input_std_ = input_mean_ != nullptr ? values(direction_tensor::kInputStd, {kDirectionInputs}, error) : nullptr;
  if (input_std_ == nullptr) return false;
  for (int i = 0; i < kDirectionInputs; ++i) {
    if (!(input_std_[i] > 0.0f)) {
      error = "tensor '" + std::string(direction_tensor::kInputStd) + "' value " + std::to_string(i) + " is " +
              std::to_string(input_std_[i]) + " (need > 0)";
      return false;
    }
  }
  const int gates = 3 * hidden_;
  return read_layer(direction_tensor::kInputWeight, direction_tensor::kInputBias, kDirectionInputs, gates, input_,
                    error) &&
         read_layer(direction_tensor::kHiddenWeight, direction_tensor::kHiddenBias, hidden_, gates, hidden_layer_,
                    error) &&
         read_layer(direction_tensor::kOutputWeight, direction_tensor::kOutputBias, hidden_, kDirectionOutputs,
                    output_, error);
}

bool DirectionEvaluator::init(std::shared_ptr<const DirectionNet> net, KernelPath kernels, std::string& error) {
  if (net == nullptr) {
    error = "no DirectionNet (null pointer)";
    return false;
  }
  if (!detail::resolve_kernel_path(kernels, error)) return false;
  net_ = std::move(net);
  path_ = kernels;
  padded_ = (net_->hidden() + 7) / 8 * 8;
  const size_t gates = 3 * size_t(padded_);
  pad_weights();
  inputs_.assign(size_t(net_->window()) * kDirectionInputs, 0.0f);
  gates_.assign(size_t(net_->window()) * gates, 0.0f);
  state_.assign(size_t(padded_), 0.0f);
  scratch_.assign(gates, 0.0f);
  return true;
}

void DirectionEvaluator::pad_weights() {
  const int hidden = net_->hidden(), gates = 3 * padded_;
  // Column (gate block g, unit u) of a [rows][3 hidden] matrix goes to column g * padded_ + u.
  auto pad = [&](const float* from, int rows, std::vector<float>& to) {
    to.assign(size_t(rows) * gates, 0.0f);
    for (int r = 0; r < rows; ++r) {
      for (int g = 0; g < 3; ++g) {
        std::copy(from + size_t(r) * 3 * hidden + g * hidden, from + size_t(r) * 3 * hidden + (g + 1) * hidden,
                  to.begin() + long(r) * gates + g * padded_);
      }
    }
  };
  pad(net_->input_layer().weight, kDirectionInputs, input_weight_);
  pad(net_->input_layer().bias, 1, input_bias_);
  pad(net_->hidden_layer().weight, hidden, hidden_weight_);
  pad(net_->hidden_layer().bias, 1, hidden_bias_);
}

void DirectionEvaluator::standardised_inputs(const float* points, const float* facings) {
  const DirectionNet& n = *net_;
  for (int t = 0; t < n.window(); ++t) {
    // Steps up to present + 1 read a given facing; later ones their predecessor's prediction,
    // added step by step (add_facing); here they read the mean facing (standardised zero).
    const bool given = t <= n.present() + 1;
    const float* facing = t == 0 ? facings : facings + 2 * (t - 1);
    const float raw[kDirectionInputs] = {points[2 * t], points[2 * t + 1], given ? facing[0] : n.input_mean()[2],
                                         given ? facing[1] : n.input_mean()[3]};
    for (int i = 0; i < kDirectionInputs; ++i) {
      inputs_[size_t(t) * kDirectionInputs + i] = (raw[i] - n.input_mean()[i]) / n.input_std()[i];
    }
  }
}

void DirectionEvaluator::add_facing(const float* facing, float* gates) const {
  const DirectionNet& n = *net_;
  const float x = (facing[0] - n.input_mean()[2]) / n.input_std()[2];
  const float z = (facing[1] - n.input_mean()[3]) / n.input_std()[3];
  const size_t width = 3 * size_t(padded_);
  const float* wx = input_weight_.data() + 2 * width;
  const float* wz = input_weight_.data() + 3 * width;
  for (size_t j = 0; j < width; ++j) gates[j] += x * wx[j] + z * wz[j];
}

void DirectionEvaluator::output(const float* previous_facing, float* facing) const {
  const DenseLayer& layer = net_->output_layer();
  float out[kDirectionOutputs] = {layer.bias[0], layer.bias[1]};
  for (int i = 0; i < layer.in; ++i) {
    for (int k = 0; k < kDirectionOutputs; ++k) out[k] += state_[size_t(i)] * layer.weight[i * kDirectionOutputs + k];
  }
  const float length = std::sqrt(out[0] * out[0] + out[1] * out[1]);
  const bool usable = std::isfinite(length) && length > 1e-6f;  // else keep the previous facing
  facing[0] = usable ? out[0] / length : previous_facing[0];
  facing[1] = usable ? out[1] / length : previous_facing[1];
}

bool DirectionEvaluator::predict(const float* points, const float* facings, float* future) {
  if (net_ == nullptr) return false;
  const DirectionNet& n = *net_;
  const int window = n.window(), present = n.present();
  if (!all_finite(points, 2 * size_t(window)) || !all_finite(facings, 2 * size_t(present + 1))) return false;
  standardised_inputs(points, facings);
  const int width = 3 * padded_;
  const DenseLayer input{input_weight_.data(), nullptr, input_bias_.data(), kDirectionInputs, width};
  detail::dense_kernel_for(path_)(input, inputs_.data(), kDirectionInputs, window, gates_.data(), width, false,
                                  detail::RowMap{});
  const detail::GruStepKernel step = detail::gru_step_kernel_for(path_);
  std::fill(state_.begin(), state_.end(), 0.0f);
  for (int t = 0; t < window; ++t) {
    float* gates = gates_.data() + size_t(t) * width;
    const float* previous = t <= present + 1 ? nullptr : future + 2 * (t - present - 2);
    if (previous != nullptr) add_facing(previous, gates);
    step(gates, hidden_weight_.data(), hidden_bias_.data(), n.hidden(), padded_, state_.data(), scratch_.data());
    if (t > present) output(previous != nullptr ? previous : facings + 2 * present, future + 2 * (t - present - 1));
  }
  return true;
}

}  // namespace lmm
