// Internal: the SIMD search kernels (search_avx2.cpp, search_avx512.cpp) written once over a
// vector type V (width, load, broadcast, min, max, sub, mul, add, store). Everything here has
// internal linkage, so each kernel file compiles its own copy for its instruction set.
#pragma once

#include "eval/search_kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#if defined(__clang__)
#define LMM_SEARCH_UNROLL _Pragma("unroll")
#else
#define LMM_SEARCH_UNROLL _Pragma("GCC unroll 8")
#endif

namespace lmm::detail {
namespace {

// V::width columns (boxes or frames) of a structure-of-arrays table with rows `stride` floats
// apart: out[j] = sum over d < dims of (q[d] - clamp(q[d], lo[d][j], hi[d][j]))^2 (with Clamp; else
// (q[d] - lo[d][j])^2), summed in kSearchLanes lanes and combined like the scalar kernels.
template <class V, bool Clamp>
void lane_sums(const float* q, int dims, const float* lo, const float* hi, int stride, float* out) {
  using T = typename V::type;
  T acc[kSearchLanes];
  LMM_SEARCH_UNROLL
  for (int l = 0; l < kSearchLanes; ++l) acc[l] = V::zero();
  const auto add_row = [&](int l, int d) {
    const size_t row = size_t(d) * size_t(stride);
    const T qv = V::set1(q[d]);
    const T x = Clamp ? V::min(V::max(qv, V::load(lo + row)), V::load(hi + row)) : V::load(lo + row);
    const T t = V::sub(qv, x);
    acc[l] = V::add(acc[l], V::mul(t, t));
  };
  int d = 0;
  for (; d + kSearchLanes <= dims; d += kSearchLanes) {
    LMM_SEARCH_UNROLL
    for (int l = 0; l < kSearchLanes; ++l) add_row(l, d + l);
  }
  LMM_SEARCH_UNROLL
  for (int l = 0; l < kSearchLanes; ++l) {
    if (d + l < dims) add_row(l, d + l);  // the last, partial group of dimensions
  }
  const T even = V::add(V::add(acc[0], acc[4]), V::add(acc[1], acc[5]));
  const T odd = V::add(V::add(acc[2], acc[6]), V::add(acc[3], acc[7]));
  V::store(out, V::add(even, odd));
}
static_assert(kSearchLanes == 8, "lane_sums combines exactly eight lanes");

// Bounds of W = V::width boxes stored [dim][W].
template <class V>
void box_bounds(const float* q, int dims, const float* min, const float* max, float* out) {
  lane_sums<V, true>(q, dims, min, max, V::width, out);
}

// Costs of a block of kBlockFrames frames, V::width frames at a time.
template <class V>
void block_costs(const float* q, int dims, const float* block, float* out) {
  for (int j = 0; j < kBlockFrames; j += V::width)
    lane_sums<V, false>(q, dims, block + j, block + j, kBlockFrames, out + j);
}

#if defined(__AVX2__)
// Eight floats per ymm register.
struct Ymm {
  using type = __m256;
  static constexpr int width = 8;
  static __m256 zero() { return _mm256_setzero_ps(); }
  static __m256 set1(float v) { return _mm256_set1_ps(v); }
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
  static __m256 max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
  static __m256 sub(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
};

// Four floats per xmm register (VEX encoded), for the small boxes of one large box.
struct Xmm {
  using type = __m128;
  static constexpr int width = 4;
  static __m128 zero() { return _mm_setzero_ps(); }
  static __m128 set1(float v) { return _mm_set1_ps(v); }
  static __m128 load(const float* p) { return _mm_loadu_ps(p); }
  static __m128 min(__m128 a, __m128 b) { return _mm_min_ps(a, b); }
  static __m128 max(__m128 a, __m128 b) { return _mm_max_ps(a, b); }
  static __m128 sub(__m128 a, __m128 b) { return _mm_sub_ps(a, b); }
  static __m128 mul(__m128 a, __m128 b) { return _mm_mul_ps(a, b); }
  static __m128 add(__m128 a, __m128 b) { return _mm_add_ps(a, b); }
  static void store(float* p, __m128 v) { _mm_storeu_ps(p, v); }
};
static_assert(Ymm::width == kLargeGroup && Xmm::width == kSmallPerLarge, "one register per box group");
#endif

}  // namespace
}  // namespace lmm::detail
