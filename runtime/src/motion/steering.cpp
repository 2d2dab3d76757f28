#include "lmm/motion/steering.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/asset/skeleton.hpp"
#include "lmm/core/springs.hpp"

namespace lmm {
namespace {

constexpr int kHistoryCapacity = 1024;  // past root samples (one per update)

float finite_or_zero(float v, int& count) {
  if (std::isfinite(v)) return v;
  ++count;
  return 0.0f;
}

float sanitize_dt(float dt, CharacterStats& stats) {
  if (dt > 0.0f && dt <= kMaxDt) return dt;
  ++stats.clamped_dt;
  return dt > kMaxDt ? kMaxDt : 1e-4f;  // NaN and non-positive steps become a tiny step
}

}  // namespace

void Steering::init(const SteeringSettings& settings, const std::vector<int>& trajectory_offsets, float fps,
                    Vec3 position, Quat rotation) {
  settings_ = settings;
  offsets_ = trajectory_offsets;
  fps_ = fps;
  trajectory_.assign(offsets_.size(), RootSample{});
  prediction_decay_.assign(offsets_.size(), SimulatedRoot::Decay{});
  update_decay_ = SimulatedRoot::Decay{};
  // Only a schema with past trajectory offsets reads the history: without one it stays empty.
  const bool past = std::any_of(offsets_.begin(), offsets_.end(), [](int offset) { return offset < 0; });
  history_.assign(past ? kHistoryCapacity : 0, RootSample{on_ground(position), rotation});
  history_time_.assign(history_.size(), 0.0);
  history_next_ = 0;
  clock_ = 0.0;
  sim_ = SimulatedRoot{};
  sim_.position = on_ground(position);
  sim_.rotation = rotation;
  desired_rotation_ = previous_desired_rotation_ = rotation;
  desired_velocity_ = previous_desired_velocity_ = Vec3{};
  const float phase = std::isfinite(settings.search_phase) ? std::clamp(settings.search_phase, 0.0f, 1.0f) : 0.0f;
  time_since_search_ = settings.search_interval * (1.0f - phase);
  predict_trajectory();  // standing in place until the first update
}

GamepadInput Steering::sanitize(const GamepadInput& input, CharacterStats& stats) const {
  GamepadInput in = input;
  int& n = stats.sanitized_inputs;
  in.left_x = finite_or_zero(in.left_x, n);
  in.left_y = finite_or_zero(in.left_y, n);
  in.right_x = finite_or_zero(in.right_x, n);
  in.right_y = finite_or_zero(in.right_y, n);
  in.camera_azimuth = finite_or_zero(in.camera_azimuth, n);
  in.gait = finite_or_zero(in.gait, n);
  return in;
}

float Steering::begin_update(const GamepadInput& raw_input, float raw_dt, Vec3 character_root, CharacterStats& stats) {
  const float dt = sanitize_dt(raw_dt, stats);
  const GamepadInput input = sanitize(raw_input, stats);
  ++stats.updates;
  clock_ += dt;
  time_since_search_ += dt;
  desired_velocity_ = lmm::desired_velocity(input, sim_.rotation, settings_.controller);
  desired_rotation_ = desired_rotation(input, previous_desired_rotation_, desired_velocity_);
  sim_.update(desired_velocity_, desired_rotation_, settings_.controller, dt, update_decay_);
  const Vec3 lead = on_ground(sim_.position - character_root);
  if (length(lead) > settings_.max_simulation_distance) {
    sim_.position = on_ground(character_root) + normalize(lead) * settings_.max_simulation_distance;
  }
  predict_trajectory();
  return dt;
}

bool Steering::search_due() const {
  const float rotation_change = length(to_scaled_angle_axis(desired_rotation_ * inverse(previous_desired_rotation_)));
  return time_since_search_ >= settings_.search_interval ||
         length(desired_velocity_ - previous_desired_velocity_) > settings_.force_search_velocity ||
         rotation_change > settings_.force_search_rotation;
}

void Steering::searched(CharacterStats& stats) {
  time_since_search_ = 0.0f;
  ++stats.searches;
}

void Steering::end_update(Vec3 root_position, Quat root_rotation) {
  previous_desired_velocity_ = desired_velocity_;
  previous_desired_rotation_ = desired_rotation_;
  if (history_.empty()) return;
  history_[size_t(history_next_)] = RootSample{on_ground(root_position), root_rotation};
  history_time_[size_t(history_next_)] = clock_;
  history_next_ = (history_next_ + 1) % kHistoryCapacity;
}

void Steering::hold_at(Vec3 position, Quat rotation, Vec3 velocity) {
  sim_.position = on_ground(position);
  sim_.rotation = rotation;
  sim_.velocity = on_ground(velocity);
  sim_.acceleration = Vec3{};
  sim_.angular_velocity = Vec3{};
  predict_trajectory();
}

void Steering::move(const GroundMove& m) {
  sim_.position = m.point(sim_.position);
  sim_.velocity = m.direction(sim_.velocity);
  sim_.acceleration = m.direction(sim_.acceleration);
  sim_.angular_velocity = m.direction(sim_.angular_velocity);
  sim_.rotation = m.rotation(sim_.rotation);
  for (Vec3* v : {&desired_velocity_, &previous_desired_velocity_}) *v = m.direction(*v);
  for (Quat* q : {&desired_rotation_, &previous_desired_rotation_}) *q = m.rotation(*q);
  for (RootSample& r : history_) r = RootSample{m.point(r.position), m.rotation(r.rotation)};
  for (RootSample& r : trajectory_) r = RootSample{m.point(r.position), m.rotation(r.rotation)};
}

void Steering::predict_trajectory() {
  const SimulatedRoot::Springs springs =
      sim_.springs_towards(desired_velocity_, desired_rotation_, settings_.controller);
  for (size_t s = 0; s < offsets_.size(); ++s) {
    const float seconds = float(offsets_[s]) / fps_;
    if (seconds >= 0.0f) {
      const SimulatedRoot future = sim_.after(springs, seconds, prediction_decay_[s]);
      trajectory_[s] = RootSample{on_ground(future.position), future.rotation};
      continue;
    }
    // Past samples: the newest recorded root at or before the requested time.
    const double wanted = clock_ + seconds;
    RootSample pick = history_[size_t(history_next_)];  // oldest
    for (int i = 1; i <= kHistoryCapacity; ++i) {
      const int h = (history_next_ - i + kHistoryCapacity) % kHistoryCapacity;
      if (history_time_[size_t(h)] <= wanted) {
        pick = history_[size_t(h)];
        break;
      }
    }
    trajectory_[s] = pick;
  }
}

void Steering::integrate_root(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation,
                              Vec3& velocity, Vec3& angular, bool pull) const {
  integrate_root_motion(local_velocity, local_angular, dt, position, rotation, velocity, angular);
  if (!pull || !settings_.adjust_to_simulation || settings_.root_owner == RootOwner::Game) return;
  pull_towards(sim_.position, velocity, settings_.adjustment_halflife, settings_.adjustment_max_ratio, dt, position);
  const float blend = 1.0f - std::exp(-dt * 0.69314718f / settings_.adjustment_halflife);
  Vec3 turn = to_scaled_angle_axis(sim_.rotation * inverse(rotation)) * blend;
  const float max_turn = settings_.adjustment_max_ratio * (length(angular) + length(velocity)) * dt;
  if (length(turn) > max_turn) turn = normalize(turn) * max_turn;
  rotation = normalize(from_scaled_angle_axis(turn) * rotation);
}

}  // namespace lmm
