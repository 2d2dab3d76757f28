// AVX2/FMA dense kernel (f16 weights widened by F16C). This file alone is compiled with -mavx2
// -mfma -mf16c (see CMakeLists.txt);
// it uses no inline library templates, so no AVX2 code can leak into other translation units.
#include "eval/nn_kernels.hpp"
#include "eval/nn_simd_shared.hpp"

#include <cstddef>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

namespace lmm::detail {
namespace {

// GELU(x) = x / 2 (1 + erf(x / sqrt 2)) with erf from Abramowitz & Stegun 7.1.28
// (|erf error| <= 3e-7, |GELU error| < 1e-6): 1 - erf(z) = q = 1 / (1 + a1 z + ... + a6 z^6)^16
// for z >= 0. z is clamped at 9 so the 16th power stays finite, and q is set to 0 from there on
// (true q < 1e-36), so GELU(x) -> 0 for large negative x. Written as x / 2 * q for x < 0 and
// x / 2 * (2 - q) otherwise, so there is no cancellation for negative x. GELU(-inf) is NaN, as
// on the scalar path.
inline __m256 gelu8(__m256 x) {
  const __m256 z_full = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
  const __m256 far = _mm256_cmp_ps(z_full, _mm256_set1_ps(kErfClamp), _CMP_GE_OQ);
  const __m256 z = _mm256_min_ps(z_full, _mm256_set1_ps(kErfClamp));
  __m256 p = _mm256_set1_ps(kErfPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kErfPoly[i]));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.0f));
  p = _mm256_mul_ps(p, p);  // ^2
  p = _mm256_mul_ps(p, p);  // ^4
  p = _mm256_mul_ps(p, p);  // ^8
  p = _mm256_mul_ps(p, p);  // ^16
  // q = 1 / p by the approximate reciprocal and one Newton step (relative error ~1e-7).
  const __m256 r0 = _mm256_rcp_ps(p);
  const __m256 q = _mm256_andnot_ps(far, _mm256_mul_ps(r0, _mm256_fnmadd_ps(p, r0, _mm256_set1_ps(2.0f))));
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256 factor = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.0f), q), q, negative);
  return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), factor);
}

// Lane mask with the first `n` (1..8) lanes on.
inline __m256i lane_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Lane mask with lanes `n` (0..7) to 7 on.
inline __m256i lanes_from(int n) {
  return _mm256_cmpgt_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(n - 1));
}

// 8 weights from p, widened to f32 (exactly, for f16).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
// The first n (1..7) weights from p (lanes on in `mask`), 0 in the other lanes; reads nothing beyond.
inline __m256 load8_first(const float* p, __m256i mask, int) { return _mm256_maskload_ps(p, mask); }
inline __m256 load8_first(const uint16_t* p, __m256i, int n) {
  alignas(16) uint16_t h[8] = {};
  for (int j = 0; j < n; ++j) h[j] = p[j];
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

// How a block's last vector covers the `last` (1..7) outputs left when the layer's width is no
// multiple of 8.
enum class Tail {
  None,     // every vector is full
  Shifted,  // the last vector ends at the layer's last output (layers of 8 or more outputs):
            // full loads, and only its top `last` lanes are stored
  Masked,   // the last vector's first `last` lanes are loaded and stored (layers under 8 wide)
};

// R rows x V vectors of outputs starting at `o`, the last vector as `T` says. With Accumulate,
// y += scale * output. Each output lane sums bias + x0 w0 + x1 w1 + ... in that order
// whatever its vector, so every block shape gives the same bits. Shared: every row uses the
// layer's weights (loaded once for all rows); otherwise row r uses those of expert
// rows.expert[r] (the rows' FMA chains then interleave, hiding their latency).
template <int R, int V, Tail T, bool Accumulate, bool Shared, typename W>
void block(const DenseLayer& l, const W* weight, const BlockRows<R>& rows, int o, int last, bool gelu) {
  const int shift = T == Tail::Shifted ? 8 - last : 0;
  const __m256i mask = T == Tail::Shifted ? lanes_from(shift) : lane_mask(last);  // the lanes stored
  auto partial = [](int v) { return T == Tail::Masked && v + 1 == V; };
  int at[V];  // first output of each vector
  LMM_UNROLL
  for (int v = 0; v < V; ++v) at[v] = o + 8 * v - (v + 1 == V ? shift : 0);
  const W* w[R];
  __m256 acc[R][V];
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    w[r] = weight + size_t(rows.expert[r]) * l.in * l.out;
    const float* bias = l.bias + size_t(rows.expert[r]) * l.out;
    LMM_UNROLL
    for (int v = 0; v < V; ++v) {
      acc[r][v] = partial(v) ? _mm256_maskload_ps(bias + at[v], mask) : _mm256_loadu_ps(bias + at[v]);
    }
  }
  auto weights = [&](const W* p, int v) { return partial(v) ? load8_first(p + at[v], mask, last) : load8(p + at[v]); };
  for (int i = 0; i < l.in; ++i) {
    if constexpr (Shared && R > 1) {  // each weight vector loaded once for all the rows
      __m256 wv[V];
      LMM_UNROLL
      for (int v = 0; v < V; ++v) wv[v] = weights(w[0], v);
      w[0] += l.out;
      LMM_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m256 xb = _mm256_broadcast_ss(rows.x[r] + i);
        LMM_UNROLL
        for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(xb, wv[v], acc[r][v]);
      }
    } else {
      // Each weight vector straight into its FMA: 8 accumulators and 8 widened f16 weight
      // vectors would not fit in the 16 registers (an accumulator would live in memory).
      LMM_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m256 xb = _mm256_broadcast_ss(rows.x[r] + i);
        LMM_UNROLL
        for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(xb, weights(w[r], v), acc[r][v]);
        w[r] += l.out;
      }
    }
  }
  LMM_UNROLL
  for (int r = 0; r < R; ++r) {
    LMM_UNROLL
    for (int v = 0; v < V; ++v) {
      __m256 a = gelu ? gelu8(acc[r][v]) : acc[r][v];
      float* dst = rows.y[r] + at[v];
      const bool full = T == Tail::None || v + 1 < V;
      if (Accumulate) {
        const __m256 old = T == Tail::Shifted || full ? _mm256_loadu_ps(dst) : _mm256_maskload_ps(dst, mask);
        a = _mm256_fmadd_ps(_mm256_set1_ps(rows.scale[r]), a, old);
      }
      if (full) {
        _mm256_storeu_ps(dst, a);
      } else {
        _mm256_maskstore_ps(dst, mask, a);
      }
    }
  }
}

// Widest block (in 8-float vectors) per row count: enough accumulators to hide FMA latency
// while leaving registers for the weights.
template <int R>
constexpr int max_vectors() {
  return R == 1 ? 8 : (R == 2 ? 4 : 3);
}

// block() on the layer's weights (f32 or f16), accumulating or not, with rows sharing the
// weights unless `map` gives each row its expert.
template <int R, int V, Tail T, bool Shared>
void block_of(const DenseLayer& l, const BlockRows<R>& rows, bool accumulate, int o, int last, bool gelu) {
  if (l.weight_half != nullptr) {
    accumulate ? block<R, V, T, true, Shared>(l, l.weight_half, rows, o, last, gelu)
               : block<R, V, T, false, Shared>(l, l.weight_half, rows, o, last, gelu);
  } else {
    accumulate ? block<R, V, T, true, Shared>(l, l.weight, rows, o, last, gelu)
               : block<R, V, T, false, Shared>(l, l.weight, rows, o, last, gelu);
  }
}

// block_of() for rows sharing the layer's weights or, with RowMap::experts, each on its own.
template <int R, int V, Tail T>
void block_of(const DenseLayer& l, const BlockRows<R>& rows, const RowMap& map, int o, int last, bool gelu) {
  const bool accumulate = map.out_rows != nullptr;
  if constexpr (R == kExpertPairRows) {
    if (map.experts != nullptr) {
      block_of<R, V, T, false>(l, rows, accumulate, o, last, gelu);
      return;
    }
  }
  block_of<R, V, T, true>(l, rows, accumulate, o, last, gelu);
}

// Rows r .. r + R - 1, outputs o .. o + 8 vectors (<= V), the last with `last` lanes.
template <int R, int V>
void block_or_narrower(const DenseLayer& l, const float* x, int xs, float* y, int ys, int r, const RowMap& map, int o,
                       int vectors, int last, bool gelu) {
  if constexpr (V > 1) {
    if (vectors < V) {
      block_or_narrower<R, V - 1>(l, x, xs, y, ys, r, map, o, vectors, last, gelu);
      return;
    }
  }
  const BlockRows<R> rows = block_rows<R>(x, xs, y, ys, r, map);
  if (last == 8) {
    block_of<R, V, Tail::None>(l, rows, map, o, last, gelu);
  } else if (l.out >= 8) {
    block_of<R, V, Tail::Shifted>(l, rows, map, o, last, gelu);
  } else if constexpr (V == 1) {  // layers under 8 wide are one vector
    block_of<R, 1, Tail::Masked>(l, rows, map, o, last, gelu);
  }
}

template <int R>
void rows_block(const DenseLayer& l, const float* x, int xs, float* y, int ys, const RowMap& map, bool gelu) {
  constexpr int span = 8 * max_vectors<R>();
  for (int o = 0; o < l.out; o += span) {
    const int n = l.out - o < span ? l.out - o : span;
    const int vectors = (n + 7) / 8;
    block_or_narrower<R, max_vectors<R>()>(l, x, xs, y, ys, 0, map, o, vectors, n - 8 * (vectors - 1), gelu);
  }
}

// Many rows: columns outer, rows inner, so one column block of the weights (8 V outputs x in)
// stays in L1 while every row passes over it. R x V = 12 accumulators.
template <int R, int V>
void dense_many_rows(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, const RowMap& map,
                     bool gelu) {
  static_assert(R >= 3 && R <= 4, "row tails below handle up to R - 1 = 3 rows");
  constexpr int span = 8 * V;
  for (int o = 0; o < l.out; o += span) {
    const int n = l.out - o < span ? l.out - o : span;
    const int vectors = (n + 7) / 8, last = n - 8 * (vectors - 1);
    int r = 0;
    for (; r + R <= rows; r += R) block_or_narrower<R, V>(l, x, xs, y, ys, r, map, o, vectors, last, gelu);
    switch (rows - r) {
      case 3: block_or_narrower<3, V>(l, x, xs, y, ys, r, map, o, vectors, last, gelu); break;
      case 2: block_or_narrower<2, V>(l, x, xs, y, ys, r, map, o, vectors, last, gelu); break;
      case 1: block_or_narrower<1, V>(l, x, xs, y, ys, r, map, o, vectors, last, gelu); break;
      default: break;
    }
  }
}

void dense_avx2(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, bool gelu, const RowMap& map) {
  switch (rows) {
    case 1: rows_block<1>(l, x, xs, y, ys, map, gelu); break;
    case 2: rows_block<2>(l, x, xs, y, ys, map, gelu); break;
    case 3: rows_block<3>(l, x, xs, y, ys, map, gelu); break;
    // Layers that split evenly into 32-wide blocks (and narrow ones, e.g. experts) use those;
    // others run faster 24 at a time (measured on the paper preset's layers).
    default:
      if (l.out <= 64 || l.out % 32 == 0) {
        dense_many_rows<3, 4>(l, x, xs, rows, y, ys, map, gelu);
      } else {
        dense_many_rows<4, 3>(l, x, xs, rows, y, ys, map, gelu);
      }
      break;
  }
}

// Every lane's copy of the largest of the 8 values.
inline __m256 broadcast_max(__m256 v) {
  v = _mm256_max_ps(v, _mm256_permute2f128_ps(v, v, 1));
  v = _mm256_max_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm256_max_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
}

// The smallest of the 8 ints.
inline int32_t min_lane(__m256i v) {
  v = _mm256_min_epi32(v, _mm256_permute2x128_si256(v, v, 1));
  v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm256_cvtsi256_si32(v);
}

// The lowest index among lanes holding the largest value of `value`, and that value.
inline int32_t best_lane_index(__m256 value, __m256i index, float& best) {
  const __m256 top = broadcast_max(value);
  best = _mm256_cvtss_f32(top);
  const __m256i at_top = _mm256_castps_si256(_mm256_cmp_ps(value, top, _CMP_EQ_OQ));
  return min_lane(_mm256_blendv_epi8(_mm256_set1_epi32(INT32_MAX), index, at_top));
}

// k == 2 (the paper's routing) entirely in registers: per lane the best and second best, then
// the overall best; its lane then offers its second best for the overall second.
void top_2_avx2(const float* logits, int count, float* best, int32_t* experts) {
  const __m256 minus_inf = _mm256_set1_ps(-__builtin_inff());
  __m256 first = minus_inf, second = minus_inf;
  __m256i first_index = _mm256_setzero_si256(), second_index = _mm256_setzero_si256();
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int e = 0; e < count; e += 8) {
    const __m256i mask = lane_mask(count - e < 8 ? count - e : 8);
    const __m256 v = _mm256_blendv_ps(minus_inf, _mm256_maskload_ps(logits + e, mask), _mm256_castsi256_ps(mask));
    const __m256i i = _mm256_add_epi32(lanes, _mm256_set1_epi32(e));
    const __m256 above_first = _mm256_cmp_ps(v, first, _CMP_GT_OQ);
    const __m256 above_second = _mm256_cmp_ps(v, second, _CMP_GT_OQ);
    // New second: the old first where v beats it, else v where v beats the second.
    second = _mm256_blendv_ps(_mm256_blendv_ps(second, v, above_second), first, above_first);
    second_index = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_blendv_ps(_mm256_castsi256_ps(second_index), _mm256_castsi256_ps(i), above_second),
                         _mm256_castsi256_ps(first_index), above_first));
    first = _mm256_blendv_ps(first, v, above_first);
    first_index =
        _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(first_index), _mm256_castsi256_ps(i), above_first));
  }
  const int32_t e1 = best_lane_index(first, first_index, best[0]);
  const __m256 winner = _mm256_castsi256_ps(_mm256_cmpeq_epi32(first_index, _mm256_set1_epi32(e1)));
  const __m256 rest = _mm256_blendv_ps(first, second, winner);
  const __m256i rest_index = _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(first_index), _mm256_castsi256_ps(second_index), winner));
  const int32_t e2 = best_lane_index(rest, rest_index, best[1]);
  // Only -inf (no finite logit) is left unpicked: keep valid, distinct indices then.
  experts[0] = best[0] > -__builtin_inff() ? e1 : 0;
  experts[1] = best[1] > -__builtin_inff() ? e2 : (experts[0] == 0 ? 1 : 0);
}

// Per lane, the k best values seen so far (sorted, with their indices); then the 8 k lane
// candidates are merged into the overall top k.
void top_k_avx2(const float* logits, int count, int k, float* best, int32_t* experts) {
  if (k == 2) {
    top_2_avx2(logits, count, best, experts);
    return;
  }
  __m256 value[kMaxTopK];
  __m256i index[kMaxTopK];
  for (int j = 0; j < k; ++j) {
    value[j] = _mm256_set1_ps(-__builtin_inff());
    index[j] = _mm256_setzero_si256();
  }
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int e = 0; e < count; e += 8) {
    const int n = count - e < 8 ? count - e : 8;
    const __m256i mask = lane_mask(n);
    __m256 v = _mm256_blendv_ps(_mm256_set1_ps(-__builtin_inff()), _mm256_maskload_ps(logits + e, mask),
                                _mm256_castsi256_ps(mask));
    __m256i i = _mm256_add_epi32(lanes, _mm256_set1_epi32(e));
    for (int j = 0; j < k; ++j) {
      const __m256 greater = _mm256_cmp_ps(v, value[j], _CMP_GT_OQ);
      const __m256 kept = _mm256_blendv_ps(value[j], v, greater);
      const __m256i kept_index =
          _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(index[j]), _mm256_castsi256_ps(i), greater));
      v = _mm256_blendv_ps(v, value[j], greater);
      i = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i), _mm256_castsi256_ps(index[j]), greater));
      value[j] = kept;
      index[j] = kept_index;
    }
  }
  float candidates[8 * kMaxTopK] = {};
  int32_t candidate_index[8 * kMaxTopK] = {};
  for (int j = 0; j < k; ++j) {
    _mm256_storeu_ps(candidates + 8 * j, value[j]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(candidate_index + 8 * j), index[j]);
  }
  // Merge the 8 k lane candidates: largest value first, ties to the lower expert index (as
  // the scalar kernel orders them). -inf candidates (lanes without a finite value) are never
  // picked; unfilled places keep expert j.
  bool taken[8 * kMaxTopK] = {};
  for (int j = 0; j < k; ++j) {
    best[j] = -__builtin_inff();
    experts[j] = j;
    int pick = -1;
    for (int c = 0; c < 8 * k; ++c) {
      const float v = candidates[c];
      if (taken[c] || !(v > -__builtin_inff())) continue;
      if (pick < 0 || v > candidates[pick] || (v == candidates[pick] && candidate_index[c] < candidate_index[pick])) {
        pick = c;
      }
    }
    if (pick < 0) continue;
    taken[pick] = true;
    best[j] = candidates[pick];
    experts[j] = candidate_index[pick];
  }
}

// The lane operations of the shared GRU window kernel (nn_simd_shared.hpp), 8 floats per register.
struct Avx2Lanes {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V rcp(V a) { return _mm256_rcp_ps(a); }  // 12 bits
  static V lane(V v, int k) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(k)); }
  static float sum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};

}  // namespace

DenseKernel dense_avx2_kernel() { return &dense_avx2; }
TopKKernel top_k_avx2_kernel() { return &top_k_avx2; }
// One accumulator set: 16 registers hold no second one.
GruWindowKernel gru_window_avx2_kernel(int padded) {
  constexpr GruWindowKernel kKernels[] = {&gru_window_simd<Avx2Lanes, 1, 1>, &gru_window_simd<Avx2Lanes, 2, 1>,
                                          &gru_window_simd<Avx2Lanes, 3, 1>, &gru_window_simd<Avx2Lanes, 4, 1>,
                                          &gru_window_simd<Avx2Lanes, 5, 1>, &gru_window_simd<Avx2Lanes, 6, 1>,
                                          &gru_window_simd<Avx2Lanes, 7, 1>, &gru_window_simd<Avx2Lanes, 8, 1>};
  static_assert(8 * (sizeof(kKernels) / sizeof(kKernels[0])) == kMaxSimdGruPadded, "one kernel per register count");
  return padded % 8 == 0 && padded >= 8 && padded <= kMaxSimdGruPadded ? kKernels[padded / 8 - 1] : nullptr;
}

}  // namespace lmm::detail

#else

namespace lmm::detail {

DenseKernel dense_avx2_kernel() { return nullptr; }
TopKKernel top_k_avx2_kernel() { return nullptr; }
GruWindowKernel gru_window_avx2_kernel(int) { return nullptr; }

}  // namespace lmm::detail

#endif
