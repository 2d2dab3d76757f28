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
  static V column(const float* r6, int k) {
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(6));
    return _mm512_i32gather_ps(rows, r6 + k, 4);
  }
  static void store_quats(V w, V x, V y, V z, Quat* out) {
    const __m512i rows = _mm512_slli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2);
    float* o = &out[0].w;
    _mm512_i32scatter_ps(o, rows, w, 4);
    _mm512_i32scatter_ps(o + 1, rows, x, 4);
    _mm512_i32scatter_ps(o + 2, rows, y, 4);
    _mm512_i32scatter_ps(o + 3, rows, z, 4);
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
