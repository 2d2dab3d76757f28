#include "lmm/eval/direction_evaluator.hpp"

#include <algorithm>
#include <cmath>

#include "eval/nn_kernels.hpp"
#include "lmm/core/math.hpp"

namespace lmm {

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
    for (int c = 0; c < 2; ++c)
      output_weight_[size_t(c) * padded_ + i] = n.output_layer().weight[i * kDirectionOutputs + c];
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
