// DirectionNet (Lee, Kwon & Lee 2023, Sec. VI-G, Fig. 5): a one-layer GRU with a linear output
// layer that infers the facing direction a character would have along a path, from the path
// points of a window around the desired position and the previous facing direction at each
// step. Its bundle (*.lmdn) is a blob of its own kind; DirectionEvaluator
// (lmm/eval/direction_evaluator.hpp) runs it without allocating.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/blob.hpp"
#include "lmm/asset/model.hpp"

namespace lmm {

constexpr char kDirectionKind[5] = "LMDN";  // blob kind tag of DirectionNet bundles
constexpr uint32_t kDirectionVersion = 1;   // current (and oldest supported) version
constexpr int kDirectionInputs = 4;         // per step: path point x, z; previous facing x, z
constexpr int kDirectionOutputs = 2;        // per step: facing x, z

// Tensor names of the DirectionNet format. Weights are input-major ([in, out], the transpose of
// torch's), f32; the GRU's three gate blocks are in torch's order (reset, update, new).
namespace direction_tensor {
constexpr const char* kConfig = "direction.config";             // i32 [3]: hidden units, window steps, present step
constexpr const char* kStepSeconds = "direction.step_seconds";  // f32 [1]: time between steps
constexpr const char* kInputMean = "direction.input_mean";      // f32 [4]: input standardisation
constexpr const char* kInputStd = "direction.input_std";        // f32 [4]
constexpr const char* kInputWeight = "gru.input.weight";        // f32 [4, 3 hidden]
constexpr const char* kInputBias = "gru.input.bias";            // f32 [3 hidden]
constexpr const char* kHiddenWeight = "gru.hidden.weight";      // f32 [hidden, 3 hidden]
constexpr const char* kHiddenBias = "gru.hidden.bias";          // f32 [3 hidden]
constexpr const char* kOutputWeight = "output.weight";          // f32 [hidden, 2]
constexpr const char* kOutputBias = "output.bias";              // f32 [2]
}  // namespace direction_tensor

// Largest hidden size and window the loader accepts (the paper's are 30 units and 120 steps).
constexpr int kMaxDirectionHidden = 1024;
constexpr int kMaxDirectionWindow = 4096;

// A loaded, validated DirectionNet bundle: an immutable asset shared by its evaluators.
class DirectionNet {
 public:
  DirectionNet(const DirectionNet&) = delete;
  DirectionNet& operator=(const DirectionNet&) = delete;

  // Reads and validates `path`; nullptr with a message naming the file on failure.
  static std::shared_ptr<const DirectionNet> load_file(const std::string& path, std::string& error);
  // Validates a caller-owned buffer (16-byte aligned) that must outlive the returned asset.
  static std::shared_ptr<const DirectionNet> load_buffer(const uint8_t* data, size_t size, std::string& error);

  // GRU hidden units.
  int hidden() const { return hidden_; }
  // Steps of a window (past, the present step, future).
  int window() const { return window_; }
  // Index of the present step (the desired position) in a window; steps after it are predicted.
  int present() const { return present_; }
  // Steps after the present one.
  int future_steps() const { return window_ - present_ - 1; }
  // Seconds between steps.
  float step_seconds() const { return step_seconds_; }
  // Standardisation of the four inputs of a step: (value - mean) / std.
  const float* input_mean() const { return input_mean_; }
  const float* input_std() const { return input_std_; }
  // x W_ih + b_ih (4 -> 3 hidden), h W_hh + b_hh (hidden -> 3 hidden), h W_out + b_out (hidden -> 2).
  const DenseLayer& input_layer() const { return input_; }
  const DenseLayer& hidden_layer() const { return hidden_layer_; }
  const DenseLayer& output_layer() const { return output_; }
  // Identity of this asset: unique in the process, assigned at load.
  uint64_t id() const { return id_; }

 private:
  template <typename T>
  friend std::shared_ptr<const T> detail::load_blob_file(const std::string&, std::string&);
  template <typename T>
  friend std::shared_ptr<const T> detail::load_blob_buffer(const uint8_t*, size_t, std::string&);
  DirectionNet() = default;
  bool parse(const uint8_t* data, size_t size, std::string& error);
  const float* values(const char* name, std::vector<int64_t> shape, std::string& error) const;
  bool read_layer(const char* weight, const char* bias, int in, int out, DenseLayer& layer, std::string& error) const;

  AlignedBuffer owned_;
  BlobView view_;
  int hidden_ = 0, window_ = 0, present_ = 0;
  float step_seconds_ = 0.0f;
  const float* input_mean_ = nullptr;
  const float* input_std_ = nullptr;
  DenseLayer input_, hidden_layer_, output_;
  uint64_t id_ = 0;
};

}  // namespace lmm
