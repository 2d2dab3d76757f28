// Pose math on many lanes at once. quat_from_6d is written once over an instruction set's lane
// operations (SSE2 in pose_vector.cpp, AVX2 and AVX-512 in pose_avx2.cpp / pose_avx512.cpp). Every
// operation is the scalar one's, in the same order: no fused multiply-add (the files are built
// with -ffp-contract=off and the lanes call no FMA), division and square root correctly
// rounded, so every lane equals quat_from_6d bit for bit.
//
// A lane type L provides: V (a vector of floats), M (a lane mask), kLanes, splat, add, sub, mul,
// div, sqrt, less, greater, both (mask and), either (mask or), neither_then (!a and b),
// pick(mask, yes, no), column(r6, k) (component k of kLanes consecutive 6-float rotations) and
// store_quats(w, x, y, z, out) (kLanes consecutive Quats). Also the kernel type of
// forward_kinematics_many (AVX-512 only, in pose_avx512.cpp).
#pragma once

#include "lmm/core/math.hpp"
#include "lmm/eval/pose_kernels.hpp"

namespace lmm {
namespace detail {

// Converts the first multiple of kernel-width rotations of r6[0..6 count) into out; returns how
// many it converted (the caller converts the rest).
using QuatsFrom6dKernel = int (*)(const float* r6, int count, Quat* out);

// The AVX2 and AVX-512 kernels (nullptr where the build lacks them).
QuatsFrom6dKernel quats_from_6d_avx2_kernel();
QuatsFrom6dKernel quats_from_6d_avx512_kernel();

// Forward kinematics of the first multiple of kManyPoseLanes poses of `poses`, one pose per
// lane, equal to forward_kinematics bit for bit; returns how many poses it did (the caller does
// the rest). `scratch`: forward_kinematics_scratch(joints) floats, the lanes' global joints.
using ManyPoseKinematicsKernel = int (*)(const int* parents, int joints, const PoseArrays& poses, float* scratch);
constexpr int kManyPoseLanes = 16;
constexpr int kManyPoseFloats = 7;  // per joint and lane: position x, y, z and rotation w, x, y, z

// The AVX-512 kernel (nullptr where the build lacks it).
ManyPoseKinematicsKernel forward_kinematics_avx512_kernel();

template <typename L>
struct Vec3Lanes {
  typename L::V x, y, z;
};

template <typename L>
typename L::V lanes_dot(const Vec3Lanes<L>& a, const Vec3Lanes<L>& b) {
  return L::add(L::add(L::mul(a.x, b.x), L::mul(a.y, b.y)), L::mul(a.z, b.z));
}

// normalize(): a / |a|, zero where |a| <= 1e-8.
template <typename L>
Vec3Lanes<L> lanes_normalized(const Vec3Lanes<L>& a) {
  const typename L::V n = L::sqrt(lanes_dot(a, a)), zero = L::splat(0.0f);
  const typename L::M ok = L::greater(n, L::splat(1e-8f));
  return {L::pick(ok, L::div(a.x, n), zero), L::pick(ok, L::div(a.y, n), zero), L::pick(ok, L::div(a.z, n), zero)};
}

// quat_from_columns() on every lane: the four branches of Shepperd's method computed alike and
// selected per lane.
template <typename L>
void lanes_columns_to_quat(const Vec3Lanes<L>& c0, const Vec3Lanes<L>& c1, const Vec3Lanes<L>& c2, typename L::V q[4]) {
  using V = typename L::V;
  using M = typename L::M;
  const V m00 = c0.x, m10 = c0.y, m20 = c0.z, m01 = c1.x, m11 = c1.y, m21 = c1.z, m02 = c2.x, m12 = c2.y, m22 = c2.z;
  const V one = L::splat(1.0f), trace = L::add(L::add(m00, m11), m22);
  const M a = L::greater(trace, L::splat(0.0f));
  const M b = L::neither_then(a, L::both(L::greater(m00, m11), L::greater(m00, m22)));
  const M c = L::neither_then(L::either(a, b), L::greater(m11, m22));
  const V radicand = L::pick(
      a, L::add(trace, one),
      L::pick(b, L::sub(L::sub(L::add(one, m00), m11), m22),
              L::pick(c, L::sub(L::sub(L::add(one, m11), m00), m22), L::sub(L::sub(L::add(one, m22), m00), m11))));
  const V s = L::mul(L::splat(2.0f), L::sqrt(radicand)), quarter = L::mul(L::splat(0.25f), s);
  const V p1 = L::div(L::sub(m21, m12), s), p2 = L::div(L::sub(m02, m20), s), p3 = L::div(L::sub(m10, m01), s);
  const V s1 = L::div(L::add(m01, m10), s), s2 = L::div(L::add(m02, m20), s), s3 = L::div(L::add(m12, m21), s);
  q[0] = L::pick(a, quarter, L::pick(b, p1, L::pick(c, p2, p3)));
  q[1] = L::pick(a, p1, L::pick(b, quarter, L::pick(c, s1, s2)));
  q[2] = L::pick(a, p2, L::pick(b, s1, L::pick(c, quarter, s3)));
  q[3] = L::pick(a, p3, L::pick(b, s2, L::pick(c, s3, quarter)));
}

// quat_from_6d of L::kLanes consecutive rotations r6[0 .. 6 kLanes) into out[0 .. kLanes).
template <typename L>
void lanes_quats_from_6d(const float* r6, Quat* out) {
  using V = typename L::V;
  const Vec3Lanes<L> c0 = lanes_normalized<L>({L::column(r6, 0), L::column(r6, 1), L::column(r6, 2)});
  const Vec3Lanes<L> b{L::column(r6, 3), L::column(r6, 4), L::column(r6, 5)};
  const V along = lanes_dot(c0, b);
  const Vec3Lanes<L> c1 = lanes_normalized<L>(
      {L::sub(b.x, L::mul(c0.x, along)), L::sub(b.y, L::mul(c0.y, along)), L::sub(b.z, L::mul(c0.z, along))});
  const Vec3Lanes<L> c2{L::sub(L::mul(c0.y, c1.z), L::mul(c0.z, c1.y)), L::sub(L::mul(c0.z, c1.x), L::mul(c0.x, c1.z)),
                        L::sub(L::mul(c0.x, c1.y), L::mul(c0.y, c1.x))};
  V q[4];
  lanes_columns_to_quat<L>(c0, c1, c2, q);
  // normalize(Quat), then the identity where a column was degenerate (as quat_from_6d).
  const V n =
      L::sqrt(L::add(L::add(L::add(L::mul(q[0], q[0]), L::mul(q[1], q[1])), L::mul(q[2], q[2])), L::mul(q[3], q[3])));
  const V quarter = L::splat(0.25f), zero = L::splat(0.0f);
  const typename L::M degenerate = L::either(
      L::less(n, L::splat(1e-8f)), L::either(L::less(lanes_dot(c0, c0), quarter), L::less(lanes_dot(c1, c1), quarter)));
  L::store_quats(L::pick(degenerate, L::splat(1.0f), L::div(q[0], n)), L::pick(degenerate, zero, L::div(q[1], n)),
                 L::pick(degenerate, zero, L::div(q[2], n)), L::pick(degenerate, zero, L::div(q[3], n)), out);
}

// The kernel over L: whole groups of L::kLanes rotations, and where count is at least
// kLanes but no multiple of it, one more group ending at the last rotation (it recomputes a few
// of the previous group's, with the same bits); returns how many it converted. out must not
// overlap r6.
template <typename L>
int lanes_quats_from_6d_run(const float* r6, int count, Quat* out) {
  int j = 0;
  for (; j + L::kLanes <= count; j += L::kLanes) lanes_quats_from_6d<L>(r6 + 6 * j, out + j);
  if (j == count || j == 0) return j;
  lanes_quats_from_6d<L>(r6 + 6 * (count - L::kLanes), out + count - L::kLanes);
  return count;
}

}  // namespace detail
}  // namespace lmm
