// Learned motion matching for one character (Holden et al. 2020, the learned motion matching loop; Kleanthous & Martini 2023
// Sec. 4.2, 6.3.1, 7.1): the controller and query of database motion matching, with the
// projector in place of the search, the stepper advancing latent + features every frame and the
// decoder producing the pose. Needs only a model bundle (*.lmmw), no database.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmm/model.hpp"
#include "lmm/nn.hpp"
#include "lmm/steering.hpp"

namespace lmm {

// How a learned character moves from the playing state to a newly projected one.
enum class LearnedTransition {
  LatentBlend,   // blend the two states before decoding (Kleanthous & Martini 2023 Sec. 7.1, Eq. 48-50)
  Inertialize,   // decode the new state and decay the pose offsets (as the database character)
};

// Tunables of a learned character (the shared ones in SteeringSettings).
struct LearnedSettings : SteeringSettings {
  LearnedTransition transition = LearnedTransition::LatentBlend;
  float blend_time = 0.2f;       // s of latent blending per transition
  // s a stepper prediction may run before the projector replaces it unconditionally: Kleanthous & Martini 2023
  // Sec. 6.3.1 limits predictions to 120 frames at 60 Hz.
  float max_prediction = 2.0f;
  float transition_cost = 0.0f;  // added to the projected state's cost before it is compared
  KernelPath kernels = KernelPath::Auto;
};

// One character driven by a learned model bundle. Not thread-safe itself; distinct characters
// may update concurrently over one shared Model (each owns its evaluator scratch).
class LearnedCharacter : public CharacterBase {
 public:
  // Allocates every buffer and starts from the projection of a standing query at `position`
  // facing `heading` radians about +Y, holding `model` (shared) for its whole life. False with a
  // message when the model is null, the schema does not match settings.expected_schema or has
  // no trajectory groups.
  bool init(std::shared_ptr<const Model> model, const LearnedSettings& settings, Vec3 position, float heading,
            std::string& error);
  // Advances by dt seconds (any dt: sub-frame steps interpolate the stepper's states, Kleanthous & Martini 2023
  // Eq. 12). No allocation.
  void update(const GamepadInput& input, float dt);

  // Whether the decoder's contact probability `k` (of the model's contact joints) is over 0.5.
  bool in_contact(int k) const;
  // The state (latent ++ normalised features) being decoded this frame.
  const std::vector<float>& state() const { return shown_; }

 private:
  // A stepper prediction sampled between two consecutive frames.
  struct Track {
    std::vector<float> now, next;
  };
  void step_track(Track& track);
  void keep_in_range(std::vector<float>& state);
  void reset_track(Track& track, const float* state);
  void advance_track(Track& track);
  void sample_track(const Track& track, float* out) const;
  void advance(float dt);
  void compose_shown();
  void build_query();
  float query_cost(const float* state) const;
  void project_and_transition();
  void begin_blend(const float* projected);
  void begin_inertialization(const float* projected);
  void decode_source(const float* state, PoseBuffers& pose);
  void update_pose(float dt);

  std::shared_ptr<const Model> model_;
  LearnedSettings settings_;
  Inertializer inertializer_;
  ModelEvaluator evaluator_;
  int joints_ = 0, state_size_ = 0, latent_ = 0;

  Track current_, outgoing_;      // the playing prediction and, while blending, the one left
  double phase_ = 0.0;            // fraction of a model frame between now and next
  float blend_ = 1.0f;            // 0..1 progress of the latent blend (1 = not blending)
  float prediction_age_ = 0.0f;   // s since the playing prediction came from the projector
  std::vector<float> shown_, query_, projected_, sample_state_;
  std::vector<float> pose_, decoded_;  // last good decoded pose vector; decoder scratch

  PoseBuffers source_, previous_source_;  // decoded pose now and one update earlier
  std::vector<float> contacts_;  // decoder contact probabilities
};

}  // namespace lmm
