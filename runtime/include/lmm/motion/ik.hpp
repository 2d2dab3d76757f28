// Analytic two-joint inverse kinematics (hip -> knee -> ankle) and the foot lock built on it.
#pragma once

#include <cstdint>
#include <vector>

#include "lmm/core/math.hpp"
#include "lmm/motion/pose_buffers.hpp"

namespace lmm {

// Global state of a three-joint chain and of the hip's parent.
struct LegChain {
  Vec3 hip, knee, ankle;                             // global positions
  Quat hip_rotation, knee_rotation, ankle_rotation;  // global rotations
};

// Changes the local rotations of hip, knee and ankle so that the ankle reaches `target` (as
// far as the bone lengths allow) while the ankle keeps its global rotation. `pole` (e.g. the
// character's forward direction) picks the bend plane when the leg is perfectly straight.
void two_joint_ik(const LegChain& chain, Vec3 target, Vec3 pole, Quat& hip_local, Quat& knee_local, Quat& ankle_local);

// Whether and how a character locks its feet with a FootLocker.
struct FootLockSettings {
  bool foot_lock = false;              // lock contact joints with two-joint IK
  float foot_unlock_distance = 0.25f;  // m: a lock stretched further than this releases
  float foot_blend_halflife = 0.05f;   // s: IK offset fade-out after a release
};

// Locks contact joints to the ground while they are labelled in contact (Lee, Kwon & Lee 2023 App. A removes
// foot sliding this way): a joint that enters contact keeps its world position, the leg bends by
// two-joint IK to reach it, and after release (or when stretched beyond `unlock_distance`) the
// offset fades out with a spring of `blend_halflife`.
class FootLocker {
 public:
  // Finds each contact joint's ankle, knee and hip (allocates); joints without a full leg above
  // them are left alone.
  void init(const std::vector<int>& parents, const std::vector<int>& contact_joints);
  // Adjusts the leg rotations of `out` for contacts[k] != 0 (one byte per contact joint) and
  // keeps `global_positions` / `global_rotations` up to date. No allocation.
  void apply(const uint8_t* contacts, float unlock_distance, float blend_halflife, float dt,
             const std::vector<int>& parents, PoseBuffers& out, std::vector<Vec3>& global_positions,
             std::vector<Quat>& global_rotations);
  // Releases every lock and clears the IK offsets at once (after a teleport or reset).
  void release_all();
  // Largest distance (m) in the last apply() between an adjusted ankle and its IK target: what
  // the legs could not reach (0 when every target was reached or no foot was adjusted).
  float largest_ik_error() const { return largest_ik_error_; }

 private:
  struct Foot {
    int toe = -1, ankle = -1, knee = -1, hip = -1;
    bool locked = false;
    Vec3 position;                 // locked world position of the contact joint
    Vec3 offset, offset_velocity;  // IK target offset from the animated position
  };
  std::vector<Foot> feet_;
  float largest_ik_error_ = 0.0f;
};

// Makes `lock` a character's foot-lock settings (its FootLockSettings part, `settings`); turning
// locking off releases every lock of `feet` at once. No allocation.
void change_foot_lock(const FootLockSettings& lock, FootLockSettings& settings, FootLocker& feet);

}  // namespace lmm
