#include "lmm/pose_vector.hpp"

#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "pose_simd_shared.hpp"

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
#endif
  for (; j < count; ++j) out[j] = quat_from_6d(r6 + 6 * j);
}

}  // namespace

void quats_from_6d(const float* r6, int count, Quat* out, KernelPath path) {
  convert_quats(wide_quats_kernel(path), path == KernelPath::Scalar, r6, count, out);
}

void forward_kinematics_many(const int* parents, int joints, const PoseArrays& poses, float* scratch,
                             KernelPath path) {
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
