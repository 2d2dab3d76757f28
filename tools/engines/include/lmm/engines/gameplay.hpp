// lmm-sim's gameplay control of database and learned characters (issues 42, 43): the state,
// constraint and action commands of input scripts (or seeded random constraints), applied to a
// character, and what a run measures about them: time per tag, constraint violations, entries into
// forbidden frames (database), events, idle and actions.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "lmm/character/learned_character.hpp"
#include "lmm/common/report.hpp"
#include "lmm/eval/search.hpp"

namespace lmm::pipeline {

// What one input script row asks of a database character's gameplay (all empty: nothing).
struct GameplayCommand {
  std::string state;                          // set_state(state)
  bool sets_constraint = false;               // the row sets the constraint below ("none" in a cell: no condition)
  std::string require, require_any, exclude;  // comma-separated tag names
  std::string action;                         // play_action(tags, comma-separated), or "cancel"
  bool in_place = false;                      // the action's root stays in place

  // Whether the row asks nothing.
  bool empty() const { return state.empty() && !sets_constraint && action.empty(); }
};

// A released stick: shorter than this (as a fraction of full deflection).
constexpr float kReleasedStick = 0.05f;
// Seconds after a release from which idle frames are measured (the 0.5 s).
constexpr float kIdleSettleSeconds = 0.5f;
// Root speed (m/s) from which a character counts as moving again.
constexpr float kResumeSpeed = 0.3f;

// What one action played, as measured (frames and the pose-jump check: database characters).
struct ActionRecord {
  std::string tags;
  double seconds = 0.0;    // time from its start to its end event
  int first = -1;          // frame entered
  int last = -1;           // last frame played while the action played
  int run_last = -1;       // last frame of the tagged run it was entered at (the expected end)
  bool in_order = true;    // every update played a frame at or after the one before, in one clip
  bool ended = false;      // its end event fired
  double resume_s = -1.0;  // seconds from its end until the root moved at kResumeSpeed (-1: did not)
  double max_joint_speed_m_s = 0.0;  // fastest joint (world, m/s) from its start to 0.5 s after its end
  // The pose-jump check from its start to its end: the fastest joint then, and the bound an
  // inertialized transition from the pose played before keeps it within (jump_bound_m_s below).
  double entered_joint_speed_m_s = 0.0;
  double before_joint_speed_m_s = 0.0;  // fastest joint of the pose played in the 0.5 s before it started
  double clip_joint_speed_m_s = 0.0;    // fastest joint of its frames first..run_last played straight
  double pose_offset_m = 0.0;           // largest root-relative joint distance between the pose left and its first frame
  // before + 2 clip + y pose_offset / e, y = 2 ln 2 / halflife: the played pose is the action's
  // plus an offset decaying as a critically damped spring from pose_offset with velocity
  // (before - clip) at most, whose speed never exceeds |v0| + y |x0| / e.
  double jump_bound_m_s = 0.0;
};

// The gameplay measurements of a run.
struct GameplayMetrics {
  bool measured = false;
  std::vector<std::pair<std::string, double>> tag_seconds;  // per database tag, summed over characters
  long constraint_violations = 0;  // updates playing a frame the game's constraint rejects (see GameplayRecorder)
  long forbidden_entries = 0;      // transitions into a no-entry frame or one whose look-ahead breaks the constraint
  long unsatisfied_searches = 0;   // searches that found no frame the constraint allows
  long constraint_searches = 0;
  std::vector<std::pair<std::string, long>> events;  // per database event name
  long action_ends = 0;
  long event_mismatches = 0;  // updates without a transition whose events differ from the markers played
  // Idle: updates at least kIdleSettleSeconds after the stick was released, and those of them
  // playing standing frames; mean foot (contact joint) speed and root turn rate over the latter.
  long idle_updates = 0, idle_standing_updates = 0;
  double idle_foot_speed_sum_cm_s = 0.0, idle_root_turn_sum_deg_s = 0.0;  // sums over the standing ones
  std::vector<double> resume_s;  // per stick push after a settled release: seconds until the root moved
  std::vector<ActionRecord> actions;
  double max_joint_speed_m_s = 0.0;  // fastest joint over the whole run (for comparison with actions)
  // Time on frames holding a kept-out (action) tag while no action plays: with the game's
  // constraint requiring no tag and not idle (the free search: 0 unless enter_actions_freely), and
  // while idle (standing on an action clip's still frames: idle requires `standing`).
  double free_action_seconds = 0.0, idle_action_seconds = 0.0;

  // The metrics as JSON keys (object "gameplay").
  JsonObject json() const;
};

// The tags some frame of `db` has.
TagMask tags_present(const Database& db);
// A seeded random constraint command over the tags of `tags` in `present`: require one tag (30%),
// exclude one (30%), require any of two (20%) or none (20%).
GameplayCommand random_constraint_command(const TagNames& tags, TagMask present, uint32_t seed);

// `count` seeded random constraints over `tags` (>= 1) tag bits: require one tag, require any of
// two, exclude one, or require one and exclude another, a quarter each.
std::vector<TagConstraint> random_tag_constraints(int tags, int count, uint32_t seed);

// What the recorders of both kinds of character measure alike, update by update: time per tag,
// the game's constraint, event counts, idle, and each action's length, end and resumption.
class GameplayTally {
 public:
  // Adds this character's measurements to `metrics` (`stats` its counters).
  void finish(const CharacterStats& stats, GameplayMetrics& metrics) const;

 protected:
  // Over `tags` and `event_names` (each tag's and event's name, in index order), with the feet
  // `contact_joints`, the idle tag `standing` and the asset's kept-out (action) tags `kept_out`;
  // `dt` the run's time step.
  GameplayTally(const TagNames& tags, TagMask kept_out, std::vector<std::string> event_names,
                std::vector<int> contact_joints, float dt);
  // Applies a command's state and constraint; throws InputError naming `where` for an unknown
  // state or tag.
  template <typename Character>
  void apply_constraint(Character& character, const GameplayCommand& command, const std::string& where);
  // Measures what every character shares of the update just made (from the pose before it,
  // `previous_global`); returns whether an action ended in it (its events counted). Ends the
  // update of start_action.
  template <typename Character>
  bool record_common(const Character& character, float stick, float time, const std::vector<Vec3>& previous_global);
  // The mask of `names` ("none" or "": 0); throws InputError naming `where` for an unknown tag.
  TagMask mask_of(const std::string& names, const std::string& where) const;
  // Starts the record of an action of `tags` played now.
  ActionRecord& start_action(const std::string& tags);

  const TagNames& tags_;
  float dt_;
  std::deque<double> recent_joint_speeds_;  // of the updates in the last 0.5 s
  GameplayMetrics m_;
  std::vector<CharacterEvent> events_;  // the update's events (the character's events())
  int event_count_ = 0;
  bool action_start_ = false;  // the update to come starts an action (its entry is the game's)

 private:
  template <typename Character>
  void record_constraint(const Character& character, bool action_update);
  // Counts the update's events; returns whether an action ended in the update.
  template <typename Character>
  bool record_events(const Character& character);
  template <typename Character>
  void record_idle(const Character& character, float stick, float time, const std::vector<Vec3>& previous);
  template <typename Character>
  void record_action(const Character& character, float time, bool ended, double joint_speed);
  // Adds the update to free_action_seconds or idle_action_seconds when it plays a kept-out frame
  // with no action playing or ending (`tags`: the frame's).
  template <typename Character>
  void record_kept_out(const Character& character, TagMask tags, bool ended);

  std::vector<std::string> event_names_;
  std::vector<int> contact_joints_;
  std::vector<double> tag_seconds_;
  std::vector<long> event_counts_;
  int unsatisfied_seen_ = 0;
  bool unsatisfied_since_change_ = false;  // a search found no allowed frame since the constraint changed
  float released_since_ = -1.0f;    // time the stick was released (-1: held)
  float pushed_at_ = -1.0f;         // time of a push after a settled release, until the root moves
  float action_start_time_ = 0.0f;  // time the last action started
  float action_end_time_ = -1.0f;   // time the last action ended, until the root moves
  float time_ = 0.0f;               // time of the update recorded last
  TagMask standing_ = 0;
  TagMask kept_out_ = 0;
};

// Applies the commands of a database character's script and measures its gameplay: the tally,
// entries into forbidden frames, events against the markers played, and actions' frames and
// pose jumps.
class GameplayRecorder : public GameplayTally {
 public:
  // For a character over `search`'s database; `dt` the run's time step, `halflife` its
  // inertialization halflife (s, for the actions' pose-jump bound).
  GameplayRecorder(const FeatureSearch& search, float dt, float halflife);
  // Applies `command` (given at `time`) to `character`; throws InputError naming `where` (e.g.
  // "script row 4") for an unknown state or tag, or an action no frame has.
  void apply(DatabaseCharacter& character, const GameplayCommand& command, const std::string& where);
  // Measures the update just made at `time` with `stick` (its length) from frame `before`.
  void record(const DatabaseCharacter& character, float stick, float time, int before, int transitions_before,
              const std::vector<Vec3>& previous_global);

 private:
  // Whether the update's events (already taken) equal the markers of the frames played from `before`.
  bool events_match(const DatabaseCharacter& character, int before) const;
  void record_frames(const DatabaseCharacter& character, bool ended);
  // Fills the pose-jump inputs and bound of action `a` (first and run_last set), entered now by
  // `character` from the pose it plays.
  void bound_pose_jump(const DatabaseCharacter& character, ActionRecord& a) const;
  // The fastest joint of database frames first..last played straight at the database's rate.
  double clip_joint_speed(int first, int last) const;
  // The global joint positions and rotations of database frame `frame` (in its clip's space).
  void frame_globals(int frame, std::vector<Vec3>& positions, std::vector<Quat>& rotations) const;
  // Root-relative global joint positions of database frame `frame`.
  std::vector<Vec3> frame_pose(int frame) const;

  const FeatureSearch& search_;
  const Database& db_;
  float halflife_;
};

// Applies the commands of a learned character's script (tags of its model) and measures its
// gameplay: the tally (no frames: a learned character plays none).
class LearnedGameplayRecorder : public GameplayTally {
 public:
  // For a character of `model`; `dt` the run's time step.
  LearnedGameplayRecorder(const Model& model, float dt);
  // Applies `command` to `character`; throws InputError naming `where` for an unknown state or
  // tag, or an action of no action tag of the model.
  void apply(LearnedCharacter& character, const GameplayCommand& command, const std::string& where);
  // Measures the update just made at `time` with `stick` (its length); the frame and transition
  // counts before it are a database character's (GameplayRecorder::record) and not used.
  void record(const LearnedCharacter& character, float stick, float time, int before, int transitions_before,
              const std::vector<Vec3>& previous_global);

 private:
  const Model& model_;
};

}  // namespace lmm::pipeline
