#include "lmm/core/rotation_6d.hpp"

#include <cmath>

namespace lmm {
namespace {

// Quaternion of the rotation matrix with columns c0, c1, c2 (Shepperd's method).
Quat quat_from_columns(Vec3 c0, Vec3 c1, Vec3 c2) {
  const float m00 = c0.x, m10 = c0.y, m20 = c0.z, m01 = c1.x, m11 = c1.y, m21 = c1.z, m02 = c2.x, m12 = c2.y,
              m22 = c2.z;
  const float trace = m00 + m11 + m22;
  Quat q;
  if (trace > 0.0f) {
    const float s = 2.0f * std::sqrt(trace + 1.0f);
    q = {0.25f * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s};
  } else if (m00 > m11 && m00 > m22) {
    const float s = 2.0f * std::sqrt(1.0f + m00 - m11 - m22);
    q = {(m21 - m12) / s, 0.25f * s, (m01 + m10) / s, (m02 + m20) / s};
  } else if (m11 > m22) {
    const float s = 2.0f * std::sqrt(1.0f + m11 - m00 - m22);
    q = {(m02 - m20) / s, (m01 + m10) / s, 0.25f * s, (m12 + m21) / s};
  } else {
    const float s = 2.0f * std::sqrt(1.0f + m22 - m00 - m11);
    q = {(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25f * s};
  }
  return normalize(q);
}

}  // namespace

void quat_to_6d(Quat q, float* out) {
  const float w = q.w, x = q.x, y = q.y, z = q.z;
  out[0] = 1 - 2 * (y * y + z * z);
  out[1] = 2 * (x * y + w * z);
  out[2] = 2 * (x * z - w * y);
  out[3] = 2 * (x * y - w * z);
  out[4] = 1 - 2 * (x * x + z * z);
  out[5] = 2 * (y * z + w * x);
}

Quat quat_from_6d(const float* r6) {
  const Vec3 c0 = normalize(vec3_at(r6));
  const Vec3 b = vec3_at(r6 + 3);
  const Vec3 c1 = normalize(b - c0 * dot(c0, b));
  // normalize() gives unit or zero vectors: a squared length under 1/4 means it gave zero.
  if (dot(c0, c0) < 0.25f || dot(c1, c1) < 0.25f) return Quat{};
  return quat_from_columns(c0, c1, cross(c0, c1));
}

}  // namespace lmm
