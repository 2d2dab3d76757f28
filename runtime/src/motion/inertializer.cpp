#include "lmm/motion/inertializer.hpp"

#include "lmm/core/springs.hpp"

namespace lmm {

void PoseBuffers::resize(int joints) {
  for (auto* v : {&positions, &velocities, &angular}) v->assign(size_t(joints), Vec3{});
  rotations.assign(size_t(joints), Quat{});
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
