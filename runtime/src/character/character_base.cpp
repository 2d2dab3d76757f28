#include "lmm/character/character_base.hpp"

#include "lmm/asset/skeleton.hpp"

namespace lmm {

void PoseOutput::trajectory_of_features(const FeatureSchema& schema, const float* features, const float* offset,
                                        const float* scale, Vec3* positions, Vec3* directions) const {
  trajectory_from_features(schema, features, offset, scale, RootSample{root_position(), root_rotation()}, positions,
                           directions);
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

}  // namespace lmm
