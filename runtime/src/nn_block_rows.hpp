// Internal: the row bookkeeping shared by the SIMD dense kernels (nn_avx2.cpp, nn_avx512.cpp).
// Everything here has internal linkage (an unnamed namespace), so each kernel file compiles its
// own copy for its instruction set and no wider instruction can reach another file's code.
#pragma once

#include <cstddef>

#include "nn_kernels.hpp"

// Fixed-size loops over accumulators must be unrolled so that they live in registers.
#if defined(__clang__)
#define LMM_UNROLL _Pragma("unroll")
#else
#define LMM_UNROLL _Pragma("GCC unroll 16")
#endif

namespace lmm::detail {
namespace {

// The input and output rows of one block of R rows, and the output scale when accumulating.
template <int R>
struct BlockRows {
  const float* x[R];
  float* y[R];
  float scale[R];
};

// Rows r .. r + R - 1 of a dense call, through `map` where it gives row indices.
template <int R>
BlockRows<R> block_rows(const float* x, int xs, float* y, int ys, int r, const RowMap& map) {
  BlockRows<R> b;
  for (int j = 0; j < R; ++j) {
    const int row = r + j;
    b.x[j] = x + ptrdiff_t(map.in_rows != nullptr ? map.in_rows[row] : row) * xs;
    b.y[j] = y + ptrdiff_t(map.out_rows != nullptr ? map.out_rows[row] : row) * ys;
    b.scale[j] = map.out_scale != nullptr ? map.out_scale[row] : 0.0f;
  }
  return b;
}

}  // namespace
}  // namespace lmm::detail
