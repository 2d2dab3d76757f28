// Critically damped springs in closed form (exact for any dt), used for the simulated
// character, trajectory prediction and inertialization offsets.
#pragma once

#include <cmath>

#include "lmm/core/math.hpp"

namespace lmm {

// Decay rate y of a critically damped spring, x(t) = (x0 + j t) e^{-y t}, from a halflife in
// seconds: the common parameterisation y = 2 ln 2 / halflife (an approximate halflife).
inline float spring_y(float halflife) { return 2.0f * 0.69314718f / (halflife + 1e-5f); }

// A critically damped velocity spring towards a fixed `goal`: the terms of its update that do
// not depend on the time step, so that many horizons (a trajectory's samples) share them.
struct VelocitySpring {
  Vec3 goal, j0, j1;
  float y = 0.0f;
};
// The VelocitySpring of velocity v and acceleration a towards `goal`.
inline VelocitySpring velocity_spring(Vec3 velocity, Vec3 acceleration, Vec3 goal, float halflife) {
  const float y = spring_y(halflife);
  const Vec3 j0 = velocity - goal;
  return VelocitySpring{goal, j0, acceleration + j0 * y, y};
}
// Moves the state the spring started from dt along it; e is exp(-s.y dt). The position integrates
// the exact velocity curve.
inline void advance(const VelocitySpring& s, float dt, float e, Vec3& position, Vec3& velocity, Vec3& acceleration) {
  position = position + s.goal * dt + s.j0 * ((1.0f - e) / s.y) + s.j1 * ((1.0f - e * (1.0f + s.y * dt)) / (s.y * s.y));
  velocity = s.goal + (s.j0 + s.j1 * dt) * e;
  acceleration = (acceleration - s.j1 * (s.y * dt)) * e;
}
// Velocity v approaches `goal` with a critically damped spring (acceleration a); the position
// integrates the exact velocity curve over dt.
inline void spring_velocity_update(Vec3& position, Vec3& velocity, Vec3& acceleration, Vec3 goal, float halflife,
                                   float dt) {
  const VelocitySpring s = velocity_spring(velocity, acceleration, goal, halflife);
  advance(s, dt, std::exp(-s.y * dt), position, velocity, acceleration);
}

// A critically damped rotation spring towards a fixed `goal` (angular velocity in world space):
// the terms of its update that do not depend on the time step.
struct RotationSpring {
  Quat goal;
  Vec3 j0, j1;
  float y = 0.0f;
};
// The RotationSpring of `rotation` and `angular_velocity` towards `goal`.
inline RotationSpring rotation_spring(Quat rotation, Vec3 angular_velocity, Quat goal, float halflife) {
  const float y = spring_y(halflife);
  const Vec3 j0 = to_scaled_angle_axis(rotation * inverse(goal));
  return RotationSpring{goal, j0, angular_velocity + j0 * y, y};
}
// Moves the state the spring started from dt along it; e is exp(-s.y dt).
inline void advance(const RotationSpring& s, float dt, float e, Quat& rotation, Vec3& angular_velocity) {
  rotation = from_scaled_angle_axis((s.j0 + s.j1 * dt) * e) * s.goal;
  angular_velocity = (angular_velocity - s.j1 * (s.y * dt)) * e;
}
// Rotation approaches `goal` with a critically damped spring; angular velocity in world space.
inline void spring_rotation_update(Quat& rotation, Vec3& angular_velocity, Quat goal, float halflife, float dt) {
  const RotationSpring s = rotation_spring(rotation, angular_velocity, goal, halflife);
  advance(s, dt, std::exp(-s.y * dt), rotation, angular_velocity);
}

// exp(-y dt) of the last (y, dt) it was asked for, kept: a spring stepped at a steady frame rate,
// or predicted at a fixed horizon, computes its exponential once (the value is the same).
class DecayFactor {
 public:
  // exp(-y dt).
  float operator()(float y, float dt) {
    if (y != y_ || dt != dt_) {
      y_ = y;
      dt_ = dt;
      e_ = std::exp(-y * dt);
    }
    return e_;
  }

 private:
  float y_ = NAN, dt_ = NAN, e_ = 1.0f;
};

// The damping and decay factor of one halflife over dt, shared by many decaying springs.
struct SpringDecay {
  float y = 0.0f, e = 1.0f, dt = 0.0f;
};
// SpringDecay of `halflife` over dt.
inline SpringDecay spring_decay_over(float halflife, float dt) {
  const float y = spring_y(halflife);
  return SpringDecay{y, std::exp(-y * dt), dt};
}

// An offset (and its velocity) decaying to zero with a critically damped spring.
inline void spring_decay(Vec3& offset, Vec3& velocity, const SpringDecay& d) {
  const Vec3 j1 = velocity + offset * d.y;
  offset = (offset + j1 * d.dt) * d.e;
  velocity = (velocity - j1 * (d.y * d.dt)) * d.e;
}
inline void spring_decay(Vec3& offset, Vec3& velocity, float halflife, float dt) {
  spring_decay(offset, velocity, spring_decay_over(halflife, dt));
}

}  // namespace lmm
