// Small vector and quaternion math used everywhere in lmmkit (Y up, right-handed,
// quaternions stored as w, x, y, z).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lmm {

// A 3D vector of floats.
struct Vec3 {
  float x = 0.0f, y = 0.0f, z = 0.0f;
};

// A unit quaternion (w, x, y, z) representing a rotation.
struct Quat {
  float w = 1.0f, x = 0.0f, y = 0.0f, z = 0.0f;
};

inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
inline Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline Vec3 operator*(float s, Vec3 a) { return a * s; }
inline Vec3 operator/(Vec3 a, float s) { return {a.x / s, a.y / s, a.z / s}; }

// Dot product.
inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
// Cross product a x b.
inline Vec3 cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
// Whether none of the `count` values is NaN or infinite (an exponent test the compiler
// vectorises; per-frame checks of network outputs use it).
inline bool all_finite(const float* values, size_t count) {
  uint32_t non_finite = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    non_finite |= uint32_t((bits & 0x7F800000u) == 0x7F800000u);
  }
  return non_finite == 0;
}
// Largest magnitude a stored weight or statistic may have: the largest f16 value. Trained
// networks stay far below it; a flipped exponent bit usually does not.
constexpr float kMaxStoredMagnitude = 65504.0f;
// Whether every one of `count` values is finite and at most kMaxStoredMagnitude in magnitude.
inline bool all_plausible(const float* values, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (!(std::fabs(values[i]) <= kMaxStoredMagnitude)) return false;
  }
  return true;
}
// Euclidean length.
inline float length(Vec3 a) { return std::sqrt(dot(a, a)); }
// a / |a|, or the zero vector when |a| is (almost) zero.
inline Vec3 normalize(Vec3 a) {
  const float n = length(a);
  return n > 1e-8f ? a / n : Vec3{};
}
// a projected on the ground plane (y = 0).
inline Vec3 on_ground(Vec3 a) { return {a.x, 0.0f, a.z}; }
// The Vec3 of three consecutive floats (x, y, z).
inline Vec3 vec3_at(const float* v) { return {v[0], v[1], v[2]}; }
// Angle between two vectors in radians, robust near 0 and pi.
inline float angle_between(Vec3 a, Vec3 b) { return std::atan2(length(cross(a, b)), dot(a, b)); }
// Linear interpolation a + (b - a) t.
inline Vec3 lerp(Vec3 a, Vec3 b, float t) { return a + (b - a) * t; }

// Hamilton product a * b (apply b first, then a).
inline Quat operator*(Quat a, Quat b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
// Inverse of a unit quaternion (its conjugate).
inline Quat inverse(Quat q) { return {q.w, -q.x, -q.y, -q.z}; }
// 4D dot product of two quaternions.
inline float dot(Quat a, Quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }
// q / |q|; the identity when |q| is (almost) zero.
inline Quat normalize(Quat q) {
  const float n = std::sqrt(dot(q, q));
  if (n < 1e-8f) return Quat{};
  return {q.w / n, q.x / n, q.y / n, q.z / n};
}
// The quaternion of the same rotation with w >= 0.
inline Quat abs(Quat q) { return q.w < 0.0f ? Quat{-q.w, -q.x, -q.y, -q.z} : q; }

// Rotates v by q.
inline Vec3 rotate(Quat q, Vec3 v) {
  const Vec3 u{q.x, q.y, q.z};
  const Vec3 t = 2.0f * cross(u, v);
  return v + q.w * t + cross(u, t);
}
// Rotates v by the inverse of q.
inline Vec3 inverse_rotate(Quat q, Vec3 v) { return rotate(inverse(q), v); }

// Rotation of `angle` radians about the unit vector `axis`.
inline Quat quat_from_angle_axis(float angle, Vec3 axis) {
  const float s = std::sin(0.5f * angle);
  return {std::cos(0.5f * angle), axis.x * s, axis.y * s, axis.z * s};
}

// Rotation about the up axis (+Y) that turns +Z towards `direction` projected on the ground.
inline Quat quat_from_heading(Vec3 direction) {
  return quat_from_angle_axis(std::atan2(direction.x, direction.z), Vec3{0.0f, 1.0f, 0.0f});
}

// The rotation about +Y that faces where `q` turns +Z (its heading on the ground).
inline Quat heading_of(Quat q) { return quat_from_heading(rotate(q, Vec3{0.0f, 0.0f, 1.0f})); }

// Rotation vector (axis * angle) of q, taking the shortest arc.
inline Vec3 to_scaled_angle_axis(Quat q) {
  q = abs(q);
  const Vec3 v{q.x, q.y, q.z};
  const float s = length(v);
  if (s < 1e-8f) return v * 2.0f;
  const float angle = 2.0f * std::atan2(s, q.w);
  return v * (angle / s);
}
// Inverse of to_scaled_angle_axis.
inline Quat from_scaled_angle_axis(Vec3 v) {
  const float angle = length(v);
  if (angle < 1e-8f) return normalize(Quat{1.0f, 0.5f * v.x, 0.5f * v.y, 0.5f * v.z});
  return quat_from_angle_axis(angle, v / angle);
}

// Spherical interpolation from a to b along the shortest arc.
inline Quat slerp(Quat a, Quat b, float t) {
  if (dot(a, b) < 0.0f) b = Quat{-b.w, -b.x, -b.y, -b.z};
  const float d = dot(a, b);
  if (d > 0.9995f) {
    return normalize(Quat{a.w + (b.w - a.w) * t, a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t});
  }
  const float theta = std::acos(d);
  const float sa = std::sin((1.0f - t) * theta) / std::sin(theta);
  const float sb = std::sin(t * theta) / std::sin(theta);
  return {a.w * sa + b.w * sb, a.x * sa + b.x * sb, a.y * sa + b.y * sb, a.z * sa + b.z * sb};
}

// True when every component is finite.
inline bool is_finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace lmm
