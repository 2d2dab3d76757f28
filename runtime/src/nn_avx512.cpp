// AVX-512 dense kernel (16 floats per vector, 32 vector registers; f16 weights widened by
// vcvtph2ps). This file alone is compiled with -mavx512f -mavx512vl -mavx512dq -mavx512bw -mfma
// (see CMakeLists.txt); it uses no inline library templates, so no AVX-512 code can leak into
// other translation units.
#include "nn_simd_shared.hpp"
#include "nn_kernels.hpp"

#include <cstddef>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__FMA__)
#include <immintrin.h>

namespace lmm::detail {
namespace {

// GELU as on the AVX2 path (A&S 7.1.28 erf, z clamped at 9, |GELU error| < 1e-6), 16 lanes.
inline __m512 gelu16(__m512 x) {
  const __m512 z_full = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
  const __mmask16 far = _mm512_cmp_ps_mask(z_full, _mm512_set1_ps(kErfClamp), _CMP_GE_OQ);
  const __m512 z = _mm512_min_ps(z_full, _mm512_set1_ps(kErfClamp));
  __m512 p = _mm512_set1_ps(kErfPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(kErfPoly[i]));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.0f));
  p = _mm512_mul_ps(p, p);  // ^2
  p = _mm512_mul_ps(p, p);  // ^4
  p = _mm512_mul_ps(p, p);  // ^8
  p = _mm512_mul_ps(p, p);  // ^16
  // q = 1 / p: 14-bit reciprocal and one Newton step.
  const __m512 r0 = _mm512_rcp14_ps(p);
  const __m512 q = _mm512_maskz_mul_ps(static_cast<__mmask16>(~far), r0, _mm512_fnmadd_ps(p, r0, _mm512_set1_ps(2.0f)));
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 factor = _mm512_mask_blend_ps(negative, _mm512_sub_ps(_mm512_set1_ps(2.0f), q), q);
  return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5f)), factor);
}

// 16 weights from p, widened to f32 (exactly, for f16); lanes off in `mask` are 0 and not read.
inline __m512 load16(const float* p, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, p); }
inline __m512 load16(const uint16_t* p, __mmask16 mask) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, p)); }
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }

// R rows x V vectors of outputs from `o` with the weights `weight` (the layer's, f32 or f16); the
// last vector's lanes are `mask` (all on when full). With Accumulate, y += scale * output.
template <int R, int V, bool Accumulate, typename W>
void block(const DenseLayer& l, const W* weight, const BlockRows<R>& rows, int o, __mmask16 mask, bool gelu) {
  const W* w = weight + o;
  __m512 acc[R][V];
  LMM_UNROLL
  for (int v = 0; v < V; ++v) {
    const __m512 b = v + 1 < V ? _mm512_loadu_ps(l.bias + o + 16 * v) : _mm512_maskz_loadu_ps(mask, l.bias + o + 16 * v);
    LMM_UNROLL
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  for (int i = 0; i < l.in; ++i, w += l.out) {
    __m512 wv[V];
    LMM_UNROLL
    for (int v = 0; v < V; ++v) wv[v] = v + 1 < V ? load16(w + 16 * v) : load16(w + 16 * v, mask);
    LMM_UNROLL
    for (int r = 0; r < R; ++r) {
      const __m512 xb = _mm512_set1_ps(rows.x[r][i]);
      LMM_UNROLL
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(xb, wv[v], acc[r][v]);
    }
  }
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    LMM_UNROLL
    for (int v = 0; v < V; ++v) {
      __m512 a = gelu ? gelu16(acc[r][v]) : acc[r][v];
      float* dst = rows.y[r] + o + 16 * v;
      const __mmask16 lanes = v + 1 < V ? static_cast<__mmask16>(0xFFFF) : mask;
      if (Accumulate) a = _mm512_fmadd_ps(_mm512_set1_ps(rows.scale[r]), a, _mm512_maskz_loadu_ps(lanes, dst));
      _mm512_mask_storeu_ps(dst, lanes, a);
    }
  }
}

// Rows r .. r + R - 1, `vectors` (<= V) vectors of outputs from `o`, the last with `mask`.
template <int R, int V>
void block_or_narrower(const DenseLayer& l, const float* x, int xs, float* y, int ys, int r, const RowMap& map, int o,
                       int vectors, __mmask16 mask, bool gelu) {
  if constexpr (V > 1) {
    if (vectors < V) {
      block_or_narrower<R, V - 1>(l, x, xs, y, ys, r, map, o, vectors, mask, gelu);
      return;
    }
  }
  const BlockRows<R> rows = block_rows<R>(x, xs, y, ys, r, map);
  const bool accumulate = map.out_rows != nullptr;
  if (l.weight_half != nullptr) {
    accumulate ? block<R, V, true>(l, l.weight_half, rows, o, mask, gelu)
               : block<R, V, false>(l, l.weight_half, rows, o, mask, gelu);
  } else {
    accumulate ? block<R, V, true>(l, l.weight, rows, o, mask, gelu)
               : block<R, V, false>(l, l.weight, rows, o, mask, gelu);
  }
}

// The last `left` (< N + 1) rows from `r` as one block of exactly `left` rows.
template <int N, int V>
void leftover_rows(const DenseLayer& l, const float* x, int xs, float* y, int ys, int r, int left, const RowMap& map,
                   int o, int vectors, __mmask16 mask, bool gelu) {
  if constexpr (N >= 1) {
    if (left == N) {
      block_or_narrower<N, V>(l, x, xs, y, ys, r, map, o, vectors, mask, gelu);
    } else {
      leftover_rows<N - 1, V>(l, x, xs, y, ys, r, left, map, o, vectors, mask, gelu);
    }
  }
}

// Columns outer (16 V at a time, so that block of the weights stays in L1), rows inner in
// blocks of R, the leftover rows as one smaller block.
template <int R, int V>
void dense_blocks(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, const RowMap& map, bool gelu) {
  constexpr int span = 16 * V;
  for (int o = 0; o < l.out; o += span) {
    const int n = l.out - o < span ? l.out - o : span;
    const int vectors = (n + 15) / 16, last = n - 16 * (vectors - 1);
    const __mmask16 mask = static_cast<__mmask16>((1u << last) - 1u);
    int r = 0;
    for (; r + R <= rows; r += R) block_or_narrower<R, V>(l, x, xs, y, ys, r, map, o, vectors, mask, gelu);
    leftover_rows<R - 1, V>(l, x, xs, y, ys, r, rows - r, map, o, vectors, mask, gelu);
  }
}

// Register budgets (32 vector registers): R x V accumulators plus V weights plus a broadcast.
void dense_avx512(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, bool gelu, const RowMap& map) {
  switch (rows) {
    case 1: dense_blocks<1, 8>(l, x, xs, 1, y, ys, map, gelu); break;
    case 2: dense_blocks<2, 4>(l, x, xs, 2, y, ys, map, gelu); break;
    case 3: dense_blocks<3, 4>(l, x, xs, 3, y, ys, map, gelu); break;
    default:
      if (l.out <= 32) {
        dense_blocks<8, 2>(l, x, xs, rows, y, ys, map, gelu);  // narrow layers (experts)
      } else {
        dense_blocks<6, 4>(l, x, xs, rows, y, ys, map, gelu);
      }
      break;
  }
}

}  // namespace

DenseKernel dense_avx512_kernel() { return &dense_avx512; }

}  // namespace lmm::detail

#else

namespace lmm::detail {

DenseKernel dense_avx512_kernel() { return nullptr; }

}  // namespace lmm::detail

#endif
