// What every motion-matching character shares, whether it plays a database or a learned model:
// input sanitising, the spring-simulated root and its predicted trajectory, the search cadence,
// root-motion integration with the pull towards the simulation, and inertialization offsets.
#pragma once

#include <string>
#include <vector>

#include "lmm/controller.hpp"
#include "lmm/features.hpp"

namespace lmm {

constexpr float kMaxDt = 0.25f;  // s; larger (or non-positive) steps are clamped

// Who moves a character's root between updates (the root contract).
enum class RootOwner {
  Library,  // update() integrates the animation's root motion, pulled towards the simulated root
  Game,     // the game moves the root (e.g. a physics capsule): after each update it applies
            // root_motion() its own way and hands the result back with set_root() before the next
};

// The root displacement of one update (root motion), for games that move the root themselves.
struct RootMotion {
  Vec3 translation;        // world space
  Vec3 local_translation;  // in the root's facing at the start of the update
  Quat rotation;           // facing after = rotation * facing before (a turn about +Y)
};

// A rigid move on the ground: p -> to + turn (p - from); what teleport() applies to a character.
struct GroundMove {
  Vec3 from, to;
  Quat turn;

  // The moved point.
  Vec3 point(Vec3 p) const { return to + rotate(turn, p - from); }
  // The moved direction (velocities).
  Vec3 direction(Vec3 v) const { return rotate(turn, v); }
  // The moved orientation.
  Quat rotation(Quat q) const { return normalize(turn * q); }
};

// Tunables shared by database and learned characters.
struct SteeringSettings {
  ControllerSettings controller;
  // Replace controller's six speeds by those measured from the data (Database::speeds(), or the
  // bundle's Model::speeds() when it has them); false keeps controller's speeds as given.
  bool speeds_from_data = true;
  float search_interval = 0.1f;          // s between searches (or projections)
  // 0..1: the first periodic search comes this fraction of search_interval after the first
  // update (0: at once), so characters with different phases search on different frames.
  float search_phase = 0.0f;
  float force_search_velocity = 0.5f;    // m/s jump of the desired velocity that searches at once
  float force_search_rotation = 0.5f;    // rad jump of the desired facing that searches at once
  float inertialization_halflife = 0.1f; // s
  bool adjust_to_simulation = true;      // pull the root towards the simulated root
  float adjustment_halflife = 0.2f;      // s
  float adjustment_max_ratio = 0.5f;     // adjustment speed limit, as a fraction of root speed
  float max_simulation_distance = 0.5f;  // m the simulated root may lead the character
  std::string expected_schema;           // "" = any; else the data's feature schema name must match
  RootOwner root_owner = RootOwner::Library;  // see RootOwner; Game disables the pull above
};

// Counters of one character.
struct CharacterStats {
  int updates = 0;
  int searches = 0;          // database searches or projector calls
  int transitions = 0;
  int sanitized_inputs = 0;  // NaN / inf stick or camera values replaced by zero
  int clamped_dt = 0;        // dt <= 0 or > kMaxDt clamped
  int forced_projections = 0;  // learned: predictions older than the limit replaced by the projector
  int nonfinite_states = 0;    // learned: non-finite network outputs discarded
  int clamped_states = 0;      // learned: states clamped to 32 std of the training states
};

// Local pose buffers of one skeleton: positions, rotations, linear and angular velocities.
struct PoseBuffers {
  std::vector<Vec3> positions, velocities, angular;
  std::vector<Quat> rotations;

  // Sizes every buffer for `joints` joints (allocates).
  void resize(int joints);
};

// Controller state of one character: the simulated root, its predicted trajectory at the
// schema's offsets (past offsets from a history of the character root) and the search timer.
class Steering {
 public:
  // Allocates; the character starts at `position` facing `rotation`.
  void init(const SteeringSettings& settings, const std::vector<int>& trajectory_offsets, float fps, Vec3 position,
            Quat rotation);
  // Sanitises dt and the input (counted in `stats`), advances the simulated root (kept within
  // max_simulation_distance of `character_root`) and predicts the trajectory. Returns the dt used.
  float begin_update(const GamepadInput& raw_input, float raw_dt, Vec3 character_root, CharacterStats& stats);
  // Whether a search is due: the interval elapsed or the desired motion changed strongly.
  bool search_due() const;
  // Records that a search ran now.
  void searched(CharacterStats& stats);
  // Remembers this update's desired motion and the character root (call once per update).
  void end_update(Vec3 root_position, Quat root_rotation);
  // Moves the simulated root, its history and its trajectory rigidly (teleport); no allocation.
  void move(const GroundMove& move);
  // Who owns the root from now on (a root-owner change keeps every other setting).
  void set_root_owner(RootOwner owner) { settings_.root_owner = owner; }
  // Integrates the root over dt from character-space velocities, pulled towards the simulated
  // root when the settings ask for it; returns world velocities too.
  void integrate_root(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation,
                      Vec3& velocity, Vec3& angular) const;

  // The spring-simulated root.
  const SimulatedRoot& simulation() const { return sim_; }
  // Predicted root samples at the trajectory offsets (world space).
  const std::vector<RootSample>& trajectory() const { return trajectory_; }
  // Current desired velocity (m/s, world).
  Vec3 desired_velocity() const { return desired_velocity_; }
  // The settings given to init.
  const SteeringSettings& settings() const { return settings_; }

 private:
  GamepadInput sanitize(const GamepadInput& input, CharacterStats& stats) const;
  void predict_trajectory();

  SteeringSettings settings_;
  std::vector<int> offsets_;
  float fps_ = 30.0f;
  SimulatedRoot sim_;
  SimulatedRoot::Decay update_decay_;                   // the per-frame update's exponentials
  std::vector<SimulatedRoot::Decay> prediction_decay_;  // each trajectory offset's
  std::vector<RootSample> trajectory_;
  std::vector<RootSample> history_;  // ring buffer of past roots, one per update (empty: no past offsets)
  std::vector<double> history_time_;
  int history_next_ = 0;
  double clock_ = 0.0;
  float time_since_search_ = 0.0f;
  Vec3 desired_velocity_, previous_desired_velocity_;
  Quat desired_rotation_, previous_desired_rotation_;
};

// Inertialization offsets (basic motion matching, inertialization): joints 1.. carry position and rotation
// offsets that decay with critically damped springs; the root carries character-space
// velocity offsets instead (its position is integrated).
class Inertializer {
 public:
  // Sizes the offsets for `joints` joints and clears them (allocates).
  void resize(int joints);
  // First half of a transition: keeps the velocities of joints 1.. as shown now, the velocities
  // of `source` (the last apply()'s source, its velocities filled in) plus the offsets'.
  void keep_shown_velocities(const PoseBuffers& source);
  // Second half: starts a transition from the current output (`out`, rotations `animated`
  // before any IK, the velocities kept by keep_shown_velocities) to the new source pose
  // `source`; root offsets are the old minus the new character-space root velocities.
  void start(const PoseBuffers& out, const std::vector<Quat>& animated, const PoseBuffers& source,
             Vec3 root_velocity_offset, Vec3 root_angular_offset);
  // Decays the offsets by dt and writes the positions and rotations of joints 1.. of `out` as
  // source + offsets (their velocities are only needed by a transition, which gets them from
  // keep_shown_velocities).
  void apply(const PoseBuffers& source, float halflife, float dt, PoseBuffers& out);
  // Current root velocity offsets (character space).
  Vec3 root_velocity_offset() const { return offsets_.positions[0]; }
  Vec3 root_angular_offset() const { return offsets_.rotations_scaled[0]; }

 private:
  struct Offsets {
    std::vector<Vec3> positions, velocities, rotations_scaled, angular;
  } offsets_;
};

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

// Moves `position` on the ground towards `target` by a spring step of `halflife`, at most
// max_ratio x |velocity| x dt (so a standing root is never dragged): basic motion matching's adjustment.
void pull_towards(Vec3 target, Vec3 velocity, float halflife, float max_ratio, float dt, Vec3& position);

// Integrates a root over dt from character-space velocities; returns world velocities too.
void integrate_root_motion(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation,
                           Vec3& velocity, Vec3& angular);

}  // namespace lmm
