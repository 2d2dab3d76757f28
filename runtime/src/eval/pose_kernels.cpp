#include "lmm/eval/pose_kernels.hpp"

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "eval/pose_simd_shared.hpp"
#include "lmm/core/rotation_6d.hpp"
#include "lmm/eval/kernel_support.hpp"

namespace lmm {

#if defined(__SSE2__)
namespace {

// SSE2's lane operations for pose_simd_shared.hpp.
struct Sse2Lanes {
  using V = __m128;
  using M = __m128;
  static constexpr int kLanes = 4;
  static V splat(float v) { return _mm_set1_ps(v); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V sub(V a, V b) { return _mm_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm_mul_ps(a, b); }
  static V div(V a, V b) { return _mm_div_ps(a, b); }
  static V sqrt(V a) { return _mm_sqrt_ps(a); }
  static M less(V a, V b) { return _mm_cmplt_ps(a, b); }
  static M greater(V a, V b) { return _mm_cmpgt_ps(a, b); }
  static M both(M a, M b) { return _mm_and_ps(a, b); }
  static M either(M a, M b) { return _mm_or_ps(a, b); }
  static M neither_then(M a, M b) { return _mm_andnot_ps(a, b); }
  static V pick(M mask, V yes, V no) { return _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no)); }
  static V column(const float* r6, int k) { return _mm_setr_ps(r6[k], r6[6 + k], r6[12 + k], r6[18 + k]); }
  static void store_quats(V w, V x, V y, V z, Quat* out) {
    _MM_TRANSPOSE4_PS(w, x, y, z);
    _mm_storeu_ps(&out[0].w, w);
    _mm_storeu_ps(&out[1].w, x);
    _mm_storeu_ps(&out[2].w, y);
    _mm_storeu_ps(&out[3].w, z);
  }
};

}  // namespace
#endif

namespace {

// Whether `path` runs AVX-512 lanes on this build and CPU.
bool avx512_lanes(KernelPath path) {
  return (path == KernelPath::Auto || path == KernelPath::Avx512) && avx512_available();
}

// The widest quats_from_6d kernel of `path` on this build and CPU (nullptr: none wider than SSE2).
detail::QuatsFrom6dKernel wide_quats_kernel(KernelPath path) {
  const bool auto_path = path == KernelPath::Auto;
  if (avx512_lanes(path)) return detail::quats_from_6d_avx512_kernel();
  if ((auto_path || path == KernelPath::Avx512 || path == KernelPath::Avx2) && avx2_available()) {
    return detail::quats_from_6d_avx2_kernel();
  }
  return nullptr;
}

// quat_from_6d of r6[0 .. 6 count): `wide` first, then four at a time (SSE2 builds, unless
// `portable_only`), the rest one at a time.
void convert_quats(detail::QuatsFrom6dKernel wide, bool portable_only, const float* r6, int count, Quat* out) {
  int j = wide != nullptr ? wide(r6, count, out) : 0;
#if defined(__SSE2__)
  if (!portable_only) j += detail::lanes_quats_from_6d_run<Sse2Lanes>(r6 + 6 * j, count - j, out + j);
#else
  (void)portable_only;  // no four-lane path without SSE2 (e.g. WebAssembly)
#endif
  for (; j < count; ++j) out[j] = quat_from_6d(r6 + 6 * j);
}

}  // namespace

void quats_from_6d(const float* r6, int count, Quat* out, KernelPath path) {
  convert_quats(wide_quats_kernel(path), path == KernelPath::Scalar, r6, count, out);
}

void forward_kinematics_many(const int* parents, int joints, const PoseArrays& poses, float* scratch, KernelPath path) {
  int c = avx512_lanes(path) ? detail::forward_kinematics_avx512_kernel()(parents, joints, poses, scratch) : 0;
  for (; c < poses.count; ++c) {
    forward_kinematics(parents, joints, poses.local_positions[c], poses.local_rotations[c], poses.global_positions[c],
                       poses.global_rotations[c]);
  }
}

void quats_from_6d(const float* r6, int count, Quat* out) {
  static const detail::QuatsFrom6dKernel wide = wide_quats_kernel(KernelPath::Auto);
  convert_quats(wide, false, r6, count, out);
}

int forward_kinematics_scratch(int joints) { return detail::kManyPoseLanes * detail::kManyPoseFloats * joints; }

void pose_from_vector(const PoseVectorLayout& layout, const float* pose, Vec3* local_positions, Quat* local_rotations) {
  local_positions[0] = Vec3{};
  local_rotations[0] = Quat{};
  for (int j = 0; j < layout.joints; ++j) local_positions[j + 1] = vec3_at(pose + layout.positions() + 3 * j);
  quats_from_6d(pose + layout.rotations(), layout.joints, local_rotations + 1);
}

}  // namespace lmm
