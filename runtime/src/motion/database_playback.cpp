#include "lmm/motion/database_playback.hpp"

#include <algorithm>
#include <cmath>

namespace lmm {
void DatabasePlayback::init(std::shared_ptr<const Database> db, int frame) {
  db_ = std::move(db);
  sample_.resize(db_->joint_count());
  inertializer_.resize(db_->joint_count());
  start_at(frame);
}

void DatabasePlayback::start_at(int frame) {
  range_ = clip_index(*db_, frame);
  frame_time_ = frame;
  played_ = PlayedSpan{frame_time_, frame_time_, false};  // nothing played yet
  started_ = true;
  sample(frame_time_);
  sample_joint_velocities(frame_time_);
}

void DatabasePlayback::jump(int frame, const PoseBuffers& out, const std::vector<Quat>& animated) {
  // Root: the velocity difference in character space, decayed later.
  const Vec3 old_root_velocity = inverse_rotate(out.rotations[0], out.velocities[0]);
  const Vec3 old_root_angular = inverse_rotate(out.rotations[0], out.angular[0]);
  sample_joint_velocities(frame_time_);  // of the pose the last advance() showed
  inertializer_.keep_shown_velocities(sample_);
  start_at(frame);
  const Quat d_rot = sample_.rotations[0];
  inertializer_.start(out, animated, sample_, old_root_velocity - inverse_rotate(d_rot, sample_.velocities[0]),
                      old_root_angular - inverse_rotate(d_rot, sample_.angular[0]));
}

void DatabasePlayback::advance(float dt, float halflife, PoseBuffers& out) {
  // The first advance after init or a jump plays its start frame too; later ones continue.
  const double from = frame_time_;
  frame_time_ = std::min(frame_time_ + double(dt) * db_->fps(), double(clip_stop() - 1));
  played_ = PlayedSpan{from, frame_time_, started_};
  started_ = false;
  sample(frame_time_);
  inertializer_.apply(sample_, halflife, dt, out);
}

int DatabasePlayback::events(CharacterEvent* out, int capacity) const {
  const std::vector<DatabaseEvent>& all = db_->annotations().events();
  const int first = static_cast<int>(std::floor(played_.from));
  auto e = std::lower_bound(all.begin(), all.end(), first, [](const DatabaseEvent& a, int f) { return a.frame < f; });
  int count = 0;
  for (; e != all.end() && e->frame <= played_.to; ++e) {
    if (!played_.contains(e->frame)) continue;
    if (count < capacity) {
      out[count] = CharacterEvent{e->name, e->frame, static_cast<float>((e->frame - played_.from) / db_->fps())};
    }
    ++count;
  }
  return count;
}

Vec3 DatabasePlayback::local_root_velocity() const {
  return inverse_rotate(sample_.rotations[0], sample_.velocities[0]) + inertializer_.root_velocity_offset();
}

Vec3 DatabasePlayback::local_root_angular() const {
  return inverse_rotate(sample_.rotations[0], sample_.angular[0]) + inertializer_.root_angular_offset();
}

DatabasePlayback::SamplePoint DatabasePlayback::sample_point(double frame_time) const {
  const DatabaseRange& range = db_->ranges()[size_t(range_)];
  const int frame = std::clamp(static_cast<int>(std::floor(frame_time)), range.start, range.stop - 1);
  return SamplePoint{frame, std::min(frame + 1, range.stop - 1),
                     static_cast<float>(std::clamp(frame_time - frame, 0.0, 1.0))};
}

void DatabasePlayback::sample(double frame_time) {
  const SamplePoint at = sample_point(frame_time);
  frame_ = at.frame;
  for (int j = 0; j < db_->joint_count(); ++j) {
    const size_t i = size_t(j);
    sample_.positions[i] = lerp(db_->positions(at.frame)[j], db_->positions(at.next)[j], at.weight);
    sample_.rotations[i] = slerp(db_->rotations(at.frame)[j], db_->rotations(at.next)[j], at.weight);
  }
  sample_.velocities[0] = lerp(db_->velocities(at.frame)[0], db_->velocities(at.next)[0], at.weight);
  sample_.angular[0] = lerp(db_->angular_velocities(at.frame)[0], db_->angular_velocities(at.next)[0], at.weight);
}

void DatabasePlayback::sample_joint_velocities(double frame_time) {
  const SamplePoint at = sample_point(frame_time);
  for (int j = 1; j < db_->joint_count(); ++j) {
    const size_t i = size_t(j);
    sample_.velocities[i] = lerp(db_->velocities(at.frame)[j], db_->velocities(at.next)[j], at.weight);
    sample_.angular[i] = lerp(db_->angular_velocities(at.frame)[j], db_->angular_velocities(at.next)[j], at.weight);
  }
}

bool DatabasePlayback::leaves(const TagConstraint& constraint, float dt) const {
  if (constraint.allows_all()) return false;
  const int steps = static_cast<int>(std::ceil(dt * db_->fps())) + 1;
  for (int f = frame_; f <= std::min(frame_ + steps, clip_stop() - 1); ++f) {
    if (!constraint.allows(db_->annotations().tags(f))) return true;
  }
  return false;
}

}  // namespace lmm
