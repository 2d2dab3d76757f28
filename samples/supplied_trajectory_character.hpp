// An example of composing lmmkit's stages outside the library (docs/runtime.md#composing-stages):
// a database character that follows a trajectory the game supplies every frame (an AI agent, a
// cutscene spline, a network-replicated path) instead of a gamepad. Public headers only; copy this
// file and supplied_trajectory_character.cpp into a game. supplied_trajectory.cpp drives it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/eval/search.hpp"
#include "lmm/motion/database_playback.hpp"
#include "lmm/motion/stages.hpp"
#include "lmm/motion/steering.hpp"

namespace example {

// Tunables of the example character.
struct SuppliedTrajectorySettings {
  float search_interval = 0.1f;           // s between searches
  float inertialization_halflife = 0.1f;  // s
  float pull_halflife = 0.2f;             // s: pull of the root towards the game's present position
  float pull_max_ratio = 0.5f;            // pull speed limit, as a fraction of root speed
  lmm::SearchParams search;
};

// A character whose trajectory comes from the game. Not thread-safe itself; distinct characters
// may update concurrently over one Database and FeatureSearch.
class SuppliedTrajectoryCharacter {
 public:
  // Allocates and starts at the first frame of clip 0 at `position` facing `heading` (radians
  // about +Y). `search` must be built over `db` and outlive the character. False with a message.
  bool init(std::shared_ptr<const lmm::Database> db, const lmm::FeatureSearch& search,
            const SuppliedTrajectorySettings& settings, lmm::Vec3 position, float heading, std::string& error);
  // Seconds ahead (or behind, when negative) of each trajectory sample the game must supply.
  const std::vector<float>& sample_times() const { return sample_times_; }
  // The game's plan for the next update: where the character should be now and one world root
  // sample per sample_times() entry. False (plan unchanged) when the sizes differ.
  bool plan(const lmm::RootSample& present, lmm::Span<const lmm::RootSample> samples);
  // Advances dt seconds: searches with the planned trajectory when due, plays the database with
  // root motion pulled towards the planned present position, then forward kinematics.
  void update(float dt);

  // World position and facing of the root.
  lmm::RootSample root() const { return lmm::RootSample{pose_.positions[0], pose_.rotations[0]}; }
  // Global joint positions of the pose (world space).
  const std::vector<lmm::Vec3>& global_positions() const { return global_positions_; }
  // Database frame being played.
  int current_frame() const { return playback_.frame(); }
  // Searches and transitions so far.
  int searches() const { return searches_; }
  int transitions() const { return transitions_; }

 private:
  // Searches the database with the planned trajectory and jumps to the best frame found.
  void search_and_transition();
  // Global joint transforms of the pose by forward kinematics.
  void update_globals();

  std::shared_ptr<const lmm::Database> db_;
  const lmm::FeatureSearch* search_ = nullptr;
  SuppliedTrajectorySettings settings_;
  lmm::DatabasePlayback playback_;  // pose source (with inertialized transitions)
  lmm::PoseBuffers pose_;           // output pose, joint 0 = world root
  std::vector<lmm::Vec3> global_positions_;
  std::vector<lmm::Quat> global_rotations_;
  std::vector<float> sample_times_;
  lmm::RootSample present_;
  std::vector<lmm::RootSample> trajectory_;
  std::vector<float> query_;
  lmm::SearchScratch scratch_;
  lmm::SearchResult result_;
  float since_search_ = 0.0f;
  int searches_ = 0, transitions_ = 0;
};

}  // namespace example
