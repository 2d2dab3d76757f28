// The AVX-512 instance of the quat_from_6d lanes (pose_simd_shared.hpp): sixteen rotations at
// once; and forward kinematics of sixteen poses at once, one per lane. Built with AVX-512 F, VL
// and DQ and -ffp-contract=off (no fused multiply-add: bit for bit the scalar result).
#include "eval/pose_simd_shared.hpp"

#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
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

// A 4 x 4 transpose within every 128-bit block of v[0..3] (its own inverse): element k of block
// i of v[e] becomes element e of block i of v[k].
inline void transpose_blocks(__m512 (&v)[4]) {
  const __m512 t0 = _mm512_unpacklo_ps(v[0], v[1]), t1 = _mm512_unpackhi_ps(v[0], v[1]);
  const __m512 t2 = _mm512_unpacklo_ps(v[2], v[3]), t3 = _mm512_unpackhi_ps(v[2], v[3]);
  v[0] = _mm512_shuffle_ps(t0, t2, 0x44);
  v[1] = _mm512_shuffle_ps(t0, t2, 0xee);
  v[2] = _mm512_shuffle_ps(t1, t3, 0x44);
  v[3] = _mm512_shuffle_ps(t1, t3, 0xee);
}

// Sixteen 4-float records, record c at at(c) (`mask` of its 4 floats read), as four vectors of
// one float each: lane 4 i + k of v[e] is float e of record 4 k + i.
template <typename At>
void load_records(const At& at, __mmask8 mask, __m512 (&v)[4]) {
  for (int k = 0; k < 4; ++k) {
    __m512 r = _mm512_castps128_ps512(_mm_maskz_loadu_ps(mask, at(4 * k)));
    r = _mm512_insertf32x4(r, _mm_maskz_loadu_ps(mask, at(4 * k + 1)), 1);
    r = _mm512_insertf32x4(r, _mm_maskz_loadu_ps(mask, at(4 * k + 2)), 2);
    v[k] = _mm512_insertf32x4(r, _mm_maskz_loadu_ps(mask, at(4 * k + 3)), 3);
  }
  transpose_blocks(v);
}

// load_records' inverse: writes the `mask` floats of record c to at(c).
template <typename At>
void store_records(const At& at, __mmask8 mask, __m512 (&v)[4]) {
  transpose_blocks(v);
  for (int k = 0; k < 4; ++k) {
    _mm_mask_storeu_ps(at(4 * k), mask, _mm512_castps512_ps128(v[k]));
    _mm_mask_storeu_ps(at(4 * k + 1), mask, _mm512_extractf32x4_ps(v[k], 1));
    _mm_mask_storeu_ps(at(4 * k + 2), mask, _mm512_extractf32x4_ps(v[k], 2));
    _mm_mask_storeu_ps(at(4 * k + 3), mask, _mm512_extractf32x4_ps(v[k], 3));
  }
}

// One joint of sixteen poses in lanes: position x, y, z (p[3] unused) and rotation w, x, y, z.
struct JointLanes {
  __m512 p[4], r[4];
};

// The child of `parent` at `local`, math.hpp's parent + rotate(parent, offset) and parent * local
// lane by lane, every operation in the scalar order.
JointLanes child_of(const JointLanes& parent, const JointLanes& local) {
  const __m512 *q = parent.r, *v = local.p, *b = local.r;
  auto mul = [](__m512 a, __m512 c) { return _mm512_mul_ps(a, c); };
  auto add = [](__m512 a, __m512 c) { return _mm512_add_ps(a, c); };
  auto sub = [](__m512 a, __m512 c) { return _mm512_sub_ps(a, c); };
  // rotate(q, v) = v + q.w t + cross(u, t), t = 2 cross(u, v), u = (q.x, q.y, q.z).
  auto cross = [&](const __m512* u, const __m512* w, __m512* out) {
    out[0] = sub(mul(u[1], w[2]), mul(u[2], w[1]));
    out[1] = sub(mul(u[2], w[0]), mul(u[0], w[2]));
    out[2] = sub(mul(u[0], w[1]), mul(u[1], w[0]));
  };
  const __m512 two = _mm512_set1_ps(2.0f);
  __m512 t[3], ut[3];
  cross(q + 1, v, t);
  for (__m512& c : t) c = mul(c, two);
  cross(q + 1, t, ut);
  JointLanes out;
  for (int k = 0; k < 3; ++k) out.p[k] = add(parent.p[k], add(add(v[k], mul(t[k], q[0])), ut[k]));
  out.p[3] = _mm512_setzero_ps();
  // The product's subtractions as additions of the negated products, as forward_kinematics'
  // SSE2 lanes do (the same bits, NaN signs included).
  auto minus = [&](__m512 a, __m512 c) { return add(a, _mm512_xor_ps(c, _mm512_set1_ps(-0.0f))); };
  out.r[0] = minus(minus(minus(mul(q[0], b[0]), mul(q[1], b[1])), mul(q[2], b[2])), mul(q[3], b[3]));
  out.r[1] = minus(add(add(mul(q[0], b[1]), mul(q[1], b[0])), mul(q[2], b[3])), mul(q[3], b[2]));
  out.r[2] = add(add(minus(mul(q[0], b[2]), mul(q[1], b[3])), mul(q[2], b[0])), mul(q[3], b[1]));
  out.r[3] = add(minus(add(mul(q[0], b[3]), mul(q[1], b[2])), mul(q[2], b[1])), mul(q[3], b[0]));
  return out;
}

// The ManyPoseKinematicsKernel contract: each group of sixteen poses joint by joint, the
// globals kept in lanes in `scratch` for the children.
int forward_kinematics_lanes(const int* parents, int joints, const PoseArrays& poses, float* scratch) {
  constexpr __mmask8 kVec3 = 0x7, kQuat = 0xf;
  int first = 0;
  for (; first + kManyPoseLanes <= poses.count; first += kManyPoseLanes) {
    for (int j = 0; j < joints; ++j) {
      JointLanes local;
      load_records([&](int c) { return &poses.local_positions[first + c][j].x; }, kVec3, local.p);
      load_records([&](int c) { return &poses.local_rotations[first + c][j].w; }, kQuat, local.r);
      const int parent = parents[j];
      JointLanes global = local;
      if (parent >= 0) {
        const float* kept = scratch + size_t(parent) * kManyPoseFloats * kManyPoseLanes;
        JointLanes above;
        for (int k = 0; k < 3; ++k) above.p[k] = _mm512_loadu_ps(kept + k * kManyPoseLanes);
        for (int k = 0; k < 4; ++k) above.r[k] = _mm512_loadu_ps(kept + (3 + k) * kManyPoseLanes);
        global = child_of(above, local);
      }
      float* keep = scratch + size_t(j) * kManyPoseFloats * kManyPoseLanes;
      for (int k = 0; k < 3; ++k) _mm512_storeu_ps(keep + k * kManyPoseLanes, global.p[k]);
      for (int k = 0; k < 4; ++k) _mm512_storeu_ps(keep + (3 + k) * kManyPoseLanes, global.r[k]);
      store_records([&](int c) { return &poses.global_positions[first + c][j].x; }, kVec3, global.p);
      store_records([&](int c) { return &poses.global_rotations[first + c][j].w; }, kQuat, global.r);
    }
  }
  return first;
}

}  // namespace

QuatsFrom6dKernel quats_from_6d_avx512_kernel() { return &lanes_quats_from_6d_run<Avx512PoseLanes>; }
ManyPoseKinematicsKernel forward_kinematics_avx512_kernel() { return &forward_kinematics_lanes; }

}  // namespace detail
}  // namespace lmm
#else
namespace lmm {
namespace detail {
QuatsFrom6dKernel quats_from_6d_avx512_kernel() { return nullptr; }
ManyPoseKinematicsKernel forward_kinematics_avx512_kernel() { return nullptr; }
}  // namespace detail
}  // namespace lmm
#endif
