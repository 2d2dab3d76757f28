// The gameplay control a database and a learned character share, whatever plays their poses:
// the game's tag constraint, game states (a controller config's [states]) and idle (a released
// stick requires standing frames); plus the settings and event names of one-shot actions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lmm/asset/frame_annotations.hpp"
#include "lmm/character/character_base.hpp"
#include "lmm/motion/controller.hpp"
#include "lmm/motion/database_playback.hpp"

namespace lmm {

// How a released stick settles a character into idle frames (or states): while the desired speed
// is below release_speed (and no action plays) searches also require `require` and exclude
// `exclude` (comma-separated tag names), so it stands still instead of shuffling or turning on
// the spot; while idle the simulated root is held on the character's (no pull towards a root
// still coasting to a stop). A stick push lifts that in the same update. Idle is off when the
// database (or model) has none of the `require` tags (and when they contradict the game's
// constraint); when no frame holding both the game's constraint and idle's can be played, the
// game's alone is, and the root steers to a stop as it does without idle.
struct IdleSettings {
  std::string require = "standing";  // lmm-import's derived tag: root, feet (and in bandai.toml every joint) still
  std::string exclude;               // tags idle frames must not have (those the database lacks are ignored)
  float release_speed = 0.05f;       // m/s of desired velocity under which the stick counts as released
  float transition_cost = 0.0f;      // added to the search's transition cost while idle
};

// How a one-shot action moves the character's root.
enum class ActionRoot {
  Animated,  // with the action's own root motion
  InPlace,   // the root stays where the action started
};

// How play_action plays an action.
struct ActionSettings {
  ActionRoot root = ActionRoot::Animated;
  bool interruptible = false;  // a stick push (desired speed above kActionInterruptSpeed) ends it early
};

constexpr float kActionInterruptSpeed = 0.2f;  // m/s of desired velocity that interrupts an interruptible action
constexpr int kActionEndEvent = -1;            // CharacterEvent::name of the event that ends an action

// The end events of one-shot actions that a character owes, one per ended action: reported by
// the update that ended the action, or by the next one when the game cancelled or replaced it
// between updates.
class ActionEnd {
 public:
  // At an update's start: the actions ended since the last update end at this update's start.
  void begin_update() {
    carried_ = pending_;
    pending_ = 0;
    now_ = false;
  }
  // An action ended `time` s into this update (`now`), or between updates (the next reports it).
  void mark(bool now, float time) {
    if (!now) {
      ++pending_;
      return;
    }
    now_ = true;
    time_ = time;
  }
  // After the `count` events of `out` (room for `capacity`), an end event (at database frame
  // `frame`) per action this update ended: those ended before it at time 0, then the one that
  // ended during it; returns the new count (past `capacity`: not written).
  int report(CharacterEvent* out, int count, int capacity, int frame) const {
    for (int e = 0; e < carried_ + int(now_); ++e, ++count) {
      if (count < capacity) out[count] = CharacterEvent{kActionEndEvent, frame, e < carried_ ? 0.0f : time_};
    }
    return count;
  }

 private:
  int carried_ = 0, pending_ = 0;  // actions ended before this update, and since it
  bool now_ = false;               // an action ended during this update ...
  float time_ = 0.0f;              // ... this many seconds into it
};

// The game's constraint, states and idle of one character over a set of tag names; what the
// character's searches (or projections) honour is combined(). No allocation but in set_states.
class GameplayControl {
 public:
  // Starts with `constraint` (and `transition_cost`), no states, not idle; idle's tags resolved
  // over `tags` (idle off when it requires none of them); `kept_out` (the asset's action tags)
  // excluded whenever the constraint searched under requires no tag.
  void init(const TagNames& tags, TagMask kept_out, const IdleSettings& idle, const TagConstraint& constraint,
            float transition_cost);
  // Turns idle off (e.g. no frame has idle's tags).
  void disable_idle() { idle_constraint_ = TagConstraint{}; }
  // Back to not idle, keeping the constraint and state.
  void reset_idle() { idle_ = false; }

  // The game's constraint from now on.
  void set_constraint(const TagConstraint& constraint) { game_ = constraint; }
  // Defines the game states set_state switches among (tag names resolved over the init's tags),
  // replacing earlier ones; false with a message naming the state and its bad name, repeat or
  // unknown tag (nothing changes). The state set last stays set, with its new definition, when
  // a state of its name remains; otherwise there is no state and no game constraint, the
  // init's transition cost and idle allowed (as before the first set_state). Allocates.
  bool set_states(const std::vector<StateConfig>& states, std::string& error);
  // Switches to state `name`: its constraint, transition cost and whether a released stick
  // idles; false, changing nothing, when no state has that name.
  bool set_state(std::string_view name);
  // The name of the state set last ("" before any).
  std::string_view state() const { return state_ < 0 ? std::string_view() : states_[size_t(state_)].name; }
  // The states' names, comma-separated ("" without states). Allocates (for messages).
  std::string state_names() const;
  // Whether a state was set.
  bool has_state() const { return state_ >= 0; }

  // Enters idle when idle is on, the state allows it, no action plays and `desired_speed` (m/s) is
  // under the release speed; leaves it otherwise. Whether that changed idle.
  bool update_idle(float desired_speed, bool action_playing);
  // Whether the character idles.
  bool idle() const { return idle_; }
  // Whether idle can ever start (some idle tag is known).
  bool idle_enabled() const { return idle_constraint_.require_all != 0; }

  // The game's constraint.
  const TagConstraint& game_constraint() const { return game_; }
  // The game's constraint as searches take it: with the kept-out (action) tags excluded when it
  // requires no tag.
  TagConstraint game_search_constraint() const { return game_.keeping_out(kept_out_); }
  // Idle's constraint (require_all 0: idle off).
  const TagConstraint& idle_constraint() const { return idle_constraint_; }
  // What searches honour: the game's constraint, with idle's added while idle (unless the two
  // contradict, then the game's alone), keeping out the action tags when it requires no tag.
  TagConstraint combined() const;
  // The game's (or state's) transition cost.
  float base_transition_cost() const { return transition_cost_; }
  // The transition cost searches add: the base one, plus idle's while idle.
  float transition_cost() const { return transition_cost_ + (idle_ ? idle_settings_.transition_cost : 0.0f); }

 private:
  // A StateConfig with its tag names resolved.
  struct State {
    std::string name;
    TagConstraint constraint;
    float transition_cost = 0.0f;
    bool idle = true;
  };

  const TagNames* tags_ = nullptr;
  TagMask kept_out_ = 0;
  IdleSettings idle_settings_;
  TagConstraint game_;
  TagConstraint idle_constraint_;  // IdleSettings resolved (require_all 0: idle off)
  float transition_cost_ = 0.0f;
  bool idle_ = false;
  bool idle_allowed_ = true;  // the state lets a released stick idle
  // No state: no game constraint, the init's transition cost, idle allowed.
  void leave_state();

  std::vector<State> states_;
  int state_ = -1;  // index into states_ (-1: none set)
  float default_transition_cost_ = 0.0f;  // the init's
};

// A gamepad-steered character under gameplay control (the database and the learned one): the
// game's constraint, states and idle of a GameplayControl. How its searches (or projections)
// honour them is the derived class's (constraint_taken, and its class comment).
class GameplayCharacter : public CharacterBase {
 public:
  // The tag constraint honoured from the next update on (reset keeps it); that update searches
  // (or projects) under it. No allocation.
  void set_constraint(const TagConstraint& constraint) {
    gameplay_.set_constraint(constraint);
    constraint_taken();
  }
  // Defines the game states set_state switches among (a controller config's [states], see
  // parse_controller_config), replacing earlier ones (GameplayControl::set_states: the current
  // state stays when its name remains, else the character has no state and no constraint); the
  // next update searches under the result. False with a message naming the state and its bad
  // name or the tag the character's tags lack (nothing changes). Allocates: call at load time.
  bool set_states(const std::vector<StateConfig>& states, std::string& error) {
    if (!gameplay_.set_states(states, error)) return false;
    constraint_taken();
    return true;
  }
  // Switches to the state named `name`: its constraint (as set_constraint), its transition cost
  // and whether a released stick idles. False, changing nothing, when no state has that name.
  // No allocation.
  bool set_state(std::string_view name) {
    if (!gameplay_.set_state(name)) return false;
    constraint_taken();
    return true;
  }
  // set_state, false with a message naming the state and listing those set_states defined.
  bool set_state(std::string_view name, std::string& error) {
    if (set_state(name)) return true;
    const std::string names = gameplay_.state_names();
    error = "no state named '" + std::string(name) + "' (" +
            (names.empty() ? std::string("set_states defines none") : "the states: " + names) + ")";
    return false;
  }
  // The name of the state set last ("" before any).
  std::string_view state() const { return gameplay_.state(); }
  // The tag constraint the game set (idle adds its own while the stick rests).
  const TagConstraint& constraint() const { return gameplay_.game_constraint(); }
  // Whether the character is idle (stick released, idle tags required).
  bool idle() const { return gameplay_.idle(); }

 protected:
  // Takes the game's constraint (or state) just set: the next update searches under it.
  virtual void constraint_taken() = 0;

  GameplayControl gameplay_;
};

}  // namespace lmm
