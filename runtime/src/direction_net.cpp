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
  const DirectionNet& n = *net_;
  const int hidden = n.hidden(), gates = 3 * padded_;
  // Column (gate block g, unit u) of a [rows][3 hidden] matrix goes to column g * padded_ + u,
  // times the block's scale (the GruWindow layout: halved r and z blocks, and n where `halve_n`).
  auto pad = [&](const float* from, int rows, bool halve_n, float* to) {
    std::fill(to, to + size_t(rows) * gates, 0.0f);
    for (int r = 0; r < rows; ++r) {
      for (int g = 0; g < 3; ++g) {
        const float scale = g < 2 || halve_n ? 0.5f : 1.0f;
        for (int u = 0; u < hidden; ++u) {
          to[size_t(r) * gates + g * padded_ + u] = scale * from[size_t(r) * 3 * hidden + g * hidden + u];
        }
      }
    }
  };
  input_weight_.resize(size_t(kDirectionInputs) * gates);
  input_bias_.resize(size_t(gates));
  hidden_weight_ = AlignedBuffer(size_t(hidden) * gates * sizeof(float));
  hidden_bias_.resize(size_t(gates));
  pad(n.input_layer().weight, kDirectionInputs, false, input_weight_.data());
  pad(n.input_layer().bias, 1, false, input_bias_.data());
  pad(n.hidden_layer().weight, hidden, true, hidden_weights());
  pad(n.hidden_layer().bias, 1, true, hidden_bias_.data());
  // A fed-back facing f adds (f - mean) / std times its input rows; the - mean / std part is in the
  // input gates already (standardised_inputs gives those steps a zero facing).
  feedback_weight_.resize(2 * size_t(gates));
  for (int c = 0; c < 2; ++c) {
    const float* row = input_weight_.data() + size_t(2 + c) * gates;
    for (int j = 0; j < gates; ++j) feedback_weight_[size_t(c) * gates + j] = row[j] / n.input_std()[2 + c];
  }
  output_weight_.assign(2 * size_t(padded_), 0.0f);
  for (int i = 0; i < hidden; ++i) {
    for (int c = 0; c < 2; ++c) output_weight_[size_t(c) * padded_ + i] = n.output_layer().weight[i * kDirectionOutputs + c];
  }
}

float* DirectionEvaluator::hidden_weights() { return reinterpret_cast<float*>(hidden_weight_.data()); }

void DirectionEvaluator::standardised_inputs(const float* points, const float* facings) {
  const DirectionNet& n = *net_;
  for (int t = 0; t < n.window(); ++t) {
    // Steps up to present + 1 read a given facing; later ones their predecessor's prediction,
    // fed back by the GRU window kernel; here they read a zero facing.
    const bool given = t <= n.present() + 1;
    const float* facing = t == 0 ? facings : facings + 2 * (t - 1);
    const float raw[kDirectionInputs] = {points[2 * t], points[2 * t + 1], given ? facing[0] : 0.0f,
                                         given ? facing[1] : 0.0f};
    for (int i = 0; i < kDirectionInputs; ++i) {
      inputs_[size_t(t) * kDirectionInputs + i] = (raw[i] - n.input_mean()[i]) / n.input_std()[i];
    }
  }
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
  detail::GruWindow gru;
  gru.input_gates = gates_.data();
  gru.hidden_weight = hidden_weights();
  gru.hidden_bias = hidden_bias_.data();
  gru.feedback_weight = feedback_weight_.data();
  gru.output_weight = output_weight_.data();
  gru.output_bias = n.output_layer().bias;
  gru.hidden = n.hidden(), gru.padded = padded_, gru.window = window, gru.present = present;
  gru.state = state_.data(), gru.scratch = scratch_.data();
  detail::gru_window_kernel_for(path_, padded_)(gru, facings + 2 * present, future);
  return true;
}

}  // namespace lmm
