#include "lmm/database_character.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/ik.hpp"
#include "lmm/skeleton.hpp"
#include "lmm/springs.hpp"

namespace lmm {
namespace {

// Index of the range holding `frame`.
int range_of(const Database& db, int frame) {
  const auto& ranges = db.ranges();
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), frame,
                                   [](int f, const DatabaseRange& r) { return f < r.stop; });
  return static_cast<int>(it - ranges.begin());
}

}  // namespace

bool DatabaseCharacter::init(const Database& db, const FeatureSearch& search,
                             const CharacterSettings& settings, Vec3 position, float heading,
                             std::string& error) {
  if (db.frame_count() == 0) {
    error = "database has no frames";
    return false;
  }
  if (search.database() != &db) {
    error = "the search index was not built over this database (" + std::to_string(search.dims()) +
            " feature dims, database has " + std::to_string(db.schema().dims) + ")";
    return false;
  }
  if (!settings.expected_schema.empty() && settings.expected_schema != db.schema().name) {
    error = "feature schema mismatch: controller expects '" + settings.expected_schema +
            "', database has '" + db.schema().name + "'";
    return false;
  }
  if (db.schema().trajectory_offsets.empty()) {
    error = "feature schema '" + db.schema().name + "' has no trajectory groups to steer with";
    return false;
  }
  db_ = &db;
  search_ = &search;
  settings_ = settings;
  stats_ = CharacterStats{};
  joints_ = db.joint_count();
  sample_.resize(joints_);
  out_.resize(joints_);
  inertializer_.resize(joints_);
  animated_rotations_.assign(size_t(joints_), Quat{});
  global_positions_.assign(size_t(joints_), Vec3{});
  global_rotations_.assign(size_t(joints_), Quat{});
  scratch_.resize(joints_);
  query_.assign(size_t(db.schema().dims), 0.0f);
  query_trajectory_.assign(db.schema().trajectory_offsets.size(), RootSample{});
  result_.assign(1, SearchResult{});
  search_scratch_ = search.make_scratch();
  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)});
  steering_.init(settings, db.schema().trajectory_offsets, db.fps(), position, facing);

  frame_time_ = db.ranges()[0].start;
  frame_ = db.ranges()[0].start;
  range_ = 0;
  end_zone_searched_ = false;
  sample_database(frame_time_);
  out_ = sample_;
  out_.positions[0] = steering_.simulation().position;
  out_.rotations[0] = facing;
  animated_rotations_ = out_.rotations;
  forward_kinematics(db.skeleton().parents.data(), joints_, out_.positions.data(), out_.rotations.data(),
                     global_positions_.data(), global_rotations_.data());

  feet_.clear();
  const std::vector<int>& parents = db.skeleton().parents;
  for (int toe : db.contact_joints()) {
    FootLock foot;
    foot.toe = toe;
    foot.ankle = parents[size_t(toe)];
    foot.knee = foot.ankle > 0 ? parents[size_t(foot.ankle)] : -1;
    foot.hip = foot.knee > 0 ? parents[size_t(foot.knee)] : -1;
    feet_.push_back(foot);
  }
  return true;
}

void DatabaseCharacter::update(const GamepadInput& input, float raw_dt) {
  const float dt = steering_.begin_update(input, raw_dt, out_.positions[0], stats_);
  const int stop = db_->ranges()[size_t(range_)].stop;
  const bool at_clip_end = frame_ >= stop - 1;
  // Entering the clip's excluded end zone searches at once (only the current frame can keep
  // playing from there); the last frame must leave.
  const bool entering_end_zone = frame_ >= stop - settings_.search.ignore_range_end && !end_zone_searched_;
  if (steering_.search_due() || at_clip_end || entering_end_zone) {
    search_and_transition(at_clip_end);
    end_zone_searched_ = frame_ >= db_->ranges()[size_t(range_)].stop - settings_.search.ignore_range_end;
  }
  advance_playback(dt);
  sample_database(frame_time_);
  inertializer_.apply(sample_, settings_.inertialization_halflife, dt, out_);
  integrate_root(dt);
  forward_kinematics(db_->skeleton().parents.data(), joints_, out_.positions.data(), out_.rotations.data(),
                     global_positions_.data(), global_rotations_.data());
  animated_rotations_ = out_.rotations;  // the pose before IK: what transitions blend from
  if (settings_.foot_lock) apply_foot_lock(dt);
  steering_.end_update(out_.positions[0], out_.rotations[0]);
}

void DatabaseCharacter::build_query() {
  // Trajectory relative to the character, re-expressed in the database frame's root so that
  // the pose part is exactly the database's own features of the current frame.
  const Vec3 c_pos = out_.positions[0], d_pos = db_->positions(frame_)[0];
  const Quat c_rot = out_.rotations[0], d_rot = db_->rotations(frame_)[0];
  const std::vector<RootSample>& trajectory = steering_.trajectory();
  for (size_t s = 0; s < trajectory.size(); ++s) {
    const Vec3 rel = inverse_rotate(c_rot, trajectory[s].position - c_pos);
    query_trajectory_[s] = RootSample{d_pos + rotate(d_rot, rel), d_rot * (inverse(c_rot) * trajectory[s].rotation)};
  }
  features_from_local_pose(db_->schema(), db_->skeleton().parents.data(), joints_, db_->positions(frame_),
                           db_->rotations(frame_), db_->velocities(frame_), db_->angular_velocities(frame_),
                           query_trajectory_.data(), scratch_, query_.data());
  normalize_features(query_.data(), db_->feature_offset(), db_->feature_scale(), db_->schema().dims);
}

void DatabaseCharacter::search_and_transition(bool must_leave) {
  build_query();
  steering_.searched(stats_);
  const int found = search_->search(query_.data(), must_leave ? -1 : frame_, settings_.search, result_.data(), 1,
                                   search_scratch_);
  if (found > 0 && result_[0].frame != frame_) {
    start_transition(result_[0].frame);
    ++stats_.transitions;
  }
}

void DatabaseCharacter::start_transition(int frame) {
  // Root: the velocity difference in character space, decayed later.
  const Vec3 old_root_velocity = inverse_rotate(out_.rotations[0], out_.velocities[0]);
  const Vec3 old_root_angular = inverse_rotate(out_.rotations[0], out_.angular[0]);
  range_ = range_of(*db_, frame);
  frame_time_ = frame;
  sample_database(frame_time_);
  const Quat d_rot = sample_.rotations[0];
  inertializer_.start(out_, animated_rotations_, sample_, old_root_velocity - inverse_rotate(d_rot, sample_.velocities[0]),
                      old_root_angular - inverse_rotate(d_rot, sample_.angular[0]));
}

void DatabaseCharacter::sample_database(double frame_time) {
  const DatabaseRange& range = db_->ranges()[size_t(range_)];
  frame_ = std::clamp(static_cast<int>(std::floor(frame_time)), range.start, range.stop - 1);
  const int next = std::min(frame_ + 1, range.stop - 1);
  const float a = static_cast<float>(std::clamp(frame_time - frame_, 0.0, 1.0));
  for (int j = 0; j < joints_; ++j) {
    const size_t i = size_t(j);
    sample_.positions[i] = lerp(db_->positions(frame_)[j], db_->positions(next)[j], a);
    sample_.rotations[i] = slerp(db_->rotations(frame_)[j], db_->rotations(next)[j], a);
    sample_.velocities[i] = lerp(db_->velocities(frame_)[j], db_->velocities(next)[j], a);
    sample_.angular[i] = lerp(db_->angular_velocities(frame_)[j], db_->angular_velocities(next)[j], a);
  }
}

void DatabaseCharacter::advance_playback(float dt) {
  const DatabaseRange& range = db_->ranges()[size_t(range_)];
  frame_time_ = std::min(frame_time_ + double(dt) * db_->fps(), double(range.stop - 1));
}

void DatabaseCharacter::integrate_root(float dt) {
  const Quat d_rot = sample_.rotations[0];
  const Vec3 local_velocity = inverse_rotate(d_rot, sample_.velocities[0]) + inertializer_.root_velocity_offset();
  const Vec3 local_angular = inverse_rotate(d_rot, sample_.angular[0]) + inertializer_.root_angular_offset();
  steering_.integrate_root(local_velocity, local_angular, dt, out_.positions[0], out_.rotations[0], out_.velocities[0],
                           out_.angular[0]);
}

void DatabaseCharacter::apply_foot_lock(float dt) {
  const Vec3 forward = rotate(out_.rotations[0], Vec3{0, 0, 1});
  for (size_t c = 0; c < feet_.size(); ++c) {
    FootLock& foot = feet_[c];
    if (foot.hip <= 0) continue;
    const Vec3 animated = global_positions_[size_t(foot.toe)];
    const bool contact = db_->contacts(frame_)[c] != 0;
    if (contact && !foot.locked) {
      foot.locked = true;
      foot.position = animated + foot.offset;
    }
    if (foot.locked && (!contact || length(foot.position - animated) > settings_.foot_unlock_distance)) {
      foot.locked = false;
    }
    if (foot.locked) {
      foot.offset = foot.position - animated;
      foot.offset_velocity = Vec3{};
    } else {
      spring_decay(foot.offset, foot.offset_velocity, settings_.foot_blend_halflife, dt);
    }
    if (length(foot.offset) < 1e-5f) continue;
    const LegChain chain{global_positions_[size_t(foot.hip)], global_positions_[size_t(foot.knee)],
                         global_positions_[size_t(foot.ankle)], global_rotations_[size_t(foot.hip)],
                         global_rotations_[size_t(foot.knee)], global_rotations_[size_t(foot.ankle)]};
    two_joint_ik(chain, chain.ankle + foot.offset, forward, out_.rotations[size_t(foot.hip)],
                 out_.rotations[size_t(foot.knee)], out_.rotations[size_t(foot.ankle)]);
    // Refresh the global pose before the next foot (chains may share joints).
    forward_kinematics(db_->skeleton().parents.data(), joints_, out_.positions.data(), out_.rotations.data(),
                       global_positions_.data(), global_rotations_.data());
  }
}

}  // namespace lmm
