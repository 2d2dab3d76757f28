#include "lmm/controller.hpp"

#include <algorithm>

#include "lmm/springs.hpp"

namespace lmm {
namespace {

constexpr Vec3 kUp{0.0f, 1.0f, 0.0f};

float mix(float a, float b, float t) { return a + (b - a) * t; }

}  // namespace

Vec3 stick_direction(float stick_x, float stick_y, float camera_azimuth) {
  // Stick right is screen right: with the camera looking along +Z that is world -X.
  Vec3 local{-stick_x, 0.0f, stick_y};
  const float n = length(local);
  if (n > 1.0f) local = local / n;
  return rotate(quat_from_angle_axis(camera_azimuth, kUp), local);
}

Vec3 desired_velocity(const GamepadInput& input, Quat rotation, const ControllerSettings& s) {
  const float gait = std::clamp(input.gait, 0.0f, 1.0f);
  const float forward = mix(s.walk_forward, s.run_forward, gait);
  const float side = mix(s.walk_side, s.run_side, gait);
  const float back = mix(s.walk_back, s.run_back, gait);
  const Vec3 local = inverse_rotate(rotation, stick_direction(input.left_x, input.left_y, input.camera_azimuth));
  const Vec3 scaled{local.x * side, 0.0f, local.z * (local.z > 0.0f ? forward : back)};
  return rotate(rotation, scaled);
}

Quat desired_rotation(const GamepadInput& input, Quat current, Vec3 velocity) {
  if (input.strafe) {
    const bool aiming = input.right_x * input.right_x + input.right_y * input.right_y > 0.0001f;
    const Vec3 direction = aiming ? stick_direction(input.right_x, input.right_y, input.camera_azimuth)
                                  : rotate(quat_from_angle_axis(input.camera_azimuth, kUp), Vec3{0, 0, 1});
    return quat_from_heading(direction);
  }
  if (input.left_x * input.left_x + input.left_y * input.left_y > 0.0001f && length(velocity) > 1e-4f) {
    return quat_from_heading(velocity);
  }
  return current;
}

void SimulatedRoot::update(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& s,
                           float dt) {
  spring_velocity_update(position, velocity, acceleration, desired_velocity, s.velocity_halflife, dt);
  spring_rotation_update(rotation, angular_velocity, desired_rotation, s.rotation_halflife, dt);
}

SimulatedRoot SimulatedRoot::predict(Vec3 desired_velocity, Quat desired_rotation,
                                     const ControllerSettings& s, float seconds) const {
  SimulatedRoot future = *this;
  future.update(desired_velocity, desired_rotation, s, seconds);
  return future;
}

}  // namespace lmm
