#include "lmm/pose_vector.hpp"

#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lmm {
namespace {

Vec3 vec3_at(const float* v) { return Vec3{v[0], v[1], v[2]}; }

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

bool near(float a, float b, float tolerance) { return std::fabs(a - b) <= tolerance; }

bool skeletons_match(const Skeleton& m, const Skeleton& d, std::string& error) {
  if (m.joint_count() != d.joint_count()) {
    error = "skeleton: model has " + std::to_string(m.joint_count()) + " joints, database has " +
            std::to_string(d.joint_count());
    return false;
  }
  for (int j = 0; j < m.joint_count(); ++j) {
    const size_t i = size_t(j);
    const std::string where = "skeleton joint " + std::to_string(j) + " ('" + d.names[i] + "'): ";
    if (m.names[i] != d.names[i]) {
      error = "skeleton joint " + std::to_string(j) + ": model has '" + m.names[i] + "', database has '" + d.names[i] + "'";
      return false;
    }
    if (m.parents[i] != d.parents[i]) {
      error = where + "parent differs (model " + std::to_string(m.parents[i]) + ", database " +
              std::to_string(d.parents[i]) + ")";
      return false;
    }
    const Vec3 a = m.offsets[i], b = d.offsets[i];
    if (!near(a.x, b.x, 1e-3f) || !near(a.y, b.y, 1e-3f) || !near(a.z, b.z, 1e-3f)) {
      error = where + "rest offset differs by more than 1 mm";
      return false;
    }
  }
  return true;
}

bool groups_match(const FeatureGroup& m, const FeatureGroup& d, std::string& error) {
  const std::string where = "feature group '" + d.name + "': ";
  if (m.name != d.name || m.kind != d.kind) {
    error = where + "model has '" + m.name + "' (" + feature_kind_name(m.kind) + "), database has '" + d.name + "' (" +
            feature_kind_name(d.kind) + ")";
    return false;
  }
  if (m.items != d.items) {
    error = where + "joints or time offsets differ";
    return false;
  }
  if (!near(m.weight, d.weight, 1e-6f)) {
    error = where + "weight differs (model " + std::to_string(m.weight) + ", database " + std::to_string(d.weight) + ")";
    return false;
  }
  return true;
}

bool schemas_match(const Model& model, const Database& db, std::string& error) {
  const FeatureSchema& m = model.schema();
  const FeatureSchema& d = db.schema();
  if (m.name != d.name || m.groups.size() != d.groups.size() || m.dims != d.dims) {
    error = "feature schema: model has '" + m.name + "' (" + std::to_string(m.groups.size()) + " groups, " +
            std::to_string(m.dims) + " dims), database has '" + d.name + "' (" + std::to_string(d.groups.size()) +
            " groups, " + std::to_string(d.dims) + " dims)";
    return false;
  }
  for (size_t g = 0; g < m.groups.size(); ++g) {
    if (!groups_match(m.groups[g], d.groups[g], error)) return false;
  }
  for (int i = 0; i < m.dims; ++i) {
    const float mo = model.feature_offset()[i], ms = model.feature_scale()[i];
    const float dof = db.feature_offset()[i], ds = db.feature_scale()[i];
    if (!near(mo, dof, 1e-3f * std::max(1.0f, std::fabs(ds))) || !near(ms, ds, 1e-3f * std::fabs(ds))) {
      error = "feature normalisation differs at dim " + std::to_string(i) +
              " (was the database imported from other data or with other settings?)";
      return false;
    }
  }
  return true;
}

}  // namespace

bool model_matches_database(const Model& model, const Database& db, std::string& error) {
  if (!skeletons_match(model.skeleton(), db.skeleton(), error)) return false;
  if (model.contact_joints() != db.contact_joints()) {
    error = "contact joints differ (model " + std::to_string(model.contact_joints().size()) + ", database " +
            std::to_string(db.contact_joints().size()) + ")";
    return false;
  }
  if (!near(model.fps(), db.fps(), 1e-3f)) {
    error = "frame rate: model " + std::to_string(model.fps()) + " fps, database " + std::to_string(db.fps()) + " fps";
    return false;
  }
  return schemas_match(model, db, error);
}

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

#if defined(__SSE2__)
namespace {

// Four lanes of quat_from_6d, each operation the scalar one's (SSE2 has no fused multiply-add,
// and division and square root are correctly rounded), so every lane equals it bit for bit.
struct Lanes {
  __m128 v;
};
inline Lanes operator+(Lanes a, Lanes b) { return {_mm_add_ps(a.v, b.v)}; }
inline Lanes operator-(Lanes a, Lanes b) { return {_mm_sub_ps(a.v, b.v)}; }
inline Lanes operator*(Lanes a, Lanes b) { return {_mm_mul_ps(a.v, b.v)}; }
inline Lanes operator/(Lanes a, Lanes b) { return {_mm_div_ps(a.v, b.v)}; }
inline Lanes splat(float x) { return {_mm_set1_ps(x)}; }
inline Lanes root(Lanes a) { return {_mm_sqrt_ps(a.v)}; }
inline __m128 greater(Lanes a, Lanes b) { return _mm_cmpgt_ps(a.v, b.v); }
// Lanes of `yes` where `mask` is set, else of `no`.
inline Lanes pick(__m128 mask, Lanes yes, Lanes no) { return {_mm_or_ps(_mm_and_ps(mask, yes.v), _mm_andnot_ps(mask, no.v))}; }

struct Vec3Lanes {
  Lanes x, y, z;
};
inline Lanes dot(const Vec3Lanes& a, const Vec3Lanes& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
// normalize(): a / |a|, zero where |a| <= 1e-8.
inline Vec3Lanes normalized(const Vec3Lanes& a) {
  const Lanes n = root(dot(a, a));
  const __m128 ok = greater(n, splat(1e-8f));
  const Lanes zero = splat(0.0f);
  return {pick(ok, a.x / n, zero), pick(ok, a.y / n, zero), pick(ok, a.z / n, zero)};
}

// quat_from_columns() on four lanes: the four branches of Shepperd's method computed alike and
// selected per lane.
void columns_to_quats(const Vec3Lanes& c0, const Vec3Lanes& c1, const Vec3Lanes& c2, Lanes q[4]) {
  const Lanes m00 = c0.x, m10 = c0.y, m20 = c0.z, m01 = c1.x, m11 = c1.y, m21 = c1.z, m02 = c2.x, m12 = c2.y,
              m22 = c2.z;
  const Lanes one = splat(1.0f), trace = m00 + m11 + m22;
  const __m128 a = greater(trace, splat(0.0f));
  const __m128 b = _mm_andnot_ps(a, _mm_and_ps(greater(m00, m11), greater(m00, m22)));
  const __m128 c = _mm_andnot_ps(_mm_or_ps(a, b), greater(m11, m22));
  const Lanes radicand = pick(a, trace + one, pick(b, one + m00 - m11 - m22, pick(c, one + m11 - m00 - m22, one + m22 - m00 - m11)));
  const Lanes s = splat(2.0f) * root(radicand), quarter = splat(0.25f) * s;
  const Lanes p1 = (m21 - m12) / s, p2 = (m02 - m20) / s, p3 = (m10 - m01) / s;
  const Lanes s1 = (m01 + m10) / s, s2 = (m02 + m20) / s, s3 = (m12 + m21) / s;
  q[0] = pick(a, quarter, pick(b, p1, pick(c, p2, p3)));
  q[1] = pick(a, p1, pick(b, quarter, pick(c, s1, s2)));
  q[2] = pick(a, p2, pick(b, s1, pick(c, quarter, s3)));
  q[3] = pick(a, p3, pick(b, s2, pick(c, s3, quarter)));
}

// quat_from_6d of r6[0..24) (four rotations) into out[0..4).
void four_quats_from_6d(const float* r6, Quat* out) {
  alignas(16) float columns[6][4];
  for (int lane = 0; lane < 4; ++lane) {
    for (int k = 0; k < 6; ++k) columns[k][lane] = r6[6 * lane + k];
  }
  auto load = [&](int k) { return Lanes{_mm_load_ps(columns[k])}; };
  const Vec3Lanes c0 = normalized({load(0), load(1), load(2)});
  const Vec3Lanes b{load(3), load(4), load(5)};
  const Lanes along = dot(c0, b);
  const Vec3Lanes c1 = normalized({b.x - c0.x * along, b.y - c0.y * along, b.z - c0.z * along});
  const Vec3Lanes c2{c0.y * c1.z - c0.z * c1.y, c0.z * c1.x - c0.x * c1.z, c0.x * c1.y - c0.y * c1.x};
  Lanes q[4];
  columns_to_quats(c0, c1, c2, q);
  // normalize(Quat), then the identity where a column was degenerate (as quat_from_6d).
  const Lanes n = root(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const __m128 degenerate = _mm_or_ps(_mm_cmplt_ps(n.v, _mm_set1_ps(1e-8f)),
                                      _mm_or_ps(_mm_cmplt_ps(dot(c0, c0).v, _mm_set1_ps(0.25f)),
                                                _mm_cmplt_ps(dot(c1, c1).v, _mm_set1_ps(0.25f))));
  const Lanes identity[4] = {splat(1.0f), splat(0.0f), splat(0.0f), splat(0.0f)};
  alignas(16) float result[4][4];
  for (int k = 0; k < 4; ++k) _mm_store_ps(result[k], pick(degenerate, identity[k], q[k] / n).v);
  for (int lane = 0; lane < 4; ++lane) out[lane] = Quat{result[0][lane], result[1][lane], result[2][lane], result[3][lane]};
}

}  // namespace
#endif

void quats_from_6d(const float* r6, int count, Quat* out) {
  int j = 0;
#if defined(__SSE2__)
  for (; j + 4 <= count; j += 4) four_quats_from_6d(r6 + 6 * j, out + j);
#endif
  for (; j < count; ++j) out[j] = quat_from_6d(r6 + 6 * j);
}

PoseVectorLayout pose_layout_of(const Database& db) {
  PoseVectorLayout layout;
  layout.joints = db.joint_count() - 1;
  layout.contacts = static_cast<int>(db.contact_joints().size());
  return layout;
}

void database_pose_vector(const Database& db, int frame, float* out) {
  const PoseVectorLayout l = pose_layout_of(db);
  const Vec3* positions = db.positions(frame);
  const Quat* rotations = db.rotations(frame);
  for (int j = 0; j < l.joints; ++j) {
    const Vec3 p = positions[j + 1];
    float* position = out + l.positions() + 3 * j;
    position[0] = p.x, position[1] = p.y, position[2] = p.z;
    quat_to_6d(rotations[j + 1], out + l.rotations() + 6 * j);
  }
  const Quat root = rotations[0];
  const Vec3 v = inverse_rotate(root, db.velocities(frame)[0]);
  const Vec3 w = inverse_rotate(root, db.angular_velocities(frame)[0]);
  const float root_motion[6] = {v.x, v.y, v.z, w.x, w.y, w.z};
  for (int i = 0; i < 6; ++i) out[l.root_velocity() + i] = root_motion[i];
  for (int c = 0; c < l.contacts; ++c) out[l.contact() + c] = db.contacts(frame)[c] ? 1.0f : 0.0f;
}

void pose_from_vector(const PoseVectorLayout& layout, const float* pose, Vec3* local_positions,
                      Quat* local_rotations) {
  local_positions[0] = Vec3{};
  local_rotations[0] = Quat{};
  for (int j = 0; j < layout.joints; ++j) local_positions[j + 1] = vec3_at(pose + layout.positions() + 3 * j);
  quats_from_6d(pose + layout.rotations(), layout.joints, local_rotations + 1);
}

Vec3 pose_root_velocity(const PoseVectorLayout& layout, const float* pose) {
  return vec3_at(pose + layout.root_velocity());
}

Vec3 pose_root_angular_velocity(const PoseVectorLayout& layout, const float* pose) {
  return vec3_at(pose + layout.root_angular());
}

}  // namespace lmm
