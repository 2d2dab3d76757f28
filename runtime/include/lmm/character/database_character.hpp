// Database motion matching for one character, composed of the stages of stages.hpp: gamepad
// Steering (trajectory source), QueryJob over the playing frame's features, SearchMatchJob
// (accelerated exact search), DatabasePlayback (any dt, inertialized transitions), root motion
// and an optional FootLocker.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/character/character_base.hpp"
#include "lmm/eval/search.hpp"
#include "lmm/motion/database_playback.hpp"
#include "lmm/motion/ik.hpp"
#include "lmm/motion/stages.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// How a released stick settles a database character into idle frames: while the desired speed
// is below release_speed (and no action plays) searches also require `require` and exclude
// `exclude` (comma-separated tag names), so it stands still instead of shuffling or turning on
// the spot; while idle the simulated root is held on the character's (no pull towards a root
// still coasting to a stop). A stick push lifts that in the same update. Idle is off when the database has none
// of the `require` tags (and when they contradict the game's constraint); when no frame holds
// both the game's constraint and idle's over its look-ahead, the game's alone is searched and the
// root steers to a stop as it does without idle.
struct IdleSettings {
  std::string require = "standing";  // lmm-import's derived tag: root, feet (and in bandai.toml every joint) still
  std::string exclude;               // tags idle frames must not have (those the database lacks are ignored)
  float release_speed = 0.05f;       // m/s of desired velocity under which the stick counts as released
  float transition_cost = 0.0f;      // added to the search's transition cost while idle
};

// Tunables of a database-driven character (the shared ones in SteeringSettings).
struct CharacterSettings : SteeringSettings {
  SearchParams search;
  IdleSettings idle;
  bool foot_lock = false;              // lock contact joints with two-joint IK
  float foot_unlock_distance = 0.25f;  // m: a lock stretched further than this releases
  float foot_blend_halflife = 0.05f;   // s: IK offset fade-out after a release
};

// How a one-shot action moves the character's root.
enum class ActionRoot {
  Animated,  // with the action's own root motion
  InPlace,   // the root stays where the action started
};

// How DatabaseCharacter::play_action plays an action.
struct ActionSettings {
  ActionRoot root = ActionRoot::Animated;
  bool interruptible = false;  // a stick push (desired speed above kActionInterruptSpeed) ends it early
};

constexpr float kActionInterruptSpeed = 0.2f;  // m/s of desired velocity that interrupts an interruptible action
constexpr int kActionEndEvent = -1;            // CharacterEvent::name of the event that ends an action

// One character driven by database motion matching. Not thread-safe itself; distinct
// characters may update concurrently over one shared Database and FeatureSearch.
class DatabaseCharacter final : public CharacterBase {
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

  // The tag constraint searches honour from the next update on (SearchParams::constraint;
  // CharacterSettings::search.constraint at init; reset keeps it). That update searches, and
  // whenever the frames about to be played leave the constraint the character transitions at
  // once. When no frame is allowed it keeps playing (stats().unsatisfied_searches counts it,
  // constraint_held() tells) and tries again at its next regular search. No allocation.
  void set_constraint(const TagConstraint& constraint);
  // Defines the game states set_state switches among (a controller config's [states], see
  // parse_controller_config), replacing earlier ones; false with a message naming the state and
  // the tag the database lacks (nothing changes). Allocates: call at load time.
  bool set_states(const std::vector<StateConfig>& states, std::string& error);
  // Switches to the state named `name`: its constraint (as set_constraint), its transition cost
  // and whether a released stick idles. False, changing nothing, when no state has that name.
  // No allocation.
  bool set_state(std::string_view name);
  // The name of the state set last ("" before any).
  std::string_view state() const { return state_ < 0 ? std::string_view() : states_[size_t(state_)].name; }

  // The tag constraint the game set (idle adds its own while the stick rests).
  const TagConstraint& constraint() const { return game_constraint_; }
  // Whether the character is idle (stick released, idle frames required).
  bool idle() const { return idle_; }
  // Tags of the frame being played (0 when the database has none).
  TagMask current_tags() const { return db_->annotations().tags(playback_.frame()); }
  // Whether the constraint allows the frame being played.
  bool constraint_held() const { return game_constraint_.allows(current_tags()); }

  // Plays database frames first..last (one clip) as a one-shot action: an inertialized
  // transition into `first` now, then the frames in order without searching (steering resumes
  // when the action ends), a kActionEndEvent event in the update that reaches `last`, and
  // motion matching under the constraint from the next update. False, changing nothing, when
  // the frames are not in one clip. No allocation.
  bool play_action(int first, int last, const ActionSettings& settings = {});
  // play_action over the run of frames (consecutive, in one clip) holding every tag of `tags`
  // (not 0) whose first frame's pose is closest to the pose played; false when no frame has
  // them. Scans the database once; no allocation.
  bool play_action(TagMask tags, const ActionSettings& settings = {});
  // Ends the playing action (its kActionEndEvent is reported by the next update, which
  // searches); no effect without one.
  void cancel_action();
  // Whether an action is playing.
  bool action_playing() const { return action_.active; }

  // The event markers of the frames the last update played (in the clip played, also during a
  // transition), in order, each once: writes up to `capacity` to `out` and returns how many
  // there were (more than `capacity`: the rest are lost). No allocation.
  // An action that ended in that update adds a kActionEndEvent last.
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
  const TagConstraint& active_constraint() const {
    return idle_unmet_ ? game_constraint_ : settings_.search.constraint;
  }
  // The search's constraint and transition cost from the game's constraint and idle.
  void apply_constraint();
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
  TagConstraint game_constraint_;         // set_constraint's (settings_.search.constraint adds idle's)
  TagConstraint idle_constraint_;         // IdleSettings resolved (require_all 0: idle off)
  float transition_cost_ = 0.0f;          // the settings' transition cost (idle adds its own)
  bool idle_ = false;
  bool idle_unmet_ = false;   // idle, but its last search found no idle frame (the root steers)
  bool idle_allowed_ = true;  // the state lets a released stick idle
  // A StateConfig with its tag names resolved.
  struct State {
    std::string name;
    TagConstraint constraint;
    float transition_cost = 0.0f;
    bool idle = true;
  };
  std::vector<State> states_;
  int state_ = -1;  // index into states_ (-1: none set)
  bool constraint_unmet_ = false;         // the last search found no frame the constraint allows
  Action action_;
  bool action_ended_ = false;        // the last update ended an action (its end event)
  bool action_end_pending_ = false;  // cancelled between updates: the next update reports the end
  bool leave_pending_ = false;       // an action ended: the next update searches and leaves its frames
  float action_end_time_ = 0.0f;
  int last_entry_ = -1;     // seconds into the update of the action's end event
  std::vector<Quat> animated_rotations_;  // output rotations before the foot-lock IK

  std::vector<float> query_;
  SearchResult result_;
  SearchScratch search_scratch_;

  FootLocker feet_;
};

}  // namespace lmm
