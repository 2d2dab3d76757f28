// Database motion matching for one character: controller, query, accelerated search, playback
// at any dt with root motion, inertialized transitions and an optional IK foot lock.
#pragma once

#include <string>
#include <vector>

#include "lmm/controller.hpp"
#include "lmm/database.hpp"
#include "lmm/features.hpp"
#include "lmm/search.hpp"

namespace lmm {

// Tunables of a database-driven character.
struct CharacterSettings {
  ControllerSettings controller;
  SearchParams search;
  float search_interval = 0.1f;          // s between searches
  float force_search_velocity = 0.5f;    // m/s jump of the desired velocity that searches at once
  float force_search_rotation = 0.5f;    // rad jump of the desired facing that searches at once
  float inertialization_halflife = 0.1f; // s
  bool adjust_to_simulation = true;      // pull the root towards the simulated root
  float adjustment_halflife = 0.2f;      // s
  float adjustment_max_ratio = 0.5f;     // adjustment speed limit, as a fraction of root speed
  float max_simulation_distance = 0.5f;  // m the simulated root may lead the character
  bool foot_lock = false;                // lock contact joints with two-joint IK
  float foot_unlock_distance = 0.25f;    // m: a lock stretched further than this releases
  float foot_blend_halflife = 0.05f;     // s: IK offset fade-out after a release
  std::string expected_schema;           // "" = any; else the database's schema name must match
};

// Counters of one character.
struct CharacterStats {
  int updates = 0;
  int searches = 0;
  int transitions = 0;
  int sanitized_inputs = 0;  // NaN / inf stick or camera values replaced by zero
  int clamped_dt = 0;        // dt <= 0 or > kMaxDt clamped
};

constexpr float kMaxDt = 0.25f;  // s; larger (or non-positive) steps are clamped

// One character driven by database motion matching. Not thread-safe itself; distinct
// characters may update concurrently over one shared Database and FeatureSearch.
class DatabaseCharacter {
 public:
  // Allocates every buffer and starts at the first frame of clip 0, at `position` facing
  // `heading` radians about +Y. False with a message for an empty or mismatched database.
  bool init(const Database& db, const FeatureSearch& search, const CharacterSettings& settings,
            Vec3 position, float heading, std::string& error);
  // Advances by dt seconds (no allocation).
  void update(const GamepadInput& input, float dt);

  // Local pose of the output (joint 0 = world root), joint_count entries.
  const std::vector<Vec3>& local_positions() const { return out_positions_; }
  // Local rotations of the output pose.
  const std::vector<Quat>& local_rotations() const { return out_rotations_; }
  // Global joint positions of the output pose (world space).
  const std::vector<Vec3>& global_positions() const { return global_positions_; }
  // Global joint rotations of the output pose.
  const std::vector<Quat>& global_rotations() const { return global_rotations_; }
  // The spring-simulated root the character follows.
  const SimulatedRoot& simulation() const { return sim_; }
  // World position of the character root.
  Vec3 root_position() const { return out_positions_[0]; }
  // Facing of the character root.
  Quat root_rotation() const { return out_rotations_[0]; }
  // Database frame being played.
  int current_frame() const { return frame_; }
  // Predicted root samples at the schema's trajectory offsets (world space).
  const std::vector<RootSample>& predicted_trajectory() const { return trajectory_; }
  // Current desired velocity from the input (m/s, world).
  Vec3 desired_velocity() const { return desired_velocity_; }
  // Counters.
  const CharacterStats& stats() const { return stats_; }

 private:
  GamepadInput sanitize(const GamepadInput& input);
  float sanitize_dt(float dt);
  bool should_search(float dt, Vec3 desired_velocity, Quat desired_rotation);
  void predict_trajectory(Vec3 desired_velocity, Quat desired_rotation);
  void build_query();
  void search_and_transition(bool must_leave);
  void start_transition(int frame);
  void sample_database(double frame_time);
  void advance_playback(float dt);
  void apply_inertialization(float dt);
  void integrate_root(float dt);
  void apply_foot_lock(float dt);
  void record_history();

  const Database* db_ = nullptr;
  const FeatureSearch* search_ = nullptr;
  CharacterSettings settings_;
  CharacterStats stats_;
  int joints_ = 0;

  // Playback.
  double frame_time_ = 0.0;  // fractional database frame
  int frame_ = 0;
  int range_ = 0;
  float time_since_search_ = 0.0f;
  bool end_zone_searched_ = false;  // searched since playback entered the clip's end zone
  Vec3 previous_desired_velocity_, desired_velocity_;
  Quat previous_desired_rotation_;

  // Sampled database pose (local; joint 0 in database world).
  std::vector<Vec3> sample_positions_, sample_velocities_, sample_angular_;
  std::vector<Quat> sample_rotations_;
  // Inertialization offsets per joint (joint 0: root velocity offsets in character space).
  std::vector<Vec3> offset_positions_, offset_velocities_, offset_rotations_, offset_angular_;
  // Output pose.
  std::vector<Vec3> out_positions_, out_velocities_, out_angular_;
  std::vector<Quat> out_rotations_;
  std::vector<Quat> animated_rotations_;  // output rotations before the foot-lock IK
  std::vector<Vec3> global_positions_, global_velocities_, global_angular_;
  std::vector<Quat> global_rotations_;

  // Controller state and query.
  SimulatedRoot sim_;
  std::vector<RootSample> trajectory_;
  std::vector<RootSample> history_;  // ring buffer of past roots, one per update
  std::vector<double> history_time_;
  int history_next_ = 0;
  double clock_ = 0.0;
  std::vector<RootSample> query_trajectory_;  // trajectory mapped into the database frame
  std::vector<float> query_;
  PoseScratch scratch_;
  std::vector<SearchResult> result_;
  SearchScratch search_scratch_;

  // Foot lock per contact joint.
  struct FootLock {
    int toe = -1, ankle = -1, knee = -1, hip = -1;
    bool locked = false;
    Vec3 position;            // locked world position of the contact joint
    Vec3 offset, offset_velocity;  // IK target offset from the animated position
  };
  std::vector<FootLock> feet_;
};

}  // namespace lmm
