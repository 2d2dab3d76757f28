#include "lmm/steering.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/skeleton.hpp"
#include "lmm/springs.hpp"

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

void PoseBuffers::resize(int joints) {
  for (auto* v : {&positions, &velocities, &angular}) v->assign(size_t(joints), Vec3{});
  rotations.assign(size_t(joints), Quat{});
}

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

float Steering::begin_update(const GamepadInput& raw_input, float raw_dt, Vec3 character_root,
                             CharacterStats& stats) {
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
  const float rotation_change =
      length(to_scaled_angle_axis(desired_rotation_ * inverse(previous_desired_rotation_)));
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
  const SimulatedRoot::Springs springs = sim_.springs_towards(desired_velocity_, desired_rotation_, settings_.controller);
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

void integrate_root_motion(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation,
                           Vec3& velocity, Vec3& angular) {
  velocity = rotate(rotation, local_velocity);
  angular = rotate(rotation, local_angular);
  position = position + velocity * dt;
  rotation = normalize(from_scaled_angle_axis(angular * dt) * rotation);
}

void pull_towards(Vec3 target, Vec3 velocity, float halflife, float max_ratio, float dt, Vec3& position) {
  const float blend = 1.0f - std::exp(-dt * 0.69314718f / halflife);
  Vec3 step = on_ground(target - position) * blend;
  const float max_step = max_ratio * length(velocity) * dt;
  if (length(step) > max_step) step = normalize(step) * max_step;
  position = position + step;
}

void PoseOutput::resize_output(int joints) {
  out_.resize(joints);
  global_positions_.assign(size_t(joints), Vec3{});
  global_rotations_.assign(size_t(joints), Quat{});
}

void PoseOutput::update_globals(const std::vector<int>& parents) {
  forward_kinematics(parents.data(), int(parents.size()), out_.positions.data(), out_.rotations.data(),
                     global_positions_.data(), global_rotations_.data());
}

void PoseOutput::begin_root_motion() {
  motion_start_position_ = out_.positions[0];
  motion_start_rotation_ = out_.rotations[0];
}

void PoseOutput::end_root_motion() {
  root_motion_.translation = out_.positions[0] - motion_start_position_;
  root_motion_.local_translation = inverse_rotate(motion_start_rotation_, root_motion_.translation);
  root_motion_.rotation = normalize(out_.rotations[0] * inverse(motion_start_rotation_));
}

void PoseOutput::place_root(Vec3 position, Quat rotation, const std::vector<int>& parents) {
  out_.positions[0] = position;
  out_.rotations[0] = normalize(rotation);
  update_globals(parents);
}

void CharacterBase::teleport(Vec3 position, float heading) {
  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0.0f, std::cos(heading)});
  const GroundMove move{on_ground(out_.positions[0]), on_ground(position),
                        normalize(facing * inverse(heading_of(out_.rotations[0])))};
  steering_.move(move);
  out_.velocities[0] = move.direction(out_.velocities[0]);
  out_.angular[0] = move.direction(out_.angular[0]);
  release_world_state();
  place_root(Vec3{position.x, out_.positions[0].y, position.z}, move.rotation(out_.rotations[0]), parents());
}

void CharacterBase::set_root(Vec3 position, Quat rotation) { place_root(position, rotation, parents()); }

void Steering::integrate_root(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation,
                              Vec3& velocity, Vec3& angular) const {
  integrate_root_motion(local_velocity, local_angular, dt, position, rotation, velocity, angular);
  if (!settings_.adjust_to_simulation || settings_.root_owner == RootOwner::Game) return;
  pull_towards(sim_.position, velocity, settings_.adjustment_halflife, settings_.adjustment_max_ratio, dt, position);
  const float blend = 1.0f - std::exp(-dt * 0.69314718f / settings_.adjustment_halflife);
  Vec3 turn = to_scaled_angle_axis(sim_.rotation * inverse(rotation)) * blend;
  const float max_turn = settings_.adjustment_max_ratio * (length(angular) + length(velocity)) * dt;
  if (length(turn) > max_turn) turn = normalize(turn) * max_turn;
  rotation = normalize(from_scaled_angle_axis(turn) * rotation);
}

void Inertializer::resize(int joints) {
  for (auto* v : {&offsets_.positions, &offsets_.velocities, &offsets_.rotations_scaled, &offsets_.angular}) {
    v->assign(size_t(joints), Vec3{});
  }
}

void Inertializer::keep_shown_velocities(const PoseBuffers& source) {
  for (size_t j = 1; j < offsets_.positions.size(); ++j) {
    offsets_.velocities[j] = source.velocities[j] + offsets_.velocities[j];
    offsets_.angular[j] = source.angular[j] + offsets_.angular[j];
  }
}

void Inertializer::start(const PoseBuffers& out, const std::vector<Quat>& animated, const PoseBuffers& source,
                         Vec3 root_velocity_offset, Vec3 root_angular_offset) {
  offsets_.positions[0] = root_velocity_offset;
  offsets_.rotations_scaled[0] = root_angular_offset;
  offsets_.velocities[0] = offsets_.angular[0] = Vec3{};
  for (size_t j = 1; j < offsets_.positions.size(); ++j) {
    offsets_.positions[j] = out.positions[j] - source.positions[j];
    offsets_.velocities[j] = offsets_.velocities[j] - source.velocities[j];  // kept shown minus new
    offsets_.rotations_scaled[j] = to_scaled_angle_axis(animated[j] * inverse(source.rotations[j]));
    offsets_.angular[j] = offsets_.angular[j] - source.angular[j];
  }
}

void Inertializer::apply(const PoseBuffers& source, float halflife, float dt, PoseBuffers& out) {
  const SpringDecay decay = spring_decay_over(halflife, dt);  // one exp for every joint
  for (size_t j = 0; j < offsets_.positions.size(); ++j) {
    spring_decay(offsets_.positions[j], offsets_.velocities[j], decay);
    spring_decay(offsets_.rotations_scaled[j], offsets_.angular[j], decay);
    if (j == 0) continue;  // the root is integrated from velocities
    out.positions[j] = source.positions[j] + offsets_.positions[j];
    out.rotations[j] = from_scaled_angle_axis(offsets_.rotations_scaled[j]) * source.rotations[j];
  }
}

}  // namespace lmm
