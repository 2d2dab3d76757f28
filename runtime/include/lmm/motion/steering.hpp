// The steering every motion-matching character shares, whether it plays a database or a learned
// model: input sanitising, the spring-simulated root and its predicted trajectory, the search
// cadence, and root-motion integration with the pull towards the simulation.
#pragma once

#include <string>
#include <vector>

#include "lmm/asset/features.hpp"
#include "lmm/motion/controller.hpp"
#include "lmm/motion/root_motion.hpp"

namespace lmm {

constexpr float kMaxDt = 0.25f;  // s; larger (or non-positive) steps are clamped

// Tunables shared by database and learned characters.
struct SteeringSettings {
  ControllerSettings controller;
  // Replace controller's six speeds by those measured from the data (Database::speeds(), or the
  // bundle's Model::speeds() when it has them); false keeps controller's speeds as given.
  bool speeds_from_data = true;
  float search_interval = 0.1f;  // s between searches (or projections)
  // 0..1: the first periodic search comes this fraction of search_interval after the first
  // update (0: at once), so characters with different phases search on different frames.
  float search_phase = 0.0f;
  float force_search_velocity = 0.5f;         // m/s jump of the desired velocity that searches at once
  float force_search_rotation = 0.5f;         // rad jump of the desired facing that searches at once
  float inertialization_halflife = 0.1f;      // s
  bool adjust_to_simulation = true;           // pull the root towards the simulated root
  float adjustment_halflife = 0.2f;           // s
  float adjustment_max_ratio = 0.5f;          // adjustment speed limit, as a fraction of root speed
  float max_simulation_distance = 0.5f;       // m the simulated root may lead the character
  std::string expected_schema;                // "" = any; else the data's feature schema name must match
  RootOwner root_owner = RootOwner::Library;  // see RootOwner; Game disables the pull above
};

// Counters of one character.
struct CharacterStats {
  int updates = 0;
  int searches = 0;  // database searches or projector calls
  int transitions = 0;
  int sanitized_inputs = 0;    // NaN / inf stick or camera values replaced by zero
  int clamped_dt = 0;          // dt <= 0 or > kMaxDt clamped
  int forced_projections = 0;  // learned: predictions older than the limit replaced by the projector
  int nonfinite_states = 0;    // learned: non-finite network outputs discarded
  int clamped_states = 0;      // learned: states clamped to 32 std of the training states
  int constraint_searches = 0;   // searches (projections) made because the tag constraint changed or was about to be left
  int unsatisfied_searches = 0;  // searches under a tag constraint that found no allowed frame (projected a forbidden state)
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
  // Puts the simulated root on the character root (`position`, `rotation`, moving at world
  // `velocity`), e.g. while an action drives the root, so that steering resumes from there.
  void hold_at(Vec3 position, Quat rotation, Vec3 velocity);
  // Moves the simulated root, its history and its trajectory rigidly (teleport); no allocation.
  void move(const GroundMove& move);
  // Who owns the root from now on (a root-owner change keeps every other setting).
  void set_root_owner(RootOwner owner) { settings_.root_owner = owner; }
  // Integrates the root over dt from character-space velocities, pulled towards the simulated
  // root when the settings ask for it and `pull`; returns world velocities too.
  void integrate_root(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation, Vec3& velocity,
                      Vec3& angular, bool pull = true) const;

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

}  // namespace lmm
