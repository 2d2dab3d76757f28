// Learned motion matching for one character (Holden et al. 2020, the learned motion matching
// loop; Kleanthous & Martini 2023 Sec. 4.2, 6.3.1, 7.1), composed of the stages of stages.hpp:
// gamepad Steering (trajectory source), QueryJob over the shown state's features,
// ProjectMatchJob (the projector in place of the search) and LearnedPlayback (stepper + decoder).
// Needs only a model bundle (*.lmmw), no database.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lmm/asset/model.hpp"
#include "lmm/character/character_base.hpp"
#include "lmm/character/gameplay_control.hpp"
#include "lmm/motion/database_playback.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/motion/ik.hpp"
#include "lmm/motion/learned_playback.hpp"
#include "lmm/motion/stages.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// Tunables of a learned character (the shared ones in SteeringSettings).
struct LearnedSettings : SteeringSettings, FootLockSettings {
  LearnedTransition transition = LearnedTransition::LatentBlend;
  float blend_time = 0.2f;  // s of latent blending per transition
  // s a stepper prediction may run before the projector replaces it unconditionally: Kleanthous & Martini 2023
  // Sec. 6.3.1 limits predictions to 120 frames at 60 Hz.
  float max_prediction = 2.0f;
  float transition_cost = 0.0f;  // added to the projected state's cost before it is compared
  KernelPath kernels = KernelPath::Auto;
  IdleSettings idle;  // idle needs a bundle trained with its tags ([tags] in the preset)
};

// One character driven by a learned model bundle. Not thread-safe itself; distinct characters
// may update concurrently over one shared Model (each owns its evaluator scratch). Its tag
// constraint (GameplayCharacter::set_constraint; bits over model.tags()) is the projector's
// constraint input: the next update projects under it, and whenever the state played is about to
// leave it (its next model frame does) the character projects at once. A projected state whose
// tags break the constraint is not taken while the one playing holds it
// (stats().unsatisfied_searches counts it, constraint_held() tells).
class LearnedCharacter final : public GameplayCharacter {
 public:
  // Allocates every buffer and starts from the projection of a standing query at `position`
  // facing `heading` radians about +Y, holding `model` (shared) for its whole life. False with a
  // message when the model is null, the schema does not match settings.expected_schema or has
  // no trajectory groups.
  bool init(std::shared_ptr<const Model> model, const LearnedSettings& settings, Vec3 position, float heading,
            std::string& error);
  // Advances by dt seconds (any dt: sub-frame steps interpolate the stepper's states, Kleanthous & Martini 2023
  // Eq. 12). No allocation.
  void update(const GamepadInput& input, float dt) override;
  // Back to the projection of a standing query at `position` facing `heading`, as after init;
  // no allocation.
  void reset(Vec3 position, float heading) override;
  // Turns foot locking on or off and sets its distances from the next update (turning it off
  // releases every lock at once). No allocation.
  void set_foot_lock(const FootLockSettings& lock) { change_foot_lock(lock, settings_, feet_); }
  // Largest distance (m) in the last update between a locked ankle and its IK target
  // (FootLocker::largest_ik_error); 0 without foot locks.
  float foot_ik_error() const { return feet_.largest_ik_error(); }

  // Tags of the state played (Model::state_tags of the playing prediction, the one a transition
  // moves to; 0 for a bundle without tags).
  TagMask current_tags() const { return model_->state_tags(playback_.playing_state()); }
  // Whether the game's constraint allows the state played.
  bool constraint_held() const { return gameplay_.game_constraint().allows(current_tags()); }

  // Plays a one-shot action: the next update projects under the constraint "every tag of `tags`",
  // starting the run of its action tag (at once, whatever its cost), then the stepper plays on without steering projections until
  // the run of the action tag ends: the seconds left in the run of the state entered have passed,
  // or the state played says it ended (Model::seconds_left under half a model frame), or the tag is
  // lost. That update reports a kActionEndEvent and the next projects under the game's constraint.
  // An action already playing ends (the next update reports its kActionEndEvent too).
  // False, changing nothing, when `tags` holds no action tag of the model (Model::action_tags) or
  // a bit beyond its tags. No allocation.
  bool play_action(TagMask tags, const ActionSettings& settings = {});
  // play_action(tags, settings), false with a message naming the model's action tags.
  bool play_action(TagMask tags, const ActionSettings& settings, std::string& error);
  // Ends the playing action (its kActionEndEvent is reported by the next update, which
  // projects); no effect without one.
  void cancel_action();
  // Whether an action is playing.
  bool action_playing() const { return action_.active; }
  // Seconds until the playing action ends by the state it entered (its seconds left in the run
  // of the action tag, less the time since): known from the update after play_action, which
  // enters it; 0 before that and without an action. It may end earlier (the state played says so).
  float action_seconds_left() const { return action_.active && action_.entered ? std::max(0.0f, action_.seconds_left) : 0.0f; }
  // The events of the last update, in order, each once: foot plants (a contact the decoder
  // turned on), tags entered and left by the state played (Model::event_names indexes them;
  // CharacterEvent::frame is -1) and a kActionEndEvent per action that ended in it (or was
  // cancelled or replaced before it), last. Writes up to
  // `capacity` to `out` and returns how many there were. No allocation.
  int events(CharacterEvent* out, int capacity) const;

  // Whether the decoder's contact probability `k` (of the model's contact joints) is over 0.5.
  bool in_contact(int k) const { return playback_.in_contact(k); }
  // The network state (latent ++ normalised features ++ tags) being decoded this frame.
  const std::vector<float>& network_state() const { return playback_.state(); }
  // The trajectory the played pose's features describe, in world space from the output root: one
  // position and one direction per trajectory offset of the schema (what a search matches a query
  // against). `positions` and `directions` hold that many entries. No allocation.
  void played_trajectory(Vec3* positions, Vec3* directions) const;
  // The decoder experts routed for the pose shown: top_k indices and weights (kMaxTopK room),
  // best first; returns top_k, 0 for a decoder without experts. No allocation.
  int decoder_experts(int32_t* experts, float* weights) { return playback_.decoder_experts(experts, weights); }

 private:
  // LearnedCrowd runs update() in these parts, its networks batched across characters.
  friend class LearnedCrowd;

  const std::vector<int>& parents() const override { return model_->skeleton().parents; }
  void release_world_state() override { feet_.release_all(); }
  bool start(Vec3 position, float heading);
  // Parts of update(): begin_frame (steering; returns the clamped dt), then when
  // projection_due(): build_query, the projector on query_ into projected_ (or a crowd's batch
  // row), take_projection (whether both succeeded, and that state: kept in range in place;
  // true when the character moves to it, by playback_.transition or, in a crowd,
  // transition_stepped_later); then the playback advance, then end_frame.
  float begin_frame(const GamepadInput& input, float raw_dt);
  bool projection_due() const;
  bool build_query();
  bool build_query(const float* pose_features);
  bool take_projection(bool projected, float* state);
  // Whether the projected `state` replaces the playing one (the constraint, then Kleanthous &
  // Martini 2023 Sec. 6.3.1's cost rule); counts constraint searches.
  bool projection_wins(const float* state, bool forced);
  // Whether the state played, or its next model frame, breaks the active constraint.
  bool leaving_constraint() const {
    return !constraint_.allows(current_tags()) || !constraint_.allows(model_->state_tags(playback_.upcoming_state()));
  }
  // The active constraint (the action's, else GameplayControl::combined) into constraint_ and the
  // projector's constraint code; the next update projects under it.
  void constraint_taken() override;
  // Enters or leaves idle from the desired speed, ends an interrupted action.
  void update_gameplay();
  // After the playback advanced: ends the action whose run is over, records this update's events.
  void close_gameplay(float dt);
  // Ends the action: its end event at `time` s into this update (`now`) or in the next update.
  void end_action(bool now, float time);
  // Whether the playing action's tag run is over, or its tags are lost from `tags` (current_tags()).
  bool action_over(TagMask tags) const;
  // Appends an event to this update's list (dropped past its capacity).
  void add_event(int name, float time);
  // end_frame in three parts (a crowd runs the forward kinematics of many characters at once):
  // move_root, update_globals, close_frame.
  void end_frame(float dt);
  void move_root(float dt);
  void close_frame();
  float query_cost(const float* state) const;

  std::shared_ptr<const Model> model_;
  LearnedSettings settings_;
  LearnedPlayback playback_;
  float prediction_age_ = 0.0f;  // s since the playing prediction came from the projector
  TagConstraint constraint_;         // the active constraint: the action's, else gameplay_.combined()
  bool constraint_changed_ = false;  // the active constraint changed since the last projection
  bool constraint_unmet_ = false;    // the last projection broke the active constraint
  // The one-shot action playing, if any.
  struct Action {
    bool active = false;
    bool entered = false;  // its projection was taken
    TagMask tags = 0;
    int end_tag = -1;      // the action tag whose run's end ends it
    ActionSettings settings;
    float seconds_left = 0.0f;  // once entered: the entered state's seconds left in the run, less the time since
  };
  Action action_;
  ActionEnd action_end_;
  bool leave_pending_ = false;       // an action ended: the next update projects and leaves its states
  std::vector<CharacterEvent> events_;    // the last update's (room for every foot plant and tag change)
  int event_count_ = 0;
  TagMask tags_before_ = 0;               // current_tags() before this update
  std::vector<uint8_t> contacts_before_;  // in_contact() before this update (after close_gameplay: of this update)
  FootLocker feet_;
  float frame_dt_ = 0.0f;                 // dt of this update (for the foot locks in close_frame)
  std::vector<float> query_;         // projector input: feature query ++ constraint code
  std::vector<float> projected_;
};

}  // namespace lmm
