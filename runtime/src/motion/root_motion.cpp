#include "lmm/motion/root_motion.hpp"

#include <cmath>

#include "lmm/core/springs.hpp"

namespace lmm {

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

}  // namespace lmm
