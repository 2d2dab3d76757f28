#include "lmm/motion/learned_playback.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/asset/pose_vector.hpp"
#include "lmm/eval/pose_kernels.hpp"

namespace lmm {
namespace {

// States farther than this many standard deviations (of the training data's states) from
// their mean are clamped back: the networks were never trained there. Latent dimensions are
// heavy-tailed (L1-regularised), so the bound is loose: on bandai-loco/normal with the
// `standard` preset 16 std still clamped 1,687 of 36,000 frames of a random run, 32 none.
constexpr float kStateReach = 32.0f;

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

bool LearnedPlayback::init(std::shared_ptr<const Model> model, LearnedTransition transition, float blend_time,
                           KernelPath kernels, std::string& error) {
  if (!evaluator_.init(model, 1, kernels, error)) return false;
  model_ = std::move(model);
  transition_ = transition;
  blend_time_ = blend_time;
  state_size_ = model_->state_size();
  for (Track* t : {&current_, &outgoing_}) {
    t->now.assign(size_t(state_size_), 0.0f);
    t->next.assign(size_t(state_size_), 0.0f);
  }
  shown_.assign(size_t(state_size_), 0.0f);
  sample_state_ = shown_;
  decoded_.assign(size_t(model_->pose_layout().size()), 0.0f);
  contacts_.assign(size_t(model_->pose_layout().contacts), 0.0f);
  const int joints = model_->skeleton().joint_count();
  for (PoseBuffers* p : {&source_, &previous_source_}) p->resize(joints);
  inertializer_.resize(joints);
  return true;
}

void LearnedPlayback::start(const float* state, PoseBuffers& out, CharacterStats& stats) {
  inertializer_.resize(model_->skeleton().joint_count());
  inertialize_next_ = false;
  since_inertialization_ = kNoInertialization;
  phase_ = 0.0;
  blend_ = 1.0f;
  reset_track(current_, state, stats);
  shown_ = current_.now;
  decode_source(shown_.data(), source_, stats);
  std::fill(source_.velocities.begin(), source_.velocities.end(), Vec3{});
  std::fill(source_.angular.begin(), source_.angular.end(), Vec3{});
  shown_dt_ = 0.0f;
  previous_source_ = source_;
  for (size_t j = 1; j < out.positions.size(); ++j) {
    out.positions[j] = source_.positions[j];
    out.rotations[j] = source_.rotations[j];
  }
}

void LearnedPlayback::transition(const float* state, const PoseBuffers& out, CharacterStats& stats) {
  if (transition_stepped_later(state, out, stats) != nullptr) step_from_now(current_, stats);
}

const float* LearnedPlayback::transition_stepped_later(const float* state, const PoseBuffers& out,
                                                       CharacterStats& stats) {
  const bool blend = transition_ == LearnedTransition::LatentBlend && !inertialize_next_;
  inertialize_next_ = false;
  if (blend) return start_blend(state);
  begin_inertialization(state, out, stats);
  return nullptr;
}

void LearnedPlayback::advance(float dt, float halflife, PoseBuffers& out, CharacterStats& stats) {
  const int frames = begin_advance(dt);
  for (int f = 0; f < frames; ++f) {
    for (int t = 0; t < stepping_tracks_; ++t) step_track(stepping_track(t), stats);
  }
  const float* shown = compose_shown();
  const bool ok = evaluator_.decode(shown, decoded_.data());
  finish_advance(decoded_.data(), ok, dt, halflife, out, stats);
}

int LearnedPlayback::begin_advance(float dt) {
  // The stepper predicts whole model frames; between them the states are interpolated
  // (Kleanthous & Martini 2023 Eq. 12: the latent is smooth enough to sample at dt < 1 / fps).
  phase_ += double(dt) * model_->fps();
  int frames = 0;
  for (; phase_ >= 1.0; ++frames) phase_ -= 1.0;
  stepping_tracks_ = blend_ < 1.0f ? 2 : 1;
  if (blend_ < 1.0f) blend_ = blend_time_ > 0.0f ? std::min(1.0f, blend_ + dt / blend_time_) : 1.0f;
  return frames;
}

const float* LearnedPlayback::prepare_step(int t) {
  Track& track = stepping_track(t);
  std::swap(track.now, track.next);
  return track.now.data();
}

void LearnedPlayback::finish_step(int t, bool ok, float* stepped, CharacterStats& stats) {
  take_step(stepping_track(t), ok, stepped, stats);
}

void LearnedPlayback::finish_advance(const float* decoded, bool ok, float dt, float halflife, PoseBuffers& out,
                                     CharacterStats& stats) {
  // The last pose becomes the previous one; the decode overwrites every position and rotation.
  std::swap(previous_source_, source_);
  take_decoded(decoded, ok, source_, stats);
  // The joints' velocities are needed only when an inertialization starts (begin_inertialization
  // computes them then, over shown_dt_). Latent blending applies the offsets of a one-off
  // inertialization (inertialize_next) until they have decayed.
  shown_dt_ = dt;
  const bool inertializing = transition_ == LearnedTransition::Inertialize ||
                             since_inertialization_ < kOneOffInertializationHalflives * halflife;
  since_inertialization_ += dt;
  if (inertializing) {
    inertializer_.apply(source_, halflife, dt, out);
    return;
  }
  for (size_t j = 1; j < out.positions.size(); ++j) {
    out.positions[j] = source_.positions[j];
    out.rotations[j] = source_.rotations[j];
  }
}

Vec3 LearnedPlayback::local_root_velocity() const { return root_velocity_ + inertializer_.root_velocity_offset(); }

Vec3 LearnedPlayback::local_root_angular() const { return root_angular_ + inertializer_.root_angular_offset(); }

void LearnedPlayback::keep_in_range(float* state, CharacterStats& stats) const {
  const float* mean = model_->state_mean();
  const float* spread = model_->state_std();
  int clamped = 0;
  for (int i = 0; i < state_size_; ++i) {  // std::clamp's result (low <= high), as a max then a min that vectorise
    const float reach = kStateReach * spread[i], low = mean[i] - reach, high = mean[i] + reach, x = state[i];
    const float raised = x < low ? low : x;
    const float v = high < raised ? high : raised;
    clamped |= int(v != x);
    state[i] = v;
  }
  stats.clamped_states += clamped != 0 ? 1 : 0;
}

void LearnedPlayback::step_track(Track& track, CharacterStats& stats) {
  std::swap(track.now, track.next);
  step_from_now(track, stats);
}

void LearnedPlayback::step_from_now(Track& track, CharacterStats& stats) {
  take_step(track, evaluator_.step(track.now.data(), track.next.data()), track.next.data(), stats);
}

// Checked and kept in range where it lies (a crowd's batch row is in cache; the character's
// track may not be), then stored.
void LearnedPlayback::take_step(Track& track, bool ok, float* stepped, CharacterStats& stats) {
  if (!ok || !all_finite(stepped, size_t(state_size_))) {
    ++stats.nonfinite_states;
    track.next = track.now;  // hold the last good state until the next projection
    return;
  }
  keep_in_range(stepped, stats);
  if (stepped != track.next.data()) std::copy(stepped, stepped + state_size_, track.next.begin());
}

void LearnedPlayback::reset_track(Track& track, const float* state, CharacterStats& stats) {
  std::copy(state, state + state_size_, track.next.begin());
  step_track(track, stats);
}

void LearnedPlayback::sample_track(const Track& track, float* out) const {
  const float a = static_cast<float>(phase_);
  for (int i = 0; i < state_size_; ++i)
    out[i] = track.now[size_t(i)] + (track.next[size_t(i)] - track.now[size_t(i)]) * a;
}

const float* LearnedPlayback::compose_shown() {
  sample_track(current_, shown_.data());
  if (blend_ < 1.0f) {
    // Kleanthous & Martini 2023 Eq. 48-50: a weighted mean of the two states, decoded once.
    sample_track(outgoing_, sample_state_.data());
    lerp_into(sample_state_, shown_, smooth(blend_), shown_);
  }
  return shown_.data();
}

// A latent blend towards `projected` (reset_track without its step): returns the new
// prediction's row to step.
const float* LearnedPlayback::start_blend(const float* projected) {
  if (blend_ < 1.0f) {
    // Blending already: the outgoing prediction becomes the mix being shown.
    const float w = smooth(blend_);
    lerp_into(outgoing_.now, current_.now, w, outgoing_.now);
    lerp_into(outgoing_.next, current_.next, w, outgoing_.next);
  } else {
    std::swap(outgoing_, current_);
  }
  blend_ = blend_time_ > 0.0f ? 0.0f : 1.0f;
  std::copy(projected, projected + state_size_, current_.next.begin());
  return prepare_step(0);
}

void LearnedPlayback::begin_inertialization(const float* projected, const PoseBuffers& out, CharacterStats& stats) {
  const Vec3 old_velocity = inverse_rotate(out.rotations[0], out.velocities[0]);
  const Vec3 old_angular = inverse_rotate(out.rotations[0], out.angular[0]);
  if (shown_dt_ > 0.0f) velocities_between(previous_source_, source_, shown_dt_, source_);  // as last shown
  inertializer_.keep_shown_velocities(source_);
  reset_track(current_, projected, stats);
  // Source velocities from the new prediction's first step; the source pose itself at the
  // current sub-frame phase, as the next update will show it.
  decode_source(current_.now.data(), previous_source_, stats);
  decode_source(current_.next.data(), source_, stats);
  velocities_between(previous_source_, source_, 1.0f / model_->fps(), source_);
  sample_track(current_, sample_state_.data());
  decode_source(sample_state_.data(), source_, stats);  // positions and rotations only
  inertializer_.start(out, out.rotations, source_, old_velocity - root_velocity_, old_angular - root_angular_);
  previous_source_ = source_;
  since_inertialization_ = 0.0f;
}

void LearnedPlayback::decode_source(const float* state, PoseBuffers& pose, CharacterStats& stats) {
  const bool ok = evaluator_.decode(state, decoded_.data());
  take_decoded(decoded_.data(), ok, pose, stats);
}

void LearnedPlayback::take_decoded(const float* decoded, bool ok, PoseBuffers& pose, CharacterStats& stats) {
  const PoseVectorLayout& layout = model_->pose_layout();
  if (!ok || !all_finite(decoded, size_t(layout.size()))) {
    ++stats.nonfinite_states;
    pose = previous_source_;  // keep the last good pose
    return;
  }
  pose_from_vector(layout, decoded, pose.positions.data(), pose.rotations.data());
  root_velocity_ = pose_root_velocity(layout, decoded);
  root_angular_ = pose_root_angular_velocity(layout, decoded);
  for (size_t k = 0; k < contacts_.size(); ++k) contacts_[k] = decoded[size_t(layout.contact()) + k];
}

}  // namespace lmm
