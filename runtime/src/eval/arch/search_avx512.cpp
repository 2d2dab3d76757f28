// AVX-512 search kernels: a block's sixteen frames in one zmm register; the box bounds are the
// AVX2 ones compiled for this file. This file alone is compiled with -mavx512f (and
// -ffp-contract=off, so that no multiply-add is fused; see CMakeLists.txt).
#include "eval/search_simd_shared.hpp"

#if defined(__AVX512F__)

namespace lmm::detail {
namespace {

// Sixteen floats per zmm register.
struct Zmm {
  using type = __m512;
  static constexpr int width = 16;
  static __m512 zero() { return _mm512_setzero_ps(); }
  static __m512 set1(float v) { return _mm512_set1_ps(v); }
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 min(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
  static __m512 max(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
  static __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
  static __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
  static __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
};
static_assert(Zmm::width == kBlockFrames, "one register per block");

}  // namespace

SearchKernels search_kernels_avx512() { return {&box_bounds<Ymm>, &box_bounds<Xmm>, &block_costs<Zmm>}; }

}  // namespace lmm::detail

#else

namespace lmm::detail {

SearchKernels search_kernels_avx512() { return {}; }

}  // namespace lmm::detail

#endif
