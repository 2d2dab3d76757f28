#include "lmm/motion/ik.hpp"

#include <algorithm>

#include "lmm/asset/skeleton.hpp"
#include "lmm/core/springs.hpp"

namespace lmm {
namespace {

// Interior angle of a triangle opposite the side `opposite`, from its three side lengths.
float law_of_cosines(float side_a, float side_b, float opposite) {
  const float c = (side_a * side_a + side_b * side_b - opposite * opposite) / (2.0f * side_a * side_b);
  return std::acos(std::clamp(c, -1.0f, 1.0f));
}

// Local rotation after rotating a joint with global rotation `global` by `angle` about the
// world `axis`.
Quat rotate_local(Quat local, Quat global, Vec3 axis, float angle) {
  return local * quat_from_angle_axis(angle, inverse_rotate(global, axis));
}

}  // namespace

void two_joint_ik(const LegChain& chain, Vec3 target, Vec3 pole, Quat& hip_local, Quat& knee_local, Quat& ankle_local) {
  const float upper = length(chain.knee - chain.hip), lower = length(chain.ankle - chain.knee);
  if (upper < 1e-5f || lower < 1e-5f) return;
  const float reach = std::clamp(length(target - chain.hip), std::fabs(upper - lower) + 1e-4f, upper + lower - 1e-4f);
  // 1. Bend the knee so that the hip-ankle distance equals the reach.
  Vec3 bend_axis = cross(chain.hip - chain.knee, chain.ankle - chain.knee);
  if (length(bend_axis) < 1e-6f) bend_axis = cross(chain.ankle - chain.hip, pole);
  Quat bend{};
  if (length(bend_axis) > 1e-6f) {  // no bend plane at all (straight leg along the pole): skip
    bend_axis = normalize(bend_axis);
    const float knee_now = angle_between(chain.hip - chain.knee, chain.ankle - chain.knee);
    const float knee_goal = law_of_cosines(upper, lower, reach);
    bend = quat_from_angle_axis(knee_goal - knee_now, bend_axis);
    knee_local = rotate_local(knee_local, chain.knee_rotation, bend_axis, knee_goal - knee_now);
  }
  const Vec3 ankle_bent = chain.knee + rotate(bend, chain.ankle - chain.knee);
  // 2. Swing the hip so that the ankle points at the target.
  const Vec3 from = ankle_bent - chain.hip, to = target - chain.hip;
  Vec3 swing_axis = cross(from, to);
  if (length(swing_axis) < 1e-8f && dot(from, to) < 0.0f) {  // opposite: any perpendicular axis
    swing_axis = cross(from, std::fabs(from.x) < 0.9f * length(from) ? Vec3{1, 0, 0} : Vec3{0, 1, 0});
  }
  Quat swing{};
  if (length(swing_axis) > 1e-8f) {
    const float angle = angle_between(from, to);
    swing = quat_from_angle_axis(angle, normalize(swing_axis));
    hip_local = rotate_local(hip_local, chain.hip_rotation, normalize(swing_axis), angle);
  }
  // 3. Keep the ankle's global rotation: new knee global = swing * bend * old knee global.
  const Quat knee_global = swing * bend * chain.knee_rotation;
  ankle_local = inverse(knee_global) * chain.ankle_rotation;
}

void FootLocker::init(const std::vector<int>& parents, const std::vector<int>& contact_joints) {
  feet_.clear();
  for (int toe : contact_joints) {
    Foot foot;
    foot.toe = toe;
    foot.ankle = parents[size_t(toe)];
    foot.knee = foot.ankle > 0 ? parents[size_t(foot.ankle)] : -1;
    foot.hip = foot.knee > 0 ? parents[size_t(foot.knee)] : -1;
    feet_.push_back(foot);
  }
}

void FootLocker::apply(const uint8_t* contacts, float unlock_distance, float blend_halflife, float dt,
                       const std::vector<int>& parents, PoseBuffers& out, std::vector<Vec3>& global_positions,
                       std::vector<Quat>& global_rotations) {
  const Vec3 forward = rotate(out.rotations[0], Vec3{0, 0, 1});
  largest_ik_error_ = 0.0f;
  for (size_t c = 0; c < feet_.size(); ++c) {
    Foot& foot = feet_[c];
    if (foot.hip <= 0) continue;
    const Vec3 animated = global_positions[size_t(foot.toe)];
    const bool contact = contacts[c] != 0;
    if (contact && !foot.locked) {
      foot.locked = true;
      foot.position = animated + foot.offset;
    }
    if (foot.locked && (!contact || length(foot.position - animated) > unlock_distance)) foot.locked = false;
    if (foot.locked) {
      foot.offset = foot.position - animated;
      foot.offset_velocity = Vec3{};
    } else {
      spring_decay(foot.offset, foot.offset_velocity, blend_halflife, dt);
    }
    if (length(foot.offset) < 1e-5f) continue;
    const LegChain chain{global_positions[size_t(foot.hip)],   global_positions[size_t(foot.knee)],
                         global_positions[size_t(foot.ankle)], global_rotations[size_t(foot.hip)],
                         global_rotations[size_t(foot.knee)],  global_rotations[size_t(foot.ankle)]};
    const Vec3 target = chain.ankle + foot.offset;
    two_joint_ik(chain, target, forward, out.rotations[size_t(foot.hip)], out.rotations[size_t(foot.knee)],
                 out.rotations[size_t(foot.ankle)]);
    // Refresh the global pose before the next foot (chains may share joints).
    forward_kinematics(parents.data(), int(parents.size()), out.positions.data(), out.rotations.data(),
                       global_positions.data(), global_rotations.data());
    largest_ik_error_ = std::max(largest_ik_error_, length(global_positions[size_t(foot.ankle)] - target));
  }
}

void FootLocker::release_all() {
  largest_ik_error_ = 0.0f;
  for (Foot& foot : feet_) {
    foot.locked = false;
    foot.offset = foot.offset_velocity = Vec3{};
  }
}

void change_foot_lock(const FootLockSettings& lock, FootLockSettings& settings, FootLocker& feet) {
  if (!lock.foot_lock) feet.release_all();
  settings = lock;
}

}  // namespace lmm
