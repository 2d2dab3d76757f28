// The learned pose source (Holden et al. 2020, the stepper and decompressor; Kleanthous & Martini
// 2023 Sec. 4.2, 7.1): a state (latent ++ normalised features) advanced by the stepper every model
// frame, interpolated between frames, decoded into a pose, and moved to newly projected states by
// latent blending or inertialization. Used by LearnedCharacter; usable on its own (stages.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/motion/inertializer.hpp"
#include "lmm/motion/pose_buffers.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// How a learned pose source moves from the playing state to a newly projected one.
enum class LearnedTransition {
  LatentBlend,  // blend the two states before decoding (Kleanthous & Martini 2023 Sec. 7.1, Eq. 48-50)
  Inertialize,  // decode the new state and decay the pose offsets (as the database character)
};

// Plays a learned model's states; see the file comment. Not thread-safe itself; one per character.
class LearnedPlayback {
 public:
  // Holds `model` (not null, shared), makes its evaluator and sizes every buffer (allocates).
  // False with a message when the evaluator cannot use `kernels`.
  bool init(std::shared_ptr<const Model> model, LearnedTransition transition, float blend_time, KernelPath kernels,
            std::string& error);
  // Plays `state` from now on with no transition (offsets cleared) and writes the positions and
  // rotations of joints 1.. of `out`. Non-finite network outputs and clamps count in `stats`.
  void start(const float* state, PoseBuffers& out, CharacterStats& stats);
  // Moves to the projected `state` by the configured transition, starting from the output `out`.
  void transition(const float* state, const PoseBuffers& out, CharacterStats& stats);
  // Makes the next transition an inertialization whatever the configured one (a jump a latent
  // blend would pass through poses of neither state for, e.g. into a one-shot action). No allocation.
  void inertialize_next() { inertialize_next_ = true; }
  // transition(), except that a latent blend leaves the new prediction's first step to the
  // caller: returns the row to step (state_size floats, valid until the step is taken), whose
  // stepped row the caller gives to finish_step(0, ...) before any other call on this playback;
  // or nullptr when the transition is complete (inertialization steps itself).
  const float* transition_stepped_later(const float* state, const PoseBuffers& out, CharacterStats& stats);
  // Advances dt seconds (sub-frame steps interpolate the stepper's states, Kleanthous & Martini
  // 2023 Eq. 12), decodes the shown state and writes joints 1.. of `out` (through the
  // inertializer when transitions inertialize, with `halflife`). No allocation.
  void advance(float dt, float halflife, PoseBuffers& out, CharacterStats& stats);
  // Clamps `state` (state_size floats) to 32 std of the training states (counted in `stats`).
  void keep_in_range(float* state, CharacterStats& stats) const;

  // advance() in parts, so a crowd can evaluate many characters' networks as batches with the
  // same results: begin_advance, then per model frame and stepping track t the row from
  // prepare_step(t) stepped by the caller and given to finish_step, then the state from
  // compose_shown() decoded by the caller and given to finish_advance.
  // Advances the sub-frame phase by dt seconds; the number of model frames to step.
  int begin_advance(float dt);
  // Tracks stepped per model frame this update (1, or 2 while latent blending).
  int stepping_tracks() const { return stepping_tracks_; }
  // Moves track t's next state to now; returns it (state_size floats), the row to step.
  const float* prepare_step(int t);
  // Takes track t's stepped row `stepped` (state_size floats, e.g. a batch's row: kept in range
  // in place; ok: the network ran) as its next state; a non-finite row holds the last state.
  void finish_step(int t, bool ok, float* stepped, CharacterStats& stats);
  // The state to decode this update (latent ++ normalised features).
  const float* compose_shown();
  // Takes the `decoded` pose vector (pose_layout().size() floats; ok: the network ran) and writes
  // joints 1.. of `out` as advance().
  void finish_advance(const float* decoded, bool ok, float dt, float halflife, PoseBuffers& out, CharacterStats& stats);

  // Root velocity and angular velocity of the decoded pose, character space, with the
  // transition's decaying offsets.
  Vec3 local_root_velocity() const;
  Vec3 local_root_angular() const;
  // The state (latent ++ normalised features ++ tags) decoded last.
  const std::vector<float>& state() const { return shown_; }
  // The playing prediction's state at its last model frame (what a transition moves to; not the
  // mix a latent blend decodes): its tags are the tags played.
  const float* playing_state() const { return current_.now.data(); }
  // The playing prediction's state one model frame later (where the next update heads).
  const float* upcoming_state() const { return current_.next.data(); }
  // Whether the decoder's contact probability `k` (of the model's contact joints) is over 0.5.
  bool in_contact(int k) const { return contacts_[size_t(k)] > 0.5f; }
  // The decoder experts routed for the state decoded last (ModelEvaluator::route_row): top_k
  // indices and weights, best first; returns top_k, 0 for a decoder without experts.
  int decoder_experts(int32_t* experts, float* weights) {
    return evaluator_.route_row(model_->decoder(), shown_.data(), experts, weights);
  }
  // The evaluator of this playback (its scratch may serve the projector too).
  ModelEvaluator& evaluator() { return evaluator_; }

 private:
  // A stepper prediction sampled between two consecutive frames.
  struct Track {
    std::vector<float> now, next;
  };
  Track& stepping_track(int t) { return t == 0 ? current_ : outgoing_; }
  void step_track(Track& track, CharacterStats& stats);
  void step_from_now(Track& track, CharacterStats& stats);
  void take_step(Track& track, bool ok, float* stepped, CharacterStats& stats);
  void reset_track(Track& track, const float* state, CharacterStats& stats);
  void sample_track(const Track& track, float* out) const;
  const float* start_blend(const float* projected);
  void begin_inertialization(const float* projected, const PoseBuffers& out, CharacterStats& stats);
  void decode_source(const float* state, PoseBuffers& pose, CharacterStats& stats);
  void take_decoded(const float* decoded, bool ok, PoseBuffers& pose, CharacterStats& stats);

  std::shared_ptr<const Model> model_;
  ModelEvaluator evaluator_;
  Inertializer inertializer_;
  LearnedTransition transition_ = LearnedTransition::LatentBlend;
  bool inertialize_next_ = false;  // inertialize_next() was called since the last transition
  // With latent blending, a one-off inertialization's offsets apply for this many halflives (a
  // critically damped spring then keeps about 0.002% of the jump).
  static constexpr float kOneOffInertializationHalflives = 10.0f;
  static constexpr float kNoInertialization = 1e30f;
  float since_inertialization_ = kNoInertialization;  // s since the last inertialization started
  float blend_time_ = 0.2f;
  int state_size_ = 0;

  Track current_, outgoing_;  // the playing prediction and, while blending, the one left
  double phase_ = 0.0;        // fraction of a model frame between now and next
  float blend_ = 1.0f;        // 0..1 progress of the latent blend (1 = not blending)
  // dt of the last advance (0: none since start, the shown pose has no joint velocity): the
  // shown joints' velocities are those from previous_source_ to source_ over it.
  float shown_dt_ = 0.0f;
  int stepping_tracks_ = 1;  // tracks the model frames of this update step
  std::vector<float> shown_, sample_state_;
  std::vector<float> decoded_;            // decoder output of single (not crowd) updates
  Vec3 root_velocity_, root_angular_;     // root motion of the last good decoded pose, character space
  PoseBuffers source_, previous_source_;  // decoded pose now and one update earlier
  std::vector<float> contacts_;           // decoder contact probabilities
};

}  // namespace lmm
