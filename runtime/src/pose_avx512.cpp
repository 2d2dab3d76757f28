// The AVX-512 instance of the quat_from_6d lanes (pose_simd_shared.hpp): sixteen rotations at
// once. Built with AVX-512 F and -ffp-contract=off (no fused multiply-add: bit for bit the
// scalar result).
#include "pose_simd_shared.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>

namespace lmm {
namespace detail {
namespace {

struct Avx512PoseLanes {
  using V = __m512;
  using M = __mmask16;
  static constexpr int kLanes = 16;
  static V splat(float v) { return _mm512_set1_ps(v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  static M less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M greater(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M both(M a, M b) { return M(a & b); }
  static M either(M a, M b) { return M(a | b); }
  static M neither_then(M a, M b) { return M(~a & b); }
  static V pick(M mask, V yes, V no) { return _mm512_mask_blend_ps(mask, no, yes); }
  // Element k of 16 consecutive 6-float rotations: the 96 floats loaded as six vectors and
  // permuted, each 8-lane half from its three vectors (lane i reads float g = 6 (i mod 8) + k of
  // its half: g < 32 from the first two, else from the third).
  static V column(const float* r6, int k) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i g = _mm512_add_epi32(_mm512_mullo_epi32(lane, _mm512_set1_epi32(6)), _mm512_set1_epi32(k));
    const __mmask16 third = _mm512_cmpge_epi32_mask(g, _mm512_set1_epi32(32));
    auto half = [&](const float* p) {
      const V pair = _mm512_permutex2var_ps(_mm512_loadu_ps(p), g, _mm512_loadu_ps(p + 16));
      return _mm512_mask_permutexvar_ps(pair, third, g, _mm512_loadu_ps(p + 32));
    };
    return _mm512_mask_blend_ps(__mmask16(0xff00), half(r6), half(r6 + 48));
  }
  // A 4 x 16 transpose: unpacks give each 128-bit block one quaternion (u0: 0, 4, 8, 12; u1: 1,
  // 5, 9, 13; ...), then block shuffles put four consecutive ones in each store.
  static void store_quats(V w, V x, V y, V z, Quat* out) {
    const V wy0 = _mm512_unpacklo_ps(w, y), wy1 = _mm512_unpackhi_ps(w, y);
    const V xz0 = _mm512_unpacklo_ps(x, z), xz1 = _mm512_unpackhi_ps(x, z);
    const V u0 = _mm512_unpacklo_ps(wy0, xz0), u1 = _mm512_unpackhi_ps(wy0, xz0);
    const V u2 = _mm512_unpacklo_ps(wy1, xz1), u3 = _mm512_unpackhi_ps(wy1, xz1);
    const V v0 = _mm512_shuffle_f32x4(u0, u1, 0x44), v1 = _mm512_shuffle_f32x4(u2, u3, 0x44);  // 0 4 1 5, 2 6 3 7
    const V v2 = _mm512_shuffle_f32x4(u0, u1, 0xee), v3 = _mm512_shuffle_f32x4(u2, u3, 0xee);  // 8 12 9 13, ...
    float* o = &out[0].w;
    _mm512_storeu_ps(o, _mm512_shuffle_f32x4(v0, v1, 0x88));
    _mm512_storeu_ps(o + 16, _mm512_shuffle_f32x4(v0, v1, 0xdd));
    _mm512_storeu_ps(o + 32, _mm512_shuffle_f32x4(v2, v3, 0x88));
    _mm512_storeu_ps(o + 48, _mm512_shuffle_f32x4(v2, v3, 0xdd));
  }
};

}  // namespace

QuatsFrom6dKernel quats_from_6d_avx512_kernel() { return &lanes_quats_from_6d_run<Avx512PoseLanes>; }

}  // namespace detail
}  // namespace lmm
#else
namespace lmm {
namespace detail {
QuatsFrom6dKernel quats_from_6d_avx512_kernel() { return nullptr; }
}  // namespace detail
}  // namespace lmm
#endif
