// Database motion matching for one character, composed of the stages of stages.hpp: gamepad
// Steering (trajectory source), QueryJob over the playing frame's features, SearchMatchJob
// (accelerated exact search), DatabasePlayback (any dt, inertialized transitions), root motion
// and an optional FootLocker.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/character/character_base.hpp"
#include "lmm/character/gameplay_control.hpp"
#include "lmm/eval/search.hpp"
#include "lmm/motion/database_playback.hpp"
#include "lmm/motion/ik.hpp"
#include "lmm/motion/stages.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// Tunables of a database-driven character (the shared ones in SteeringSettings).
struct CharacterSettings : SteeringSettings, FootLockSettings {
  SearchParams search;
  IdleSettings idle;
};

// One character driven by database motion matching. Not thread-safe itself; distinct
// characters may update concurrently over one shared Database and FeatureSearch. Its tag
// constraint (GameplayCharacter::set_constraint; CharacterSettings::search.constraint at init) is
// SearchParams::constraint: whenever the frames about to be played leave it the character
// transitions at once; when no frame is allowed it keeps playing (stats().unsatisfied_searches
// counts it, constraint_held() tells) and tries again at its next regular search.
class DatabaseCharacter final : public GameplayCharacter {
 public:
  // Allocates every buffer and starts at the first frame of clip 0, at `position` facing
  // `heading` radians about +Y, holding `db` (shared) for its whole life; `search` (built over
  // `db`) must outlive the character. False with a message for a null, empty or mismatched
  // database. Characters may be moved (e.g. by std::vector growth) after init.
  bool init(std::shared_ptr<const Database> db, const FeatureSearch& search, const CharacterSettings& settings,
            Vec3 position, float heading, std::string& error);
  // Advances by dt seconds (no allocation).
  void update(const GamepadInput& input, float dt) override;
  // Back to the first frame of clip 0 at `position` facing `heading`, as after init; no allocation.
  void reset(Vec3 position, float heading) override;
  // Turns foot locking on or off and sets its distances from the next update (turning it off
  // releases every lock at once). No allocation.
  void set_foot_lock(const FootLockSettings& lock) { change_foot_lock(lock, settings_, feet_); }
  // Largest distance (m) in the last update between a locked ankle and its IK target
  // (FootLocker::largest_ik_error); 0 without foot locks.
  float foot_ik_error() const { return feet_.largest_ik_error(); }

  // Tags of the frame being played (0 when the database has none).
  TagMask current_tags() const { return db_->annotations().tags(playback_.frame()); }
  // Whether the constraint allows the frame being played.
  bool constraint_held() const { return gameplay_.game_constraint().allows(current_tags()); }

  // Plays database frames first..last (one clip) as a one-shot action: an inertialized
  // transition into `first` now, then the frames in order without searching (steering resumes
  // when the action ends), a kActionEndEvent event in the update that reaches `last`, and
  // motion matching under the constraint from the next update. An action already playing ends
  // (the next update reports its kActionEndEvent too). False, changing nothing, when the frames
  // are not in one clip. No allocation.
  bool play_action(int first, int last, const ActionSettings& settings = {});
  // play_action(first, last, settings), false with a message saying why.
  bool play_action(int first, int last, const ActionSettings& settings, std::string& error);
  // play_action over the run of frames (consecutive, in one clip) holding every tag of `tags`
  // (not 0) whose first frame's pose is closest to the pose played; false when no frame has
  // them. Scans the database once; no allocation.
  bool play_action(TagMask tags, const ActionSettings& settings = {});
  // play_action(tags, settings), false with a message naming the tags no frame holds.
  bool play_action(TagMask tags, const ActionSettings& settings, std::string& error);
  // Ends the playing action (its kActionEndEvent is reported by the next update, which
  // searches); no effect without one.
  void cancel_action();
  // Whether an action is playing.
  bool action_playing() const { return action_.active; }
  // Seconds until the playing action reaches its last frame (its run's length at the database's
  // rate from where it plays; 0 without an action).
  float action_seconds_left() const {
    return action_.active ? float(std::max(0, action_.last - playback_.frame())) / db_->fps() : 0.0f;
  }

  // The event markers of the frames the last update played (in the clip played, also during a
  // transition), in order, each once: writes up to `capacity` to `out` and returns how many
  // there were (more than `capacity`: the rest are lost). No allocation.
  // Each action that ended in that update (or was cancelled or replaced before it) adds a
  // kActionEndEvent after them.
  int events(CharacterEvent* out, int capacity) const;

  // Database frame being played.
  int current_frame() const { return playback_.frame(); }
  // The frame the last transition (search or action) jumped to (-1 before the first).
  int last_entry_frame() const { return last_entry_; }
  // The trajectory the played pose's features describe, in world space from the output root: one
  // position and one direction per trajectory offset of the schema (what a search matches a query
  // against). `positions` and `directions` hold that many entries. No allocation.
  void played_trajectory(Vec3* positions, Vec3* directions) const;
  // Whether contact label `k` (of the database's contact joints) is set in the frame played.
  bool in_contact(int k) const { return db_->contacts(playback_.frame())[k] != 0; }

 private:
  const std::vector<int>& parents() const override { return db_->skeleton().parents; }
  void release_world_state() override { feet_.release_all(); }
  void start(Vec3 position, float heading);
  void search_and_transition(bool must_leave);
  // Enters or leaves idle from the desired speed (a change searches in this update).
  void update_idle();
  // The constraint the playing frames are held to: the search's, or the game's alone while idle
  // finds no idle frame.
  TagConstraint active_constraint() const {
    return idle_unmet_ ? gameplay_.game_search_constraint() : settings_.search.constraint;
  }
  // The search's constraint and transition cost from the game's constraint and idle.
  void apply_constraint();
  // apply_constraint, and the next update searches under it.
  void constraint_taken() override;
  // Searches when due (the stick, the clip end, the constraint or a finished action asks for it).
  void match_if_due(float dt);
  // Ends the action: its end event at `time` seconds into this update (`now`) or at the start of
  // the next; the next update searches.
  void end_action(bool now, float time);
  // Squared distance of the pose features (no trajectory group) of database frames a and b.
  float pose_distance(int a, int b) const;

  // The one-shot action playing, if any.
  struct Action {
    bool active = false;
    int last = 0;
    ActionSettings settings;
  };

  std::shared_ptr<const Database> db_;
  const FeatureSearch* search_ = nullptr;
  CharacterSettings settings_;
  DatabasePlayback playback_;
  bool end_zone_searched_ = false;        // searched since playback entered the clip's end zone
  bool constraint_changed_ = false;       // set_constraint since the last update
  bool idle_unmet_ = false;   // idle, but its last search found no idle frame (the root steers)
  bool constraint_unmet_ = false;         // the last search found no frame the constraint allows
  Action action_;
  ActionEnd action_end_;
  bool leave_pending_ = false;       // an action ended: the next update searches and leaves its frames
  int last_entry_ = -1;  // the frame the last transition jumped to
  std::vector<Quat> animated_rotations_;  // output rotations before the foot-lock IK

  std::vector<float> query_;
  SearchResult result_;
  SearchScratch search_scratch_;

  FootLocker feet_;
};

}  // namespace lmm
