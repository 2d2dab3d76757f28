// Internal: the dense-layer kernels behind ModelEvaluator (scalar and AVX2/FMA).
#pragma once

#include <cstdint>

#include "lmm/model.hpp"

namespace lmm::detail {

// For r < rows: y[r * y_stride + o] = act(b[o] + sum_i x[r * x_stride + i] * w[i * out + o]),
// act = GELU (erf form) when `gelu`, else identity.
using DenseKernel = void (*)(const DenseLayer& layer, const float* x, int x_stride, int rows,
                             float* y, int y_stride, bool gelu);

// The `k` (1..kMaxTopK) largest of `count` logits, best first, ties to the lower index: values
// into `best`, indices into `experts`. NaN and -inf logits are never picked; places left
// unfilled hold -inf and a valid index below k, so no index is ever out of range.
using TopKKernel = void (*)(const float* logits, int count, int k, float* best, int32_t* experts);

// Portable kernels.
void top_k_scalar(const float* logits, int count, int k, float* best, int32_t* experts);
void dense_scalar(const DenseLayer& layer, const float* x, int x_stride, int rows, float* y,
                  int y_stride, bool gelu);

// AVX2/FMA kernels, or nullptr when this build has none (non-x86 targets).
DenseKernel dense_avx2_kernel();
TopKKernel top_k_avx2_kernel();

}  // namespace lmm::detail
