#include "lmm/learned_character.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/pose_vector.hpp"
#include "lmm/skeleton.hpp"

namespace lmm {
namespace {

// States farther than this many standard deviations (of the training data's states) from
// their mean are clamped back: the networks were never trained there. Latent dimensions are
// heavy-tailed (L1-regularised), so the bound is loose: on bandai-loco/normal with the
// `standard` preset 16 std still clamped 1,687 of 36,000 frames of a random run, 32 none.
constexpr float kStateReach = 32.0f;

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// Smoothstep of t in [0, 1]: blend weights that start and end with zero slope.
float smooth(float t) { return t * t * (3.0f - 2.0f * t); }

void lerp_into(const std::vector<float>& a, const std::vector<float>& b, float t, std::vector<float>& out) {
  for (size_t i = 0; i < out.size(); ++i) out[i] = a[i] + (b[i] - a[i]) * t;
}

// Local velocities of joints 1.. of going from pose `from` to pose `to` in dt, written into `into`.
void velocities_between(const PoseBuffers& from, const PoseBuffers& to, float dt, PoseBuffers& into) {
  for (size_t j = 1; j < into.positions.size(); ++j) {
    into.velocities[j] = (to.positions[j] - from.positions[j]) / dt;
    into.angular[j] = to_scaled_angle_axis(to.rotations[j] * inverse(from.rotations[j])) / dt;
  }
}

}  // namespace

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
  if (!evaluator_.init(bundle, 1, settings.kernels, error)) return false;
  model_ = bundle;
  settings_ = settings;
  stats_ = CharacterStats{};
  joints_ = model.skeleton().joint_count();
  state_size_ = model.state_size();
  latent_ = model.latent();
  for (Track* t : {&current_, &outgoing_}) {
    t->now.assign(size_t(state_size_), 0.0f);
    t->next.assign(size_t(state_size_), 0.0f);
  }
  for (auto* v : {&shown_, &projected_, &sample_state_}) v->assign(size_t(state_size_), 0.0f);
  query_.assign(size_t(model.feature_dims()), 0.0f);
  pose_.assign(size_t(model.pose_layout().size()), 0.0f);
  decoded_ = pose_;
  contacts_.assign(size_t(model.pose_layout().contacts), 0.0f);
  for (PoseBuffers* p : {&source_, &previous_source_}) p->resize(joints_);
  resize_output(joints_);
  inertializer_.resize(joints_);

  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)});
  steering_.init(settings, model.schema().trajectory_offsets, model.fps(), position, facing);
  phase_ = 0.0;
  blend_ = 1.0f;
  prediction_age_ = 0.0f;
  out_.positions[0] = on_ground(position);
  out_.rotations[0] = facing;
  // Start from the projection of a standing query: mean pose features, trajectory in place.
  build_query();
  if (!evaluator_.project(query_.data(), projected_.data()) || !all_finite(projected_)) {
    error = "the projector gives non-finite values for a standing query";
    return false;
  }
  reset_track(current_, projected_.data());
  shown_ = current_.now;
  decode_source(shown_.data(), source_);
  previous_source_ = source_;
  for (int j = 1; j < joints_; ++j) {
    out_.positions[size_t(j)] = source_.positions[size_t(j)];
    out_.rotations[size_t(j)] = source_.rotations[size_t(j)];
  }
  update_globals(model.skeleton().parents);
  return true;
}

bool LearnedCharacter::in_contact(int k) const { return contacts_[size_t(k)] > 0.5f; }

void LearnedCharacter::update(const GamepadInput& input, float raw_dt) {
  const float dt = steering_.begin_update(input, raw_dt, out_.positions[0], stats_);
  prediction_age_ += dt;
  if (steering_.search_due() || prediction_age_ >= settings_.max_prediction) project_and_transition();
  advance(dt);
  compose_shown();
  update_pose(dt);
  steering_.end_update(out_.positions[0], out_.rotations[0]);
}

void LearnedCharacter::step_track(Track& track) {
  if (!evaluator_.step(track.now.data(), track.next.data()) || !all_finite(track.next)) {
    ++stats_.nonfinite_states;
    track.next = track.now;  // hold the last good state until the next projection
    return;
  }
  keep_in_range(track.next);
}

void LearnedCharacter::keep_in_range(std::vector<float>& state) {
  bool clamped = false;
  for (int i = 0; i < state_size_; ++i) {
    const float mean = model_->state_mean()[i], reach = kStateReach * model_->state_std()[i];
    const float v = std::clamp(state[size_t(i)], mean - reach, mean + reach);
    clamped = clamped || v != state[size_t(i)];
    state[size_t(i)] = v;
  }
  stats_.clamped_states += clamped ? 1 : 0;
}

void LearnedCharacter::reset_track(Track& track, const float* state) {
  std::copy(state, state + state_size_, track.now.begin());
  step_track(track);
}

void LearnedCharacter::advance_track(Track& track) {
  std::swap(track.now, track.next);
  step_track(track);
}

void LearnedCharacter::sample_track(const Track& track, float* out) const {
  const float a = static_cast<float>(phase_);
  for (int i = 0; i < state_size_; ++i) out[i] = track.now[size_t(i)] + (track.next[size_t(i)] - track.now[size_t(i)]) * a;
}

void LearnedCharacter::advance(float dt) {
  // The stepper predicts whole model frames; between them the states are interpolated
  // (Kleanthous & Martini 2023 Eq. 12: the latent is smooth enough to sample at dt < 1 / fps).
  phase_ += double(dt) * model_->fps();
  while (phase_ >= 1.0) {
    phase_ -= 1.0;
    advance_track(current_);
    if (blend_ < 1.0f) advance_track(outgoing_);
  }
  if (blend_ < 1.0f) blend_ = settings_.blend_time > 0.0f ? std::min(1.0f, blend_ + dt / settings_.blend_time) : 1.0f;
}

void LearnedCharacter::compose_shown() {
  sample_track(current_, shown_.data());
  if (blend_ >= 1.0f) return;
  // Seed 004 Eq. 48-50: a weighted mean of the two states, decoded once.
  sample_track(outgoing_, sample_state_.data());
  lerp_into(sample_state_, shown_, smooth(blend_), shown_);
}

void LearnedCharacter::build_query() {
  std::copy(shown_.begin() + latent_, shown_.end(), query_.begin());
  const RootSample root{on_ground(out_.positions[0]), out_.rotations[0]};
  compute_trajectory_features(model_->schema(), root, steering_.trajectory().data(), model_->feature_offset(),
                              model_->feature_scale(), query_.data());
}

float LearnedCharacter::query_cost(const float* state) const {
  float cost = 0.0f;
  for (size_t i = 0; i < query_.size(); ++i) {
    const float d = state[size_t(latent_) + i] - query_[i];
    cost += d * d;
  }
  return cost;
}

void LearnedCharacter::project_and_transition() {
  build_query();
  steering_.searched(stats_);
  if (!evaluator_.project(query_.data(), projected_.data()) || !all_finite(projected_)) {
    ++stats_.nonfinite_states;
    return;
  }
  keep_in_range(projected_);
  const bool forced = prediction_age_ >= settings_.max_prediction;
  // Seed 004 Sec. 6.3.1: keep the playing prediction when the projected one is not better.
  if (!forced && query_cost(projected_.data()) + settings_.transition_cost >= query_cost(shown_.data())) return;
  stats_.forced_projections += forced ? 1 : 0;
  ++stats_.transitions;
  prediction_age_ = 0.0f;
  if (settings_.transition == LearnedTransition::LatentBlend) {
    begin_blend(projected_.data());
  } else {
    begin_inertialization(projected_.data());
  }
}

void LearnedCharacter::begin_blend(const float* projected) {
  if (blend_ < 1.0f) {
    // Blending already: the outgoing prediction becomes the mix being shown.
    const float w = smooth(blend_);
    lerp_into(outgoing_.now, current_.now, w, outgoing_.now);
    lerp_into(outgoing_.next, current_.next, w, outgoing_.next);
  } else {
    std::swap(outgoing_, current_);
  }
  reset_track(current_, projected);
  blend_ = settings_.blend_time > 0.0f ? 0.0f : 1.0f;
}

void LearnedCharacter::begin_inertialization(const float* projected) {
  const Vec3 old_velocity = inverse_rotate(out_.rotations[0], out_.velocities[0]);
  const Vec3 old_angular = inverse_rotate(out_.rotations[0], out_.angular[0]);
  reset_track(current_, projected);
  // Source velocities from the new prediction's first step; the source pose itself at the
  // current sub-frame phase, as the next update will show it.
  decode_source(current_.now.data(), previous_source_);
  decode_source(current_.next.data(), source_);
  velocities_between(previous_source_, source_, 1.0f / model_->fps(), source_);
  sample_track(current_, sample_state_.data());
  decode_source(sample_state_.data(), source_);  // positions and rotations only
  const PoseVectorLayout& layout = model_->pose_layout();
  inertializer_.start(out_, out_.rotations, source_, old_velocity - pose_root_velocity(layout, pose_.data()),
                      old_angular - pose_root_angular_velocity(layout, pose_.data()));
  previous_source_ = source_;
}

void LearnedCharacter::decode_source(const float* state, PoseBuffers& pose) {
  if (!evaluator_.decode(state, decoded_.data()) || !all_finite(decoded_)) {
    ++stats_.nonfinite_states;
    pose = previous_source_;  // keep the last good pose
    return;
  }
  std::swap(pose_, decoded_);  // the decoder's buffer becomes the last good pose
  pose_from_vector(model_->pose_layout(), pose_.data(), pose.positions.data(), pose.rotations.data());
  const int contact = model_->pose_layout().contact();
  for (size_t k = 0; k < contacts_.size(); ++k) contacts_[k] = pose_[size_t(contact) + k];
}

void LearnedCharacter::update_pose(float dt) {
  // The last pose becomes the previous one; the decode overwrites every position and rotation.
  std::swap(previous_source_, source_);
  decode_source(shown_.data(), source_);
  velocities_between(previous_source_, source_, dt, source_);
  if (settings_.transition == LearnedTransition::Inertialize) {
    inertializer_.apply(source_, settings_.inertialization_halflife, dt, out_);
  } else {
    for (size_t j = 1; j < out_.positions.size(); ++j) {
      out_.positions[j] = source_.positions[j];
      out_.rotations[j] = source_.rotations[j];
      out_.velocities[j] = source_.velocities[j];
      out_.angular[j] = source_.angular[j];
    }
  }
  const PoseVectorLayout& layout = model_->pose_layout();
  const Vec3 local_velocity = pose_root_velocity(layout, pose_.data()) + inertializer_.root_velocity_offset();
  const Vec3 local_angular = pose_root_angular_velocity(layout, pose_.data()) + inertializer_.root_angular_offset();
  steering_.integrate_root(local_velocity, local_angular, dt, out_.positions[0], out_.rotations[0], out_.velocities[0],
                           out_.angular[0]);
  update_globals(model_->skeleton().parents);
}

}  // namespace lmm
