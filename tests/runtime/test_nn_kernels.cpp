// White-box tests of the dense kernels behind ModelEvaluator (runtime/src/eval/nn_kernels.hpp): the
// AVX-512 kernel's two ways of streaming a row's own weights, picked by CPU, give the same bits.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "lmm/eval/nn.hpp"
#include "eval/nn_kernels.hpp"

using namespace lmm;

namespace {

constexpr int kStackedExperts = 3;

// A dense layer (kStackedExperts experts stacked, as in a bundle) with random f32 or f16 weights.
struct RandomLayer {
  std::vector<float> weight, bias;
  std::vector<uint16_t> half;
  DenseLayer layer;

  RandomLayer(int in, int out, bool f16, std::mt19937& rng) {
    const size_t count = size_t(kStackedExperts) * in * out;
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::uniform_int_distribution<int> bits(0, 0xffff);
    bias.resize(size_t(kStackedExperts) * out);
    for (float& b : bias) b = value(rng);
    if (f16) {  // finite halves of magnitude 2^-10 .. 2^2, both signs
      half.resize(count);
      for (uint16_t& h : half) h = uint16_t((bits(rng) & 0x83ff) | ((5 + bits(rng) % 13) << 10));
      layer.weight_half = half.data();
    } else {
      weight.resize(count);
      for (float& w : weight) w = value(rng);
      layer.weight = weight.data();
    }
    layer.bias = bias.data();
    layer.in = in;
    layer.out = out;
  }
};

// Whether two float arrays hold the same bits.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(NnKernels, Avx512RowsStreamedInHalvesEqualWholeVectorsBitForBit) {
  if (!avx512_available()) GTEST_SKIP() << "this build or CPU has no AVX-512";
  const detail::DenseKernel halves = detail::dense_avx512_kernel(true), whole = detail::dense_avx512_kernel(false);
  ASSERT_NE(halves, nullptr);
  ASSERT_NE(whole, nullptr);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  int compared = 0;
  for (const bool f16 : {false, true}) {
    for (const int in : {5, 27, 59, 256}) {
      for (const int out : {7, 32, 59, 64, 197, 256, 300}) {
        const RandomLayer l(in, out, f16, rng);
        std::vector<float> x(size_t(3) * in);
        for (float& v : x) v = value(rng);
        const int32_t experts[detail::kExpertPairRows] = {2, 1}, rows0[detail::kExpertPairRows] = {0, 0};
        const float scale[detail::kExpertPairRows] = {0.75f, 0.25f};
        detail::RowMap pair;  // an input's top-2 experts side by side, added into one output row
        pair.experts = experts;
        pair.in_rows = rows0;
        pair.out_rows = rows0;
        pair.out_scale = scale;
        for (const bool gelu : {false, true}) {
          for (const int rows : {1, 2, 3}) {
            std::vector<float> a(size_t(rows) * out, 0.5f), b = a;
            halves(l.layer, x.data(), in, rows, a.data(), out, gelu, detail::RowMap{});
            whole(l.layer, x.data(), in, rows, b.data(), out, gelu, detail::RowMap{});
            EXPECT_TRUE(same_bits(a, b)) << (f16 ? "f16 " : "f32 ") << in << "x" << out << " rows " << rows;
            ++compared;
          }
          std::vector<float> a(size_t(out), 0.5f), b = a;
          halves(l.layer, x.data(), in, detail::kExpertPairRows, a.data(), out, gelu, pair);
          whole(l.layer, x.data(), in, detail::kExpertPairRows, b.data(), out, gelu, pair);
          EXPECT_TRUE(same_bits(a, b)) << (f16 ? "f16 " : "f32 ") << in << "x" << out << " expert pair";
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 2 * 4 * 7 * 2 * 4);
}
