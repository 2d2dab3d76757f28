#include "lmm/database_playback.hpp"

#include <algorithm>
#include <cmath>

namespace lmm {
void DatabasePlayback::init(std::shared_ptr<const Database> db, int frame) {
  db_ = std::move(db);
  sample_.resize(db_->joint_count());
  inertializer_.resize(db_->joint_count());
  range_ = clip_index(*db_, frame);
  frame_time_ = frame;
  sample(frame_time_);
}

void DatabasePlayback::jump(int frame, const PoseBuffers& out, const std::vector<Quat>& animated) {
  // Root: the velocity difference in character space, decayed later.
  const Vec3 old_root_velocity = inverse_rotate(out.rotations[0], out.velocities[0]);
  const Vec3 old_root_angular = inverse_rotate(out.rotations[0], out.angular[0]);
  range_ = clip_index(*db_, frame);
  frame_time_ = frame;
  sample(frame_time_);
  const Quat d_rot = sample_.rotations[0];
  inertializer_.start(out, animated, sample_, old_root_velocity - inverse_rotate(d_rot, sample_.velocities[0]),
                      old_root_angular - inverse_rotate(d_rot, sample_.angular[0]));
}

void DatabasePlayback::advance(float dt, float halflife, PoseBuffers& out) {
  frame_time_ = std::min(frame_time_ + double(dt) * db_->fps(), double(clip_stop() - 1));
  sample(frame_time_);
  inertializer_.apply(sample_, halflife, dt, out);
}

Vec3 DatabasePlayback::local_root_velocity() const {
  return inverse_rotate(sample_.rotations[0], sample_.velocities[0]) + inertializer_.root_velocity_offset();
}

Vec3 DatabasePlayback::local_root_angular() const {
  return inverse_rotate(sample_.rotations[0], sample_.angular[0]) + inertializer_.root_angular_offset();
}

void DatabasePlayback::sample(double frame_time) {
  const DatabaseRange& range = db_->ranges()[size_t(range_)];
  frame_ = std::clamp(static_cast<int>(std::floor(frame_time)), range.start, range.stop - 1);
  const int next = std::min(frame_ + 1, range.stop - 1);
  const float a = static_cast<float>(std::clamp(frame_time - frame_, 0.0, 1.0));
  for (int j = 0; j < db_->joint_count(); ++j) {
    const size_t i = size_t(j);
    sample_.positions[i] = lerp(db_->positions(frame_)[j], db_->positions(next)[j], a);
    sample_.rotations[i] = slerp(db_->rotations(frame_)[j], db_->rotations(next)[j], a);
    sample_.velocities[i] = lerp(db_->velocities(frame_)[j], db_->velocities(next)[j], a);
    sample_.angular[i] = lerp(db_->angular_velocities(frame_)[j], db_->angular_velocities(next)[j], a);
  }
}

}  // namespace lmm
