// The portable DirectionNet GRU window kernel (the AVX2 and AVX-512 ones are in eval/arch/).
#include <algorithm>
#include <cmath>

#include "eval/nn_kernels.hpp"

namespace lmm::detail {

void gru_window_scalar(const GruWindow& g, const float* present_facing, float* future) {
  const int padded = g.padded, width = 3 * padded;
  float* h = g.state;
  float* b = g.scratch;
  std::fill(h, h + padded, 0.0f);
  const float* previous = present_facing;
  const float* feedback_x = g.feedback_weight;
  const float* feedback_z = g.feedback_weight + width;
  for (int t = 0; t < g.window; ++t) {
    std::copy(g.hidden_bias, g.hidden_bias + width, b);
    for (int i = 0; i < g.hidden; ++i) {
      for (int j = 0; j < width; ++j) b[j] += h[i] * g.hidden_weight[size_t(i) * width + j];
    }
    const float* a = g.input_gates + size_t(t) * width;
    const float fx = t > g.present + 1 ? previous[0] : 0.0f, fz = t > g.present + 1 ? previous[1] : 0.0f;
    auto input = [&](int j) { return a[j] + fx * feedback_x[j] + fz * feedback_z[j]; };
    for (int u = 0; u < padded; ++u) {
      // The r and z blocks hold x / 2: sigmoid(x) through std::exp (cheaper than std::tanh).
      const float r = sigmoid(2.0f * (input(u) + b[u]));
      const float z = sigmoid(2.0f * (input(padded + u) + b[padded + u]));
      const float c = b[2 * padded + u];
      const float n = std::tanh(input(2 * padded + u) + c + (2.0f * r - 1.0f) * c);
      h[u] = n + z * (h[u] - n);
    }
    if (t <= g.present) continue;
    float out[2] = {g.output_bias[0], g.output_bias[1]};
    for (int i = 0; i < g.hidden; ++i) {
      out[0] += h[i] * g.output_weight[i];
      out[1] += h[i] * g.output_weight[padded + i];
    }
    float* facing = future + 2 * (t - g.present - 1);
    emit_facing(out[0], out[1], previous, facing);
    previous = facing;
  }
}

}  // namespace lmm::detail
