// What every gamepad-steered character exposes: the output pose (PoseOutput) and, through
// CharacterBase, the calls an engine (and the C API) drives a database or learned character with.
#pragma once

#include <vector>

#include "lmm/asset/features.hpp"
#include "lmm/core/math.hpp"
#include "lmm/motion/pose_buffers.hpp"
#include "lmm/motion/root_motion.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// The output pose every character exposes; characters derive from it and fill the members.
class PoseOutput {
 public:
  // Local pose of the output (joint 0 = world root), one entry per skeleton joint.
  const std::vector<Vec3>& local_positions() const { return out_.positions; }
  // Local rotations of the output pose.
  const std::vector<Quat>& local_rotations() const { return out_.rotations; }
  // Global joint positions of the output pose (world space).
  const std::vector<Vec3>& global_positions() const { return global_positions_; }
  // Global joint rotations of the output pose.
  const std::vector<Quat>& global_rotations() const { return global_rotations_; }
  // World position of the character root.
  Vec3 root_position() const { return out_.positions[0]; }
  // Facing of the character root.
  Quat root_rotation() const { return out_.rotations[0]; }
  // World velocity of the character root (m/s) in the last update.
  Vec3 root_velocity() const { return out_.velocities[0]; }
  // World angular velocity of the character root (scaled axis, rad/s) in the last update.
  Vec3 root_angular_velocity() const { return out_.angular[0]; }
  // The root displacement of the last update (zero before the first).
  const RootMotion& root_motion() const { return root_motion_; }

 protected:
  // The world trajectory that normalised `features` (made with `offset` and `scale`) describe, seen
  // from the output root: what played_trajectory() of each character reports.
  void trajectory_of_features(const FeatureSchema& schema, const float* features, const float* offset,
                              const float* scale, Vec3* positions, Vec3* directions) const;
  // Remembers the root at the start of an update (for root_motion()).
  void begin_root_motion();
  // Sets root_motion() from the root remembered by begin_root_motion() to the current one.
  void end_root_motion();
  // Places the root at `position` facing `rotation` (no velocity change) and updates globals.
  void place_root(Vec3 position, Quat rotation, const std::vector<int>& parents);

  // Sizes the output for `joints` joints (allocates).
  void resize_output(int joints);
  // Global pose of the output by forward kinematics over `parents`.
  void update_globals(const std::vector<int>& parents);

  PoseBuffers out_;  // output pose (joint 0: world root)
  std::vector<Vec3> global_positions_;
  std::vector<Quat> global_rotations_;
  RootMotion root_motion_;
  Vec3 motion_start_position_;
  Quat motion_start_rotation_;
};

// A gamepad-steered character: the output pose plus the controller state and counters. The
// database and learned characters derive from it; the virtual calls let an engine (and the C
// API) drive either through one pointer.
class CharacterBase : public PoseOutput {
 public:
  CharacterBase() = default;
  CharacterBase(const CharacterBase&) = default;
  CharacterBase(CharacterBase&&) = default;
  CharacterBase& operator=(const CharacterBase&) = default;
  CharacterBase& operator=(CharacterBase&&) = default;
  virtual ~CharacterBase() = default;

  // Advances by dt seconds (clamped to (0, kMaxDt]); no allocation.
  virtual void update(const GamepadInput& input, float dt) = 0;
  // Back to the state init() left, at `position` facing `heading` radians about +Y, counters
  // cleared; no allocation.
  virtual void reset(Vec3 position, float heading) = 0;
  // Moves the character rigidly to `position` facing `heading` (pose, transition and simulated
  // trajectory move with it; foot locks are released); no allocation.
  void teleport(Vec3 position, float heading);
  // The game's root for the next update (RootOwner::Game): where its capsule put the root after
  // applying root_motion(). No allocation.
  void set_root(Vec3 position, Quat rotation);
  // Switches the root contract (see RootOwner).
  void set_root_owner(RootOwner owner) { steering_.set_root_owner(owner); }
  // The spring-simulated root the character follows.
  const SimulatedRoot& simulation() const { return steering_.simulation(); }
  // Predicted root samples at the schema's trajectory offsets (world space).
  const std::vector<RootSample>& predicted_trajectory() const { return steering_.trajectory(); }
  // Current desired velocity from the input (m/s, world).
  Vec3 desired_velocity() const { return steering_.desired_velocity(); }
  // Counters.
  const CharacterStats& stats() const { return stats_; }

 protected:
  // The skeleton's parents (for forward kinematics after a root change).
  virtual const std::vector<int>& parents() const = 0;
  // Drops state tied to world positions (foot locks) before a teleport.
  virtual void release_world_state() {}

  Steering steering_;
  CharacterStats stats_;
};

}  // namespace lmm
