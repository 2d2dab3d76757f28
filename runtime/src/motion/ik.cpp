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

// The point furthest along the segment from `from` to `from + step` that lies within `radius` of
// `center` (`from` lies within it).
Vec3 furthest_within(Vec3 center, float radius, Vec3 from, Vec3 step) {
  const Vec3 a = from - center;
  const float ss = dot(step, step), as = dot(a, step), aa = dot(a, a);
  if (ss < 1e-12f) return from;
  const float disc = std::max(0.0f, as * as - ss * (aa - radius * radius));
  return from + step * std::clamp((-as + std::sqrt(disc)) / ss, 0.0f, 1.0f);
}

// Where an ankle goes, with its global rotation.
struct AnkleGoal {
  Vec3 position;
  Quat rotation;
};

// The ankle goal of a foot whose contact joint (animated at `toe`) is held at `lock`: the animated
// foot carried to the lock. An ankle beyond `reach` from the hip pivots about the lock (the heel
// lifts) onto the reach, nearest its animated direction; a lock too far for even that is first
// dragged towards `toe`.
AnkleGoal pivot_about_toe(const LegChain& chain, Vec3 toe, float reach, Vec3& lock) {
  const Vec3 toe_to_ankle = chain.ankle - toe;
  const float foot = length(toe_to_ankle);
  Vec3 ankle = lock + toe_to_ankle;
  if (length(ankle - chain.hip) <= reach || foot < 1e-4f) return {ankle, chain.ankle_rotation};
  const float farthest = reach + 0.98f * foot;
  if (length(lock - chain.hip) > farthest) {
    lock = furthest_within(chain.hip, farthest, toe, lock - toe);
    ankle = lock + toe_to_ankle;
  }
  const Vec3 to_hip = chain.hip - lock;
  const float d = length(to_hip);
  if (length(ankle - chain.hip) <= reach || d < reach - foot || d > reach + foot) return {ankle, chain.ankle_rotation};
  // The circle where the foot's sphere about the lock meets the leg's reach about the hip.
  const Vec3 u = to_hip / d;
  const float along = (d * d + foot * foot - reach * reach) / (2.0f * d);
  const float radius = std::sqrt(std::max(0.0f, foot * foot - along * along));
  Vec3 across = toe_to_ankle - u * dot(toe_to_ankle, u);
  if (length(across) < 1e-6f) across = cross(u, Vec3{1.0f, 0.0f, 0.0f});
  const Vec3 pivoted = lock + u * along + normalize(across) * radius;
  const Vec3 axis = cross(toe_to_ankle, pivoted - lock);
  if (length(axis) < 1e-9f) return {pivoted, chain.ankle_rotation};
  const Quat pivot = quat_from_angle_axis(angle_between(toe_to_ankle, pivoted - lock), normalize(axis));
  return {pivoted, pivot * chain.ankle_rotation};
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
  pelvis_ = -1;
  for (const Foot& foot : feet_) {
    const int parent = foot.hip > 0 ? parents[size_t(foot.hip)] : -1;
    if (parent <= 0 || (pelvis_ >= 0 && parent != pelvis_)) {
      pelvis_ = -1;
      break;
    }
    pelvis_ = parent;
  }
  pelvis_shift_ = Vec3{};
  release_all();
}

void FootLocker::update_lock(Foot& foot, bool contact, Vec3 animated, float unlock_distance, float blend_halflife,
                             float dt) {
  if (contact && !foot.locked) {
    foot.locked = true;
    foot.position = animated + foot.offset;
    // Plant the foot where it was last shown, so that it stops at once.
    const Vec3 step = foot.shown - foot.position;
    if (foot.shown_valid && length(on_ground(step)) < kLongestPlantingStep) {
      foot.position.x = foot.shown.x;
      foot.position.z = foot.shown.z;
    }
  }
  if (!contact) foot.locked = false;
  if (foot.locked) {
    const Vec3 offset = foot.position - animated;
    if (length(offset) > unlock_distance) foot.position = animated + offset * (unlock_distance / length(offset));
    foot.offset = foot.position - animated;
    foot.offset_velocity = Vec3{};
  } else {
    spring_decay(foot.offset, foot.offset_velocity, blend_halflife, dt);
  }
}

float FootLocker::pelvis_drop_needed(const Foot& foot, const std::vector<Vec3>& global_positions) const {
  const Vec3 hip = global_positions[size_t(foot.hip)], knee = global_positions[size_t(foot.knee)];
  const Vec3 ankle = global_positions[size_t(foot.ankle)];
  const float reach = kPelvisReachRatio * (length(knee - hip) + length(ankle - knee));
  const Vec3 to_target = ankle + foot.offset - hip;
  const float across = length(on_ground(to_target));
  const float reachable_depth = across < reach ? std::sqrt(reach * reach - across * across) : 0.0f;
  return -to_target.y - reachable_depth;
}

void FootLocker::lower_pelvis(float needed, float dt, const std::vector<int>& parents, PoseBuffers& out,
                              std::vector<Vec3>& global_positions, std::vector<Quat>& global_rotations) {
  pelvis_shift_ = Vec3{};
  if (pelvis_ < 0) return;
  const Vec3 goal{0.0f, -std::clamp(needed, 0.0f, kMaxPelvisDrop), 0.0f};
  Vec3 from_goal = pelvis_drop_ - goal;
  spring_decay(from_goal, pelvis_drop_velocity_, kPelvisHalflife, dt);
  pelvis_drop_ = goal + from_goal;
  if (length(pelvis_drop_) < 1e-6f) return;
  pelvis_shift_ = inverse_rotate(global_rotations[size_t(parents[size_t(pelvis_)])], pelvis_drop_);
  out.positions[size_t(pelvis_)] = out.positions[size_t(pelvis_)] + pelvis_shift_;
  forward_kinematics(parents.data(), int(parents.size()), out.positions.data(), out.rotations.data(),
                     global_positions.data(), global_rotations.data());
}

void FootLocker::reach_for(Foot& foot, Vec3 forward, const std::vector<int>& parents, PoseBuffers& out,
                           std::vector<Vec3>& global_positions, std::vector<Quat>& global_rotations) {
  const LegChain chain{global_positions[size_t(foot.hip)],   global_positions[size_t(foot.knee)],
                       global_positions[size_t(foot.ankle)], global_rotations[size_t(foot.hip)],
                       global_rotations[size_t(foot.knee)],  global_rotations[size_t(foot.ankle)]};
  // A released foot: its fading offset from the animated ankle.
  AnkleGoal goal{chain.ankle + foot.offset, chain.ankle_rotation};
  if (foot.locked) {
    const Vec3 toe = global_positions[size_t(foot.toe)];
    const float leg = length(chain.knee - chain.hip) + length(chain.ankle - chain.knee);
    goal =
        pivot_about_toe(chain, toe, std::max(length(chain.ankle - chain.hip), kStraightLegRatio * leg), foot.position);
    foot.offset = foot.position - toe;
  } else if (length(foot.offset) < 1e-5f) {
    return;
  }
  LegChain pivoted = chain;
  pivoted.ankle_rotation = goal.rotation;
  two_joint_ik(pivoted, goal.position, forward, out.rotations[size_t(foot.hip)], out.rotations[size_t(foot.knee)],
               out.rotations[size_t(foot.ankle)]);
  // Refresh the global pose before the next foot (chains may share joints).
  forward_kinematics(parents.data(), int(parents.size()), out.positions.data(), out.rotations.data(),
                     global_positions.data(), global_rotations.data());
  if (foot.locked) {
    largest_ik_error_ = std::max(largest_ik_error_, length(global_positions[size_t(foot.ankle)] - goal.position));
  }
}

void FootLocker::apply(const uint8_t* contacts, float unlock_distance, float blend_halflife, float dt,
                       const std::vector<int>& parents, PoseBuffers& out, std::vector<Vec3>& global_positions,
                       std::vector<Quat>& global_rotations) {
  const Vec3 forward = rotate(out.rotations[0], Vec3{0, 0, 1});
  largest_ik_error_ = 0.0f;
  float drop_needed = 0.0f;
  for (size_t c = 0; c < feet_.size(); ++c) {
    Foot& foot = feet_[c];
    if (foot.hip <= 0) continue;
    update_lock(foot, contacts[c] != 0, global_positions[size_t(foot.toe)], unlock_distance, blend_halflife, dt);
    if (length(foot.offset) >= 1e-5f) drop_needed = std::max(drop_needed, pelvis_drop_needed(foot, global_positions));
  }
  lower_pelvis(drop_needed, dt, parents, out, global_positions, global_rotations);
  for (Foot& foot : feet_) {
    if (foot.hip > 0) reach_for(foot, forward, parents, out, global_positions, global_rotations);
  }
  for (Foot& foot : feet_) {
    foot.shown = global_positions[size_t(foot.toe)];
    foot.shown_valid = foot.hip > 0;
  }
}

void FootLocker::restore_pelvis(PoseBuffers& out) {
  if (pelvis_ >= 0) out.positions[size_t(pelvis_)] = out.positions[size_t(pelvis_)] - pelvis_shift_;
  pelvis_shift_ = Vec3{};
}

void FootLocker::release_all() {
  largest_ik_error_ = 0.0f;
  pelvis_drop_ = pelvis_drop_velocity_ = Vec3{};
  for (Foot& foot : feet_) {
    foot.locked = false;
    foot.shown_valid = false;
    foot.offset = foot.offset_velocity = Vec3{};
  }
}

void change_foot_lock(const FootLockSettings& lock, FootLockSettings& settings, FootLocker& feet) {
  if (!lock.foot_lock) feet.release_all();
  settings = lock;
}

}  // namespace lmm
