// Learned motion matching for one character (Holden et al. 2020, the learned motion matching
// loop; Kleanthous & Martini 2023 Sec. 4.2, 6.3.1, 7.1), composed of the stages of stages.hpp:
// gamepad Steering (trajectory source), QueryJob over the shown state's features,
// ProjectMatchJob (the projector in place of the search) and LearnedPlayback (stepper + decoder).
// Needs only a model bundle (*.lmmw), no database.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmm/asset/model.hpp"
#include "lmm/character/character_base.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/motion/learned_playback.hpp"
#include "lmm/motion/stages.hpp"
#include "lmm/motion/steering.hpp"

namespace lmm {

// Tunables of a learned character (the shared ones in SteeringSettings).
struct LearnedSettings : SteeringSettings {
  LearnedTransition transition = LearnedTransition::LatentBlend;
  float blend_time = 0.2f;  // s of latent blending per transition
  // s a stepper prediction may run before the projector replaces it unconditionally: Kleanthous & Martini 2023
  // Sec. 6.3.1 limits predictions to 120 frames at 60 Hz.
  float max_prediction = 2.0f;
  float transition_cost = 0.0f;  // added to the projected state's cost before it is compared
  KernelPath kernels = KernelPath::Auto;
};

// One character driven by a learned model bundle. Not thread-safe itself; distinct characters
// may update concurrently over one shared Model (each owns its evaluator scratch).
class LearnedCharacter final : public CharacterBase {
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

  // Whether the decoder's contact probability `k` (of the model's contact joints) is over 0.5.
  bool in_contact(int k) const { return playback_.in_contact(k); }
  // The state (latent ++ normalised features) being decoded this frame.
  const std::vector<float>& state() const { return playback_.state(); }
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
  std::vector<float> query_, projected_;
};

}  // namespace lmm
