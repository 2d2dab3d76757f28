// Internal: the dense-layer kernels behind ModelEvaluator (scalar, AVX2/FMA and AVX-512).
#pragma once

#include <cstdint>
#include <string>

#include "lmm/model.hpp"
#include "lmm/nn.hpp"

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
using DenseKernel = void (*)(const DenseLayer& layer, const float* x, int x_stride, int rows,
                             float* y, int y_stride, bool gelu, const RowMap& map);

// The `k` (1..kMaxTopK) largest of `count` logits, best first, ties to the lower index: values
// into `best`, indices into `experts`. NaN and -inf logits are never picked; places left
// unfilled hold -inf and a valid index below k, so no index is ever out of range.
using TopKKernel = void (*)(const float* logits, int count, int k, float* best, int32_t* experts);

// Portable kernels.
void top_k_scalar(const float* logits, int count, int k, float* best, int32_t* experts);
void dense_scalar(const DenseLayer& layer, const float* x, int x_stride, int rows, float* y,
                  int y_stride, bool gelu, const RowMap& map);

// One step of a GRU cell with torch's gate order (reset r, update z, new n), in a layout padded
// for SIMD: `padded` (a multiple of 8, >= hidden) values per gate block. Given the input part
// a = x W_ih + b_ih (3 x padded), the hidden weights w (hidden rows of 3 x padded, input-major) and
// bias (3 x padded), sets b = h W_hh + b_hh (into `scratch`, 3 x padded) and h = (1 - z) n + z h
// with r = sigmoid(a_r + b_r), z = sigmoid(a_z + b_z), n = tanh(a_n + r b_n), for all `padded`
// values of h (padding lanes with zero weights stay zero).
using GruStepKernel = void (*)(const float* a, const float* w, const float* bias, int hidden, int padded, float* h,
                               float* scratch);
void gru_step_scalar(const float* a, const float* w, const float* bias, int hidden, int padded, float* h,
                     float* scratch);

// AVX2/FMA kernels, or nullptr when this build has none (non-x86 targets). The AVX2 GRU step
// uses a rational tanh (and sigmoid through it; largest error 6e-7).
DenseKernel dense_avx2_kernel();
TopKKernel top_k_avx2_kernel();
GruStepKernel gru_step_avx2_kernel();
// AVX-512 dense kernel, or nullptr when this build has none (its top-k and GRU step are the
// AVX2 ones).
DenseKernel dense_avx512_kernel();

// The dense kernel of `path` (Scalar, Avx2 or Avx512, available).
DenseKernel dense_kernel_for(KernelPath path);
// The GRU step kernel of `path` (Scalar, Avx2 or Avx512, available).
GruStepKernel gru_step_kernel_for(KernelPath path);
// Replaces Auto by the widest available path; false with a message when `path` is not available
// in this build or on this CPU.
bool resolve_kernel_path(KernelPath& path, std::string& error);

}  // namespace lmm::detail
