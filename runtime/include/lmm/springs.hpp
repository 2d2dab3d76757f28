// Critically damped springs in closed form (exact for any dt), used for the simulated
// character, trajectory prediction and inertialization offsets.
#pragma once

#include <cmath>

#include "lmm/math.hpp"

namespace lmm {

// Decay rate y of a critically damped spring, x(t) = (x0 + j t) e^{-y t}, from a halflife in
// seconds: the common parameterisation y = 2 ln 2 / halflife (an approximate halflife).
inline float spring_y(float halflife) { return 2.0f * 0.69314718f / (halflife + 1e-5f); }

// Velocity v approaches `goal` with a critically damped spring (acceleration a); the position
// integrates the exact velocity curve over dt.
inline void spring_velocity_update(Vec3& position, Vec3& velocity, Vec3& acceleration, Vec3 goal,
                                   float halflife, float dt) {
  const float y = spring_y(halflife), e = std::exp(-y * dt);
  const Vec3 j0 = velocity - goal;
  const Vec3 j1 = acceleration + j0 * y;
  position = position + goal * dt + j0 * ((1.0f - e) / y) + j1 * ((1.0f - e * (1.0f + y * dt)) / (y * y));
  velocity = goal + (j0 + j1 * dt) * e;
  acceleration = (acceleration - j1 * (y * dt)) * e;
}

// Rotation approaches `goal` with a critically damped spring; angular velocity in world space.
inline void spring_rotation_update(Quat& rotation, Vec3& angular_velocity, Quat goal, float halflife,
                                   float dt) {
  const float y = spring_y(halflife), e = std::exp(-y * dt);
  const Vec3 j0 = to_scaled_angle_axis(rotation * inverse(goal));
  const Vec3 j1 = angular_velocity + j0 * y;
  rotation = from_scaled_angle_axis((j0 + j1 * dt) * e) * goal;
  angular_velocity = (angular_velocity - j1 * (y * dt)) * e;
}

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
