#include "lmm/asset/skeleton.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lmm {

int Skeleton::find(const std::string& name) const {
  for (int i = 0; i < joint_count(); ++i) {
    if (names[i] == name) return i;
  }
  return -1;
}

std::string Skeleton::joined_names() const {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

bool Skeleton::validate(std::string& error) const {
  if (names.size() != parents.size() || offsets.size() != parents.size()) {
    error = "skeleton: names, parents and offsets have different lengths";
    return false;
  }
  if (parents.empty()) {
    error = "skeleton: no joints";
    return false;
  }
  for (int i = 0; i < joint_count(); ++i) {
    if (parents[i] >= i || parents[i] < -1 || (i > 0 && parents[i] < 0)) {
      error = "skeleton: joint '" + names[i] + "' has invalid parent index " + std::to_string(parents[i]);
      return false;
    }
  }
  return true;
}

#if defined(__SSE2__)
namespace {

// A Quat as lanes (w, x, y, z), a Vec3 as (x, y, z, 0); Vec3s are read and written 12 bytes.
__m128 lanes(const Quat& q) { return _mm_loadu_ps(&q.w); }
void store(Quat& q, __m128 v) { _mm_storeu_ps(&q.w, v); }
__m128 lanes(const Vec3& v) { return _mm_setr_ps(v.x, v.y, v.z, 0.0f); }
void store(Vec3& v, __m128 a) {
  _mm_storel_pi(reinterpret_cast<__m64*>(&v.x), a);
  _mm_store_ss(&v.z, _mm_movehl_ps(a, a));
}

// Lanes (i, j, k, l) of v.
template <int i, int j, int k, int l>
__m128 pick(__m128 v) {
  return _mm_shuffle_ps(v, v, _MM_SHUFFLE(l, k, j, i));
}
// v with the sign of the lanes whose flag is 1 flipped.
template <int i, int j, int k, int l>
__m128 flip(__m128 v) {
  constexpr int kSign = int(0x80000000u);
  return _mm_xor_ps(v, _mm_castsi128_ps(_mm_setr_epi32(i * kSign, j * kSign, k * kSign, l * kSign)));
}

// operator*(Quat, Quat) lane by lane: each component's products added in the scalar order (a
// subtraction as the addition of the negated product: the same bits).
__m128 quat_product(__m128 a, __m128 b) {
  __m128 r = _mm_mul_ps(pick<0, 0, 0, 0>(a), b);
  r = _mm_add_ps(r, flip<1, 0, 1, 0>(_mm_mul_ps(pick<1, 1, 1, 1>(a), pick<1, 0, 3, 2>(b))));
  r = _mm_add_ps(r, flip<1, 0, 0, 1>(_mm_mul_ps(pick<2, 2, 2, 2>(a), pick<2, 3, 0, 1>(b))));
  return _mm_add_ps(r, flip<1, 1, 0, 0>(_mm_mul_ps(pick<3, 3, 3, 3>(a), pick<3, 2, 1, 0>(b))));
}

// cross(a, b) of Vec3 lanes given a's lanes rotated (y, z, x) and (z, x, y).
__m128 cross_lanes(__m128 a_yzx, __m128 a_zxy, __m128 b) {
  return _mm_sub_ps(_mm_mul_ps(a_yzx, pick<2, 0, 1, 3>(b)), _mm_mul_ps(a_zxy, pick<1, 2, 0, 3>(b)));
}

// rotate(q, v) lane by lane, in the scalar order.
__m128 rotated(__m128 q, __m128 v) {
  const __m128 u_yzx = pick<2, 3, 1, 0>(q), u_zxy = pick<3, 1, 2, 0>(q);
  const __m128 t = _mm_mul_ps(cross_lanes(u_yzx, u_zxy, v), _mm_set1_ps(2.0f));
  return _mm_add_ps(_mm_add_ps(v, _mm_mul_ps(t, pick<0, 0, 0, 0>(q))), cross_lanes(u_yzx, u_zxy, t));
}

}  // namespace
#endif

void forward_kinematics(const int* parents, int count, const Vec3* local_positions, const Quat* local_rotations,
                        Vec3* global_positions, Quat* global_rotations) {
#if defined(__SSE2__)
  // Four lanes per quaternion and position: the operations of the portable loop below, in the
  // same order, so the same bits.
  for (int i = 0; i < count; ++i) {
    const int p = parents[i];
    if (p < 0) {
      global_positions[i] = local_positions[i];
      global_rotations[i] = local_rotations[i];
      continue;
    }
    const __m128 parent = lanes(global_rotations[p]);
    store(global_positions[i], _mm_add_ps(lanes(global_positions[p]), rotated(parent, lanes(local_positions[i]))));
    store(global_rotations[i], quat_product(parent, lanes(local_rotations[i])));
  }
#else
  for (int i = 0; i < count; ++i) {
    const int p = parents[i];
    if (p < 0) {
      global_positions[i] = local_positions[i];
      global_rotations[i] = local_rotations[i];
    } else {
      global_positions[i] = global_positions[p] + rotate(global_rotations[p], local_positions[i]);
      global_rotations[i] = global_rotations[p] * local_rotations[i];
    }
  }
#endif
}

void forward_kinematics_velocity(const int* parents, int count, const Vec3* local_positions,
                                 const Quat* local_rotations, const Vec3* local_velocities,
                                 const Vec3* local_angular_velocities, Vec3* global_positions, Quat* global_rotations,
                                 Vec3* global_velocities, Vec3* global_angular_velocities) {
  for (int i = 0; i < count; ++i) {
    const int p = parents[i];
    if (p < 0) {
      global_positions[i] = local_positions[i];
      global_rotations[i] = local_rotations[i];
      global_velocities[i] = local_velocities[i];
      global_angular_velocities[i] = local_angular_velocities[i];
      continue;
    }
    const Vec3 offset = rotate(global_rotations[p], local_positions[i]);
    global_positions[i] = global_positions[p] + offset;
    global_rotations[i] = global_rotations[p] * local_rotations[i];
    global_velocities[i] = global_velocities[p] + rotate(global_rotations[p], local_velocities[i]) +
                           cross(global_angular_velocities[p], offset);
    global_angular_velocities[i] =
        global_angular_velocities[p] + rotate(global_rotations[p], local_angular_velocities[i]);
  }
}

}  // namespace lmm
