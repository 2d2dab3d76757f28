// DirectionNet's runtime evaluator (lmm/asset/direction_net.hpp) against an independent double-precision
// reference of its contract, on every kernel path, with random weights and windows; no allocation
// per call. (The golden test against LibTorch is tests/training/test_direction.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lmm/blob_writer.hpp"
#include "lmm/direction_builder.hpp"
#include "lmm/asset/direction_net.hpp"
#include "lmm/eval/direction_evaluator.hpp"
#include "lmm/eval/kernel_support.hpp"
#include "support/allocation_counter.hpp"

using namespace lmm;

namespace {

// Odd sizes: padded gate blocks, a partly filled last state register; the SIMD kernels keep up
// to 64 units in registers and leave larger nets to the scalar kernel (70). Padded to 16 and 32
// (13, 30), the AVX-512 path runs its own kernel; padded to 40, the AVX2 one.
constexpr int kHiddenSizes[] = {13, 30, 40, 70};
constexpr int kWindow = 24, kPresent = 9;

// Weights uniform in +-1 / sqrt(hidden) (LibTorch's GRU initialisation; at twice that, random
// windows make the rollout chaotic enough to grow float rounding past 1e-4), input statistics
// away from 0 and 1.
DirectionValues random_values(std::mt19937& rng, int hidden) {
  std::uniform_real_distribution<float> weight(-1.0f / std::sqrt(float(hidden)), 1.0f / std::sqrt(float(hidden)));
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = weight(rng);
    return v;
  };
  DirectionValues v;
  v.hidden = hidden, v.window = kWindow, v.present = kPresent, v.step_seconds = 1.0f / 30.0f;
  v.input_mean = {0.2f, 0.6f, -0.1f, 0.7f};
  v.input_std = {1.3f, 2.1f, 0.5f, 0.4f};
  const size_t gates = 3 * size_t(hidden);
  v.input_weight = fill(4 * gates), v.input_bias = fill(gates);
  v.hidden_weight = fill(size_t(hidden) * gates), v.hidden_bias = fill(gates);
  v.output_weight = fill(size_t(hidden) * 2), v.output_bias = fill(2);
  return v;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The evaluator's contract in double precision: future facings (x, z) after the present step.
std::vector<double> reference(const DirectionValues& v, const float* points, const float* facings) {
  const int h_size = v.hidden;
  std::vector<double> h(size_t(h_size), 0.0), future;
  for (int t = 0; t < v.window; ++t) {
    double previous[2];
    for (int c = 0; c < 2; ++c) {
      previous[c] = t == 0 ? facings[c]
                           : (t <= v.present + 1 ? facings[2 * (t - 1) + c] : future[future.size() - 2 + size_t(c)]);
    }
    const double raw[4] = {points[2 * t], points[2 * t + 1], previous[0], previous[1]};
    std::vector<double> a(3 * size_t(h_size)), b(3 * size_t(h_size));
    for (int j = 0; j < 3 * h_size; ++j) {
      a[size_t(j)] = v.input_bias[size_t(j)];
      for (int i = 0; i < 4; ++i) {
        a[size_t(j)] += (raw[i] - v.input_mean[size_t(i)]) / v.input_std[size_t(i)] * v.input_weight[size_t(i * 3 * h_size + j)];
      }
      b[size_t(j)] = v.hidden_bias[size_t(j)];
      for (int i = 0; i < h_size; ++i) b[size_t(j)] += h[size_t(i)] * v.hidden_weight[size_t(i * 3 * h_size + j)];
    }
    for (int u = 0; u < h_size; ++u) {
      const double r = sigmoid(a[size_t(u)] + b[size_t(u)]);
      const double z = sigmoid(a[size_t(h_size + u)] + b[size_t(h_size + u)]);
      const double n = std::tanh(a[size_t(2 * h_size + u)] + r * b[size_t(2 * h_size + u)]);
      h[size_t(u)] = (1.0 - z) * n + z * h[size_t(u)];
    }
    if (t <= v.present) continue;
    double out[2] = {v.output_bias[0], v.output_bias[1]};
    for (int i = 0; i < h_size; ++i) {
      for (int c = 0; c < 2; ++c) out[c] += h[size_t(i)] * v.output_weight[size_t(2 * i + c)];
    }
    const double length = std::hypot(out[0], out[1]);
    future.push_back(out[0] / length);
    future.push_back(out[1] / length);
  }
  return future;
}

}  // namespace

TEST(DirectionNet, EveryKernelPathGivesTheReferenceFacingsWithoutAllocating) {
  std::mt19937 rng(3);
  for (int hidden : kHiddenSizes) {
    SCOPED_TRACE(std::to_string(hidden) + " units");
    const DirectionValues values = random_values(rng, hidden);
    std::vector<uint8_t> bytes;
    std::string error;
    ASSERT_TRUE(build_direction_bundle(values, bytes, error)) << error;
    AlignedBuffer buffer(bytes.size());
    std::copy(bytes.begin(), bytes.end(), buffer.data());
    const auto net = DirectionNet::load_buffer(buffer.data(), buffer.size(), error);
    ASSERT_NE(net, nullptr) << error;
    EXPECT_EQ(net->future_steps(), kWindow - kPresent - 1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (KernelPath path : available_kernel_paths()) {
      SCOPED_TRACE(kernel_path_name(path));
      DirectionEvaluator evaluator;
      ASSERT_TRUE(evaluator.init(net, path, error)) << error;
      std::vector<float> future(2 * size_t(net->future_steps()));
      for (int window = 0; window < 20; ++window) {
        std::vector<float> points(2 * kWindow), facings(2 * (kPresent + 1));
        for (float& p : points) p = 1.5f * normal(rng);
        for (int t = 0; t <= kPresent; ++t) {
          const float angle = 0.3f * normal(rng);
          facings[size_t(2 * t)] = std::sin(angle), facings[size_t(2 * t + 1)] = std::cos(angle);
        }
        test::start_counting_allocations();
        ASSERT_TRUE(evaluator.predict(points.data(), facings.data(), future.data()));
        EXPECT_EQ(test::stop_counting_allocations(), 0);
        const std::vector<double> expected = reference(values, points.data(), facings.data());
        for (size_t i = 0; i < future.size(); ++i) {
          EXPECT_NEAR(future[i], expected[i], 1e-4) << "window " << window << " value " << i;
        }
      }
    }
  }
}

TEST(DirectionNet, BundlesWithBadShapesOrValuesAreRefusedNamingTheTensor) {
  std::mt19937 rng(4);
  const DirectionValues values = random_values(rng, kHiddenSizes[0]);
  std::vector<uint8_t> bytes;
  std::string error;
  DirectionValues wrong = values;
  wrong.input_bias.push_back(0.0f);
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("gru.input.bias"), std::string::npos) << error;
  wrong = values;
  wrong.hidden_weight[5] = INFINITY;
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("gru.hidden.weight"), std::string::npos) << error;
  wrong = values;
  wrong.step_seconds = 0.0f;
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("direction.step_seconds"), std::string::npos) << error;
  DirectionEvaluator evaluator;
  EXPECT_FALSE(evaluator.init(nullptr, KernelPath::Auto, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
}
