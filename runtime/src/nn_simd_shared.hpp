// Internal: what the SIMD dense kernels (nn_avx2.cpp, nn_avx512.cpp) share: the GELU's erf
// coefficients and the row bookkeeping of a block.
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

// Abramowitz & Stegun 7.1.28: 1 - erf(z) = 1 / (1 + a1 z + ... + a6 z^6)^16 for z >= 0
// (|error| <= 3e-7), highest power first for Horner's rule.
constexpr float kErfPoly[6] = {0.0000430638f, 0.0002765672f, 0.0001520143f, 0.0092705272f, 0.0422820123f, 0.0705230784f};
constexpr float kErfClamp = 9.0f;  // z beyond this: 1 - erf(z) < 1e-36, and the 16th power stays finite

// The input and output rows of one block of R rows, the output scale when accumulating, and
// each row's expert in a stacked expert layer (0 unless RowMap::experts gives them).
template <int R>
struct BlockRows {
  const float* x[R];
  float* y[R];
  float scale[R];
  int expert[R];
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
    b.expert[j] = map.experts != nullptr ? map.experts[row] : 0;
  }
  return b;
}

}  // namespace
}  // namespace lmm::detail
