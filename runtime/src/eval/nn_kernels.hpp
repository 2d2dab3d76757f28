// Internal: the dense-layer kernels behind ModelEvaluator (scalar, AVX2/FMA and AVX-512).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"

namespace lmm::detail {

// Optional row mapping of a dense call (used to run experts on their routed rows in place):
// row r reads x row in_rows[r] (else r); with out_rows, out_scale[r] times row r's output is
// added to y row out_rows[r] (else row r's output is written to y row r); rows sharing an
// out_rows target add into it in row order. With experts (calls of exactly 2 rows, e.g. one
// input's top-2 experts side by side), the layer is expert 0's copy of a stacked expert layer
// and row r uses expert experts[r]'s weights and bias instead.
struct RowMap {
  const int32_t* in_rows = nullptr;
  const int32_t* out_rows = nullptr;
  const float* out_scale = nullptr;
  const int32_t* experts = nullptr;
};

// Calls with RowMap::experts have this many rows.
constexpr int kExpertPairRows = 2;

// For r < rows: output row r = act(b + x row (mapped) * W), act = GELU (erf form) when `gelu`,
// else identity; x rows are x_stride floats apart, y rows y_stride; W is input-major, f32 or f16
// (layer.weight_half, widened exactly to f32 in registers, so the sums equal those of f32
// weights holding the same values).
using DenseKernel = void (*)(const DenseLayer& layer, const float* x, int x_stride, int rows, float* y, int y_stride,
                             bool gelu, const RowMap& map);

// The `k` (1..kMaxTopK) largest of `count` logits, best first, ties to the lower index: values
// into `best`, indices into `experts`. NaN and -inf logits are never picked; places left
// unfilled hold -inf and a valid index below k, so no index is ever out of range.
using TopKKernel = void (*)(const float* logits, int count, int k, float* best, int32_t* experts);

// Row r of a dense call: its input and output rows (through `map` where it gives row indices)
// and the weights and bias of its expert (map.experts; expert 0 without).
template <typename W>
struct DenseRow {
  const float* x;
  float* y;
  const W* weights;
  const float* bias;
};
template <typename W>
DenseRow<W> dense_row(const DenseLayer& l, const W* weight, const float* x, int xs, float* y, int ys, int r,
                      const RowMap& map) {
  const size_t expert = map.experts != nullptr ? size_t(map.experts[r]) : 0;
  return {x + size_t(map.in_rows != nullptr ? map.in_rows[r] : r) * xs,
          y + size_t(map.out_rows != nullptr ? map.out_rows[r] : r) * ys, weight + expert * l.in * l.out,
          l.bias + expert * l.out};
}

// Portable kernels.
float gelu_scalar(float v);  // GELU, erf form (as torch::gelu)
// The logistic sigmoid 1 / (1 + exp(-v)).
inline float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }
void top_k_scalar(const float* logits, int count, int k, float* best, int32_t* experts);
void dense_scalar(const DenseLayer& layer, const float* x, int x_stride, int rows, float* y, int y_stride, bool gelu,
                  const RowMap& map);

// A GRU with torch's gate order (reset r, update z, new n) run from a zero state over the steps
// of a DirectionNet window, in a layout padded for SIMD: `padded` (a multiple of 8, >= hidden)
// values per gate block, padding lanes with zero weights. The r and z blocks of every input and
// weight are halved, and the n block of the hidden ones too, so that sigmoid(x) = (1 + tanh(x /
// 2)) / 2 needs no scaling and r (h W_hn + b_hn) = c + tanh(x_r) c with c the halved product.
struct GruWindow {
  const float* input_gates = nullptr;      // [window][3 padded]: x_t W_ih + b_ih of each step
  const float* hidden_weight = nullptr;    // [hidden][3 padded]: W_hh, 32-byte aligned
  const float* hidden_bias = nullptr;      // [3 padded]: b_hh
  const float* feedback_weight = nullptr;  // [2][3 padded]: input per unit of a fed-back facing's x, z
  const float* output_weight = nullptr;    // [2][padded]: the output layer's x and z columns
  const float* output_bias = nullptr;      // [2]
  int hidden = 0, padded = 0, window = 0, present = 0;
  float* state = nullptr;    // scratch of the scalar kernel: [padded]
  float* scratch = nullptr;  // scratch of the scalar kernel: [3 padded]
};

// Runs `gru`: every step after `present` emits a facing, the output layer's (x, z) normalised, or
// the previous facing where that length is not finite or below 1e-6 (the first one's previous is
// present_facing); every step after present + 1 adds its predecessor's facing times
// feedback_weight to its input gates. Writes window - present - 1 facings (x, z) into `future`.
using GruWindowKernel = void (*)(const GruWindow& gru, const float* present_facing, float* future);
void gru_window_scalar(const GruWindow& gru, const float* present_facing, float* future);

// The facing a GRU window emits for output-layer values (x, z): normalised, or `previous` (x, z)
// where the length is not finite or below 1e-6.
inline void emit_facing(float x, float z, const float* previous, float* facing) {
  const float length = std::sqrt(x * x + z * z);
  const bool usable = std::isfinite(length) && length > 1e-6f;
  facing[0] = usable ? x / length : previous[0];
  facing[1] = usable ? z / length : previous[1];
}

// AVX2/FMA kernels, or nullptr when this build has none (non-x86 targets).
DenseKernel dense_avx2_kernel();
TopKKernel top_k_avx2_kernel();
// The AVX2 GRU window kernel for `padded` values per gate block, or nullptr when this build has
// none or padded > kMaxSimdGruPadded. It keeps the state in registers and uses a rational tanh
// (largest error 6e-7).
GruWindowKernel gru_window_avx2_kernel(int padded);
constexpr int kMaxSimdGruPadded = 64;
// AVX-512 dense kernel, or nullptr when this build has none (its top-k kernel is the AVX2 one).
// `halves`: rows that stream their own weights (a single row, an input's expert pair) go in
// 256-bit halves, faster where the CPU splits 512-bit operations in two (Zen 4); else in whole
// 512-bit vectors. Both give the same bits.
DenseKernel dense_avx512_kernel(bool halves);
// The AVX-512 GRU window kernel for `padded` values per gate block, or nullptr when this build has
// none or padded is no multiple of 16 up to kMaxSimdGruPadded (the AVX2 one runs those).
GruWindowKernel gru_window_avx512_kernel(int padded);

// WebAssembly SIMD128 dense kernel, or nullptr when this build has none (not -msimd128).
DenseKernel dense_simd128_kernel();

// The dense kernel of `path` (Scalar, Avx2 or Avx512, available).
DenseKernel dense_kernel_for(KernelPath path);
// The top-k kernel of `path` (available): the AVX2 one on the x86 SIMD paths, else the scalar one.
TopKKernel top_k_kernel_for(KernelPath path);
// The GRU window kernel of `path` (available) for `padded` values per gate block: on Avx512 the
// AVX-512 one where it takes that size, else on the x86 SIMD paths the AVX2 one where it takes that
// size, else the scalar one.
GruWindowKernel gru_window_kernel_for(KernelPath path, int padded);
// Replaces Auto by the widest available path; false with a message when `path` is not available
// in this build or on this CPU.
bool resolve_kernel_path(KernelPath& path, std::string& error);

}  // namespace lmm::detail
