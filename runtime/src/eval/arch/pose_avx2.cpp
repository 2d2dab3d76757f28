// The AVX2 instance of the quat_from_6d lanes (pose_simd_shared.hpp): eight rotations at once.
// Built with -mavx2 -ffp-contract=off (no fused multiply-add: bit for bit the scalar result).
#include "eval/pose_simd_shared.hpp"

#if defined(__AVX2__)
#include <immintrin.h>

namespace lmm {
namespace detail {
namespace {

struct Avx2PoseLanes {
  using V = __m256;
  using M = __m256;
  static constexpr int kLanes = 8;
  static V splat(float v) { return _mm256_set1_ps(v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  static M less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M greater(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M both(M a, M b) { return _mm256_and_ps(a, b); }
  static M either(M a, M b) { return _mm256_or_ps(a, b); }
  static M neither_then(M a, M b) { return _mm256_andnot_ps(a, b); }
  static V pick(M mask, V yes, V no) { return _mm256_blendv_ps(no, yes, mask); }
  static V column(const float* r6, int k) {
    return _mm256_i32gather_ps(r6 + k, _mm256_setr_epi32(0, 6, 12, 18, 24, 30, 36, 42), 4);
  }
  static void store_quats(V w, V x, V y, V z, Quat* out) {
    // 4x4 transposes of each 128-bit half: quaternions 0-3 from the low halves, 4-7 from the high.
    const V wx0 = _mm256_unpacklo_ps(w, x), wx1 = _mm256_unpackhi_ps(w, x);
    const V yz0 = _mm256_unpacklo_ps(y, z), yz1 = _mm256_unpackhi_ps(y, z);
    const V q0 = _mm256_shuffle_ps(wx0, yz0, _MM_SHUFFLE(1, 0, 1, 0)),
            q1 = _mm256_shuffle_ps(wx0, yz0, _MM_SHUFFLE(3, 2, 3, 2));
    const V q2 = _mm256_shuffle_ps(wx1, yz1, _MM_SHUFFLE(1, 0, 1, 0)),
            q3 = _mm256_shuffle_ps(wx1, yz1, _MM_SHUFFLE(3, 2, 3, 2));
    float* o = &out[0].w;
    _mm256_storeu_ps(o, _mm256_permute2f128_ps(q0, q1, 0x20));
    _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(q2, q3, 0x20));
    _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(q0, q1, 0x31));
    _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(q2, q3, 0x31));
  }
};

}  // namespace

QuatsFrom6dKernel quats_from_6d_avx2_kernel() { return &lanes_quats_from_6d_run<Avx2PoseLanes>; }

}  // namespace detail
}  // namespace lmm
#else
namespace lmm {
namespace detail {
QuatsFrom6dKernel quats_from_6d_avx2_kernel() { return nullptr; }
}  // namespace detail
}  // namespace lmm
#endif
