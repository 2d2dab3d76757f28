// AVX-512 dense kernel (16 floats per vector, 32 vector registers; f16 weights widened by
// vcvtph2ps). This file alone is compiled with -mavx512f -mavx512vl -mavx512dq -mavx512bw -mfma
// (see CMakeLists.txt); it uses no inline library templates, so no AVX-512 code can leak into
// other translation units.
#include "eval/nn_kernels.hpp"
#include "eval/nn_simd_shared.hpp"

#include <cstddef>
#include <type_traits>

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
inline __m512 load16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// acc[r][v] = bias[r] + x row r times the weights from weights[r] (f32 or f16) over all the
// layer's inputs, for rows that each stream their own weights (a single row, or rows with their own
// experts); the last vector's lanes are `mask`. In 256-bit halves, with the same FMA per lane as in 512 bits (so
// the same bits): on Zen 4, which splits 512-bit operations in two, a 512-bit vcvtph2ps holds the
// FMA pipes twice as long as two 256-bit ones, and 256-bit loads split across cache lines half as
// often on rows that are no multiple of 16 floats wide. Single-row f16 layers ran 1.3-1.4x faster
// this way there, f32 ones 0.97-1.09x (docs/lab/2026-11-23-single-row-kernels.md). Zen 5 runs them faster in whole
// vectors (stream_whole_products).
template <int R, int V, typename W>
[[gnu::always_inline]] inline void stream_half_products(const DenseLayer& l, const W* const (&weights)[R],
                                                        const float* const (&bias)[R], const BlockRows<R>& rows,
                                                        __mmask16 mask, __m512 (&acc)[R][V]) {
  const W* w[R];  // in registers, not through the reference
  for (int r = 0; r < R; ++r) w[r] = weights[r];
  auto lanes = [mask](int v, int half) {  // the lanes of half `half` (0 or 1) of vector v
    return static_cast<__mmask8>((v + 1 < V ? 0xFFFFu : unsigned(mask)) >> (8 * half));
  };
  __m256 lo[R][V], hi[R][V];
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    LMM_UNROLL
    for (int v = 0; v < V; ++v) {
      lo[r][v] = _mm256_maskz_loadu_ps(lanes(v, 0), bias[r] + 16 * v);
      hi[r][v] = _mm256_maskz_loadu_ps(lanes(v, 1), bias[r] + 16 * v + 8);
    }
  }
  // 8 weights from p as f32 (lanes off are 0 and not read); the masked f16 conversion is
  // AVX-512VL's, so this file needs no F16C flag.
  auto widen8 = [](const W* p, __mmask8 on) {
    if constexpr (std::is_same_v<W, uint16_t>) {
      return _mm256_maskz_cvtph_ps(0xFF, _mm_maskz_loadu_epi16(on, p));
    } else {
      return _mm256_maskz_loadu_ps(on, p);
    }
  };
  for (int i = 0; i < l.in; ++i) {
    LMM_UNROLL
    for (int r = 0; r < R; ++r) {
      const __m256 xb = _mm256_set1_ps(rows.x[r][i]);
      LMM_UNROLL
      for (int v = 0; v < V; ++v) {
        lo[r][v] = _mm256_fmadd_ps(xb, widen8(w[r] + 16 * v, lanes(v, 0)), lo[r][v]);
        hi[r][v] = _mm256_fmadd_ps(xb, widen8(w[r] + 16 * v + 8, lanes(v, 1)), hi[r][v]);
      }
      w[r] += l.out;
    }
  }
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    LMM_UNROLL
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_insertf32x8(_mm512_castps256_ps512(lo[r][v]), hi[r][v], 1);
  }
}

// acc[r][v] = bias[r]'s vector v (the last one's lanes `mask`, the others all on).
template <int R, int V>
[[gnu::always_inline]] inline void load_biases(const float* const (&bias)[R], __mmask16 mask, __m512 (&acc)[R][V]) {
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    LMM_UNROLL
    for (int v = 0; v < V; ++v) {
      acc[r][v] = v + 1 < V ? _mm512_loadu_ps(bias[r] + 16 * v) : _mm512_maskz_loadu_ps(mask, bias[r] + 16 * v);
    }
  }
}

// stream_half_products' contract in whole 512-bit vectors, for rows with their own experts (a
// single row in whole vectors is the shared-weight block of one row): on CPUs with 512-bit
// datapaths (Zen 5) a frame of the `paper` bundle ran 0.81x the time of the halves in f16 and
// 0.86x in f32.
template <int R, int V, typename W>
[[gnu::always_inline]] inline void stream_whole_products(const DenseLayer& l, const W* const (&weights)[R],
                                                         const float* const (&bias)[R], const BlockRows<R>& rows,
                                                         __mmask16 mask, __m512 (&acc)[R][V]) {
  const W* w[R];  // in registers, not through the reference
  for (int r = 0; r < R; ++r) w[r] = weights[r];
  load_biases<R, V>(bias, mask, acc);
  for (int i = 0; i < l.in; ++i) {
    LMM_UNROLL
    for (int r = 0; r < R; ++r) {
      const __m512 xb = _mm512_set1_ps(rows.x[r][i]);
      LMM_UNROLL
      for (int v = 0; v < V; ++v) {
        const __m512 wv = v + 1 < V ? load16(w[r] + 16 * v) : load16(w[r] + 16 * v, mask);
        acc[r][v] = _mm512_fmadd_ps(xb, wv, acc[r][v]);
      }
      w[r] += l.out;
    }
  }
}

// R rows x V vectors of outputs from `o` with the weights `weight` (the layer's, f32 or f16); the
// last vector's lanes are `mask` (all on when full). With Accumulate, y += scale * output.
// Shared: every row uses the layer's weights (loaded once for all rows); otherwise row r uses
// those of expert rows.expert[r] (the rows' FMA chains then interleave, hiding their latency).
// Halves: rows that stream their own weights go in 256-bit halves (else in whole vectors).
template <bool Halves, int R, int V, bool Accumulate, bool Shared, typename W>
void block(const DenseLayer& l, const W* weight, const BlockRows<R>& rows, int o, __mmask16 mask, bool gelu) {
  const W* w[R];
  const float* bias[R];
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    w[r] = weight + o + size_t(rows.expert[r]) * l.in * l.out;
    bias[r] = l.bias + o + size_t(rows.expert[r]) * l.out;
  }
  __m512 acc[R][V];
  if constexpr (Halves && (!Shared || R == 1)) {
    stream_half_products<R, V>(l, w, bias, rows, mask, acc);
  } else if constexpr (!Shared) {
    stream_whole_products<R, V>(l, w, bias, rows, mask, acc);
  } else {  // each weight vector (f16 widened 512 bits at a time) loaded once for all the rows
    load_biases<R, V>(bias, mask, acc);
    for (int i = 0; i < l.in; ++i, w[0] += l.out) {
      __m512 wv[V];
      LMM_UNROLL
      for (int v = 0; v < V; ++v) wv[v] = v + 1 < V ? load16(w[0] + 16 * v) : load16(w[0] + 16 * v, mask);
      LMM_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m512 xb = _mm512_set1_ps(rows.x[r][i]);
        LMM_UNROLL
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(xb, wv[v], acc[r][v]);
      }
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

// block() on the layer's weights (f32 or f16), accumulating or not.
template <bool Halves, int R, int V, bool Shared>
void block_of(const DenseLayer& l, const BlockRows<R>& rows, bool accumulate, int o, __mmask16 mask, bool gelu) {
  if (l.weight_half != nullptr) {
    accumulate ? block<Halves, R, V, true, Shared>(l, l.weight_half, rows, o, mask, gelu)
               : block<Halves, R, V, false, Shared>(l, l.weight_half, rows, o, mask, gelu);
  } else {
    accumulate ? block<Halves, R, V, true, Shared>(l, l.weight, rows, o, mask, gelu)
               : block<Halves, R, V, false, Shared>(l, l.weight, rows, o, mask, gelu);
  }
}

// Rows r .. r + R - 1, `vectors` (<= V) vectors of outputs from `o`, the last with `mask`.
template <bool Halves, int R, int V>
void block_or_narrower(const DenseLayer& l, const float* x, int xs, float* y, int ys, int r, const RowMap& map, int o,
                       int vectors, __mmask16 mask, bool gelu) {
  if constexpr (V > 1) {
    if (vectors < V) {
      block_or_narrower<Halves, R, V - 1>(l, x, xs, y, ys, r, map, o, vectors, mask, gelu);
      return;
    }
  }
  const BlockRows<R> rows = block_rows<R>(x, xs, y, ys, r, map);
  const bool accumulate = map.out_rows != nullptr;
  if constexpr (R == kExpertPairRows) {
    if (map.experts != nullptr) {
      block_of<Halves, R, V, false>(l, rows, accumulate, o, mask, gelu);
      return;
    }
  }
  block_of<Halves, R, V, true>(l, rows, accumulate, o, mask, gelu);
}

// The last `left` (< N + 1) rows from `r` as one block of exactly `left` rows.
template <bool Halves, int N, int V>
void leftover_rows(const DenseLayer& l, const float* x, int xs, float* y, int ys, int r, int left, const RowMap& map,
                   int o, int vectors, __mmask16 mask, bool gelu) {
  if constexpr (N >= 1) {
    if (left == N) {
      block_or_narrower<Halves, N, V>(l, x, xs, y, ys, r, map, o, vectors, mask, gelu);
    } else {
      leftover_rows<Halves, N - 1, V>(l, x, xs, y, ys, r, left, map, o, vectors, mask, gelu);
    }
  }
}

// Columns outer (16 V at a time, so that block of the weights stays in L1), rows inner in
// blocks of R, the leftover rows as one smaller block.
template <bool Halves, int R, int V>
void dense_blocks(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, const RowMap& map,
                  bool gelu) {
  constexpr int span = 16 * V;
  for (int o = 0; o < l.out; o += span) {
    const int n = l.out - o < span ? l.out - o : span;
    const int vectors = (n + 15) / 16, last = n - 16 * (vectors - 1);
    const __mmask16 mask = static_cast<__mmask16>((1u << last) - 1u);
    int r = 0;
    for (; r + R <= rows; r += R) block_or_narrower<Halves, R, V>(l, x, xs, y, ys, r, map, o, vectors, mask, gelu);
    leftover_rows<Halves, R - 1, V>(l, x, xs, y, ys, r, rows - r, map, o, vectors, mask, gelu);
  }
}

// Register budgets (32 vector registers): R x V accumulators plus V weights plus a broadcast; rows
// streaming their own weights in halves hold 2 R V 256-bit halves (a single row's 16 vectors spill
// two, which ran as fast as 13 vectors a pass).
template <bool Halves>
void dense_avx512(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, bool gelu,
                  const RowMap& map) {
  switch (rows) {
    // One row: up to 256 outputs per pass, so a layer's weights (rows of at most 256) stream
    // through once, front to back.
    case 1: dense_blocks<Halves, 1, 16>(l, x, xs, 1, y, ys, map, gelu); break;
    case 2: dense_blocks<Halves, 2, 4>(l, x, xs, 2, y, ys, map, gelu); break;
    case 3: dense_blocks<Halves, 3, 4>(l, x, xs, 3, y, ys, map, gelu); break;
    default:
      if (l.out <= 32) {
        dense_blocks<Halves, 8, 2>(l, x, xs, rows, y, ys, map, gelu);  // narrow layers (experts)
      } else {
        dense_blocks<Halves, 6, 4>(l, x, xs, rows, y, ys, map, gelu);
      }
      break;
  }
}

// The lane operations of the shared GRU window kernel (nn_simd_shared.hpp), 16 floats per register.
struct Avx512Lanes {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V set1(float v) { return _mm512_set1_ps(v); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V rcp(V a) { return _mm512_rcp14_ps(a); }  // 14 bits
  static V lane(V v, int k) { return _mm512_permutexvar_ps(_mm512_set1_epi32(k), v); }
  static float sum(V v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

DenseKernel dense_avx512_kernel(bool halves) { return halves ? &dense_avx512<true> : &dense_avx512<false>; }
// Three accumulator sets where 32 registers hold them (up to 32 units), else two: each step
// waits for a third (a half) of the chain of dependent multiply-adds. For 30 units, three sets
// ran 5% faster than two and as fast as four (docs/path-following.md#facing).
GruWindowKernel gru_window_avx512_kernel(int padded) {
  constexpr GruWindowKernel kKernels[] = {&gru_window_simd<Avx512Lanes, 1, 3>, &gru_window_simd<Avx512Lanes, 2, 3>,
                                          &gru_window_simd<Avx512Lanes, 3, 2>, &gru_window_simd<Avx512Lanes, 4, 2>};
  static_assert(16 * (sizeof(kKernels) / sizeof(kKernels[0])) == kMaxSimdGruPadded, "one kernel per register count");
  return padded % 16 == 0 && padded >= 16 && padded <= kMaxSimdGruPadded ? kKernels[padded / 16 - 1] : nullptr;
}

}  // namespace lmm::detail

#else

namespace lmm::detail {

DenseKernel dense_avx512_kernel(bool) { return nullptr; }
GruWindowKernel gru_window_avx512_kernel(int) { return nullptr; }

}  // namespace lmm::detail

#endif
