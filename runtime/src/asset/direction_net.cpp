#include "lmm/asset/direction_net.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/core/math.hpp"

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
         read_layer(direction_tensor::kOutputWeight, direction_tensor::kOutputBias, hidden_, kDirectionOutputs, output_,
                    error);
}

}  // namespace lmm
