#include "lmm/character/learned_character.hpp"

#include <algorithm>
#include <cmath>

namespace lmm {

bool LearnedCharacter::init(std::shared_ptr<const Model> bundle, const LearnedSettings& settings, Vec3 position,
                            float heading, std::string& error) {
  if (bundle == nullptr) {
    error = "no model bundle (null pointer)";
    return false;
  }
  const Model& model = *bundle;
  if (!settings.expected_schema.empty() && settings.expected_schema != model.schema().name) {
    error = "feature schema mismatch: controller expects '" + settings.expected_schema + "', model has '" +
            model.schema().name + "'";
    return false;
  }
  if (model.schema().trajectory_offsets.empty()) {
    error = "feature schema '" + model.schema().name + "' has no trajectory groups to steer with";
    return false;
  }
  if (!playback_.init(bundle, settings.transition, settings.blend_time, settings.kernels, error)) return false;
  model_ = bundle;
  settings_ = settings;
  if (settings.speeds_from_data) model.speeds().apply(settings_.controller);
  projected_.assign(size_t(model.state_size()), 0.0f);
  query_.assign(size_t(model.feature_dims()), 0.0f);
  resize_output(model.skeleton().joint_count());
  if (!start(position, heading)) {
    error = "the projector gives non-finite values for a standing query";
    return false;
  }
  return true;
}

void LearnedCharacter::reset(Vec3 position, float heading) { start(position, heading); }

bool LearnedCharacter::start(Vec3 position, float heading) {
  stats_ = CharacterStats{};
  out_.resize(model_->skeleton().joint_count());
  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)});
  steering_.init(settings_, model_->schema().trajectory_offsets, model_->fps(), position, facing);
  prediction_age_ = 0.0f;
  out_.positions[0] = on_ground(position);
  out_.rotations[0] = facing;
  // Start from the projection of a standing query: mean pose features (zero once normalised),
  // trajectory in place.
  std::fill(query_.begin(), query_.end(), 0.0f);
  const ProjectMatchJob match{&playback_.evaluator(), query_, projected_};
  const bool projected = build_query(query_.data()) && match.run();
  if (!projected) std::fill(projected_.begin(), projected_.end(), 0.0f);
  playback_.start(projected_.data(), out_, stats_);
  update_globals(model_->skeleton().parents);
  begin_root_motion();
  end_root_motion();
  return projected;
}

void LearnedCharacter::update(const GamepadInput& input, float raw_dt) {
  const float dt = begin_frame(input, raw_dt);
  if (projection_due()) {
    const ProjectMatchJob match{&playback_.evaluator(), query_, projected_};
    if (take_projection(build_query() && match.run(), projected_.data())) {
      playback_.transition(projected_.data(), out_, stats_);
    }
  }
  playback_.advance(dt, settings_.inertialization_halflife, out_, stats_);
  end_frame(dt);
}

float LearnedCharacter::begin_frame(const GamepadInput& input, float raw_dt) {
  begin_root_motion();
  const float dt = steering_.begin_update(input, raw_dt, out_.positions[0], stats_);
  prediction_age_ += dt;
  return dt;
}

bool LearnedCharacter::projection_due() const {
  return steering_.search_due() || prediction_age_ >= settings_.max_prediction;
}

void LearnedCharacter::end_frame(float dt) {
  move_root(dt);
  update_globals(model_->skeleton().parents);
  close_frame();
}

void LearnedCharacter::move_root(float dt) {
  steering_.integrate_root(playback_.local_root_velocity(), playback_.local_root_angular(), dt, out_.positions[0],
                           out_.rotations[0], out_.velocities[0], out_.angular[0]);
}

void LearnedCharacter::close_frame() {
  steering_.end_update(out_.positions[0], out_.rotations[0]);
  end_root_motion();
}

bool LearnedCharacter::build_query() { return build_query(playback_.state().data() + model_->latent()); }

bool LearnedCharacter::build_query(const float* pose_features) {
  QueryJob query = query_job_for(*model_);
  query.pose_features = Span<const float>(pose_features, query_.size());
  query.root = RootSample{on_ground(out_.positions[0]), out_.rotations[0]};
  query.trajectory = steering_.trajectory();
  query.query = query_;
  return query.run();
}

float LearnedCharacter::query_cost(const float* state) const {
  const int latent = model_->latent();
  float cost = 0.0f;
  for (size_t i = 0; i < query_.size(); ++i) {
    const float d = state[size_t(latent) + i] - query_[i];
    cost += d * d;
  }
  return cost;
}

bool LearnedCharacter::take_projection(bool projected, float* state) {
  steering_.searched(stats_);
  if (!projected) {
    ++stats_.nonfinite_states;
    return false;
  }
  playback_.keep_in_range(state, stats_);
  const bool forced = prediction_age_ >= settings_.max_prediction;
  // Kleanthous & Martini 2023 Sec. 6.3.1: keep the playing prediction when the projected one is not better.
  if (!forced && query_cost(state) + settings_.transition_cost >= query_cost(playback_.state().data())) {
    return false;
  }
  stats_.forced_projections += forced ? 1 : 0;
  ++stats_.transitions;
  prediction_age_ = 0.0f;
  return true;
}

void LearnedCharacter::played_trajectory(Vec3* positions, Vec3* directions) const {
  trajectory_of_features(model_->schema(), state().data() + model_->latent(), model_->feature_offset(),
                         model_->feature_scale(), positions, directions);
}

}  // namespace lmm
