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
  float foot_unlock_distance = 0.25f;  // m: a lock further than this from the animated foot is dragged along
  float foot_blend_halflife = 0.03f;   // s: IK offset fade-out after a release
};

// Locks contact joints to the ground while they are labelled in contact (Lee, Kwon & Lee 2023 App. A removes
// foot sliding this way): a joint that enters contact stays where it was shown, and the leg bends by
// two-joint IK to reach it. A leg too short for its lock first lifts the heel (the foot pivots
// about the contact joint), then lowers the pelvis (at most kMaxPelvisDrop); a lock still out of
// reach, or further than `unlock_distance` from the animated joint, is dragged after it. After the
// contact ends the offset fades out with a spring of `blend_halflife`.
class FootLocker {
 public:
  // Finds each contact joint's ankle, knee and hip, and the pelvis that all hips share
  // (allocates); joints without a full leg above them are left alone.
  void init(const std::vector<int>& parents, const std::vector<int>& contact_joints);
  // Adjusts the leg rotations (and the pelvis position) of `out` for contacts[k] != 0 (one byte per
  // contact joint) and keeps `global_positions` / `global_rotations` up to date. No allocation.
  void apply(const uint8_t* contacts, float unlock_distance, float blend_halflife, float dt,
             const std::vector<int>& parents, PoseBuffers& out, std::vector<Vec3>& global_positions,
             std::vector<Quat>& global_rotations);
  // Gives `out` back the pelvis position its animation had before the last apply(): call it before
  // a transition takes `out` as the pose it blends from.
  void restore_pelvis(PoseBuffers& out);
  // Releases every lock and clears the IK offsets at once (after a teleport or reset).
  void release_all();
  // Largest distance (m) in the last apply() between the ankle of a locked foot and its IK target:
  // what the legs could not reach (0 when every target was reached or no foot was locked).
  float largest_ik_error() const { return largest_ik_error_; }

  // m: how far the pelvis may go down for a lock.
  static constexpr float kMaxPelvisDrop = 0.05f;
  // s: halflife of the spring the pelvis follows towards the drop it needs.
  static constexpr float kPelvisHalflife = 0.05f;
  // Of the leg's length: how far from the hip a lock may put the ankle before the pelvis drops.
  static constexpr float kPelvisReachRatio = 0.995f;
  // Of the leg's length: how far from the hip the heel's pivot may put the ankle.
  static constexpr float kStraightLegRatio = 0.999f;
  // m: a foot planting further than this from where it was shown plants where its offset puts it.
  static constexpr float kLongestPlantingStep = 0.1f;

 private:
  struct Foot {
    int toe = -1, ankle = -1, knee = -1, hip = -1;
    bool locked = false;
    bool shown_valid = false;      // `shown` holds the last apply()'s position
    Vec3 shown;                    // world position of the contact joint after the last apply()
    Vec3 position;                 // locked world position of the contact joint
    Vec3 offset, offset_velocity;  // IK target offset from the animated position
  };
  void update_lock(Foot& foot, bool contact, Vec3 animated, float unlock_distance, float blend_halflife, float dt);
  float pelvis_drop_needed(const Foot& foot, const std::vector<Vec3>& global_positions) const;
  void lower_pelvis(float needed, float dt, const std::vector<int>& parents, PoseBuffers& out,
                    std::vector<Vec3>& global_positions, std::vector<Quat>& global_rotations);
  void reach_for(Foot& foot, Vec3 forward, const std::vector<int>& parents, PoseBuffers& out,
                 std::vector<Vec3>& global_positions, std::vector<Quat>& global_rotations);

  std::vector<Foot> feet_;
  int pelvis_ = -1;                          // the hips' common parent, -1 when they have none (or it is the root)
  Vec3 pelvis_drop_, pelvis_drop_velocity_;  // world offset of the pelvis and its velocity
  Vec3 pelvis_shift_;                        // local offset apply() gave the pelvis
  float largest_ik_error_ = 0.0f;
};

// Makes `lock` a character's foot-lock settings (its FootLockSettings part, `settings`); turning
// locking off releases every lock of `feet` at once. No allocation.
void change_foot_lock(const FootLockSettings& lock, FootLockSettings& settings, FootLocker& feet);

}  // namespace lmm
