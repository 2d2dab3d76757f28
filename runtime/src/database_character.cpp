#include "lmm/database_character.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/ik.hpp"
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

Vec3 on_ground(Vec3 v) { return Vec3{v.x, 0.0f, v.z}; }

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
  const size_t j = size_t(joints_);
  for (auto* v : {&sample_positions_, &sample_velocities_, &sample_angular_, &offset_positions_,
                  &offset_velocities_, &offset_rotations_, &offset_angular_, &out_positions_,
                  &out_velocities_, &out_angular_, &global_positions_, &global_velocities_,
                  &global_angular_}) {
    v->assign(j, Vec3{});
  }
  for (auto* q : {&sample_rotations_, &out_rotations_, &animated_rotations_, &global_rotations_}) {
    q->assign(j, Quat{});
  }
  scratch_.resize(joints_);
  query_.assign(size_t(db.schema().dims), 0.0f);
  trajectory_.assign(db.schema().trajectory_offsets.size(), RootSample{});
  query_trajectory_ = trajectory_;
  history_.assign(kHistoryCapacity, RootSample{position, quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)})});
  history_time_.assign(kHistoryCapacity, 0.0);
  history_next_ = 0;
  clock_ = 0.0;
  result_.assign(1, SearchResult{});
  search_scratch_ = search.make_scratch();

  sim_ = SimulatedRoot{};
  sim_.position = on_ground(position);
  sim_.rotation = history_[0].rotation;
  previous_desired_rotation_ = sim_.rotation;
  previous_desired_velocity_ = desired_velocity_ = Vec3{};
  frame_time_ = db.ranges()[0].start;
  frame_ = db.ranges()[0].start;
  range_ = 0;
  end_zone_searched_ = false;
  time_since_search_ = settings.search_interval;
  sample_database(frame_time_);
  out_positions_ = sample_positions_;
  out_rotations_ = sample_rotations_;
  out_positions_[0] = sim_.position;
  out_rotations_[0] = sim_.rotation;
  animated_rotations_ = out_rotations_;
  forward_kinematics(db.skeleton().parents.data(), joints_, out_positions_.data(), out_rotations_.data(),
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

GamepadInput DatabaseCharacter::sanitize(const GamepadInput& input) {
  GamepadInput in = input;
  int& n = stats_.sanitized_inputs;
  in.left_x = finite_or_zero(in.left_x, n);
  in.left_y = finite_or_zero(in.left_y, n);
  in.right_x = finite_or_zero(in.right_x, n);
  in.right_y = finite_or_zero(in.right_y, n);
  in.camera_azimuth = finite_or_zero(in.camera_azimuth, n);
  in.gait = finite_or_zero(in.gait, n);
  return in;
}

float DatabaseCharacter::sanitize_dt(float dt) {
  if (dt > 0.0f && dt <= kMaxDt) return dt;
  ++stats_.clamped_dt;
  return dt > kMaxDt ? kMaxDt : 1e-4f;  // NaN and non-positive steps become a tiny step
}

void DatabaseCharacter::update(const GamepadInput& raw_input, float raw_dt) {
  const float dt = sanitize_dt(raw_dt);
  const GamepadInput input = sanitize(raw_input);
  ++stats_.updates;
  clock_ += dt;
  desired_velocity_ = lmm::desired_velocity(input, sim_.rotation, settings_.controller);
  const Quat wanted_rotation = desired_rotation(input, previous_desired_rotation_, desired_velocity_);
  sim_.update(desired_velocity_, wanted_rotation, settings_.controller, dt);
  const Vec3 lead = on_ground(sim_.position - out_positions_[0]);
  if (length(lead) > settings_.max_simulation_distance) {
    sim_.position = on_ground(out_positions_[0]) + normalize(lead) * settings_.max_simulation_distance;
  }
  predict_trajectory(desired_velocity_, wanted_rotation);

  const int stop = db_->ranges()[size_t(range_)].stop;
  const bool at_clip_end = frame_ >= stop - 1;
  // Entering the clip's excluded end zone searches at once (only the current frame can keep
  // playing from there); the last frame must leave.
  const bool entering_end_zone = frame_ >= stop - settings_.search.ignore_range_end && !end_zone_searched_;
  if (should_search(dt, desired_velocity_, wanted_rotation) || at_clip_end || entering_end_zone) {
    search_and_transition(at_clip_end);
    end_zone_searched_ = frame_ >= db_->ranges()[size_t(range_)].stop - settings_.search.ignore_range_end;
  }
  previous_desired_velocity_ = desired_velocity_;
  previous_desired_rotation_ = wanted_rotation;

  advance_playback(dt);
  sample_database(frame_time_);
  apply_inertialization(dt);
  integrate_root(dt);
  forward_kinematics(db_->skeleton().parents.data(), joints_, out_positions_.data(), out_rotations_.data(),
                     global_positions_.data(), global_rotations_.data());
  animated_rotations_ = out_rotations_;  // the pose before IK: what transitions blend from
  if (settings_.foot_lock) apply_foot_lock(dt);
  record_history();
}

bool DatabaseCharacter::should_search(float dt, Vec3 wanted_velocity, Quat wanted_rotation) {
  time_since_search_ += dt;
  const float rotation_change = length(to_scaled_angle_axis(wanted_rotation * inverse(previous_desired_rotation_)));
  return time_since_search_ >= settings_.search_interval ||
         length(wanted_velocity - previous_desired_velocity_) > settings_.force_search_velocity ||
         rotation_change > settings_.force_search_rotation;
}

void DatabaseCharacter::predict_trajectory(Vec3 wanted_velocity, Quat wanted_rotation) {
  const std::vector<int>& offsets = db_->schema().trajectory_offsets;
  for (size_t s = 0; s < offsets.size(); ++s) {
    const float seconds = float(offsets[s]) / db_->fps();
    if (seconds >= 0.0f) {
      const SimulatedRoot future = sim_.predict(wanted_velocity, wanted_rotation, settings_.controller, seconds);
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

void DatabaseCharacter::build_query() {
  // Trajectory relative to the character, re-expressed in the database frame's root so that
  // the pose part is exactly the database's own features of the current frame.
  const Vec3 c_pos = out_positions_[0], d_pos = db_->positions(frame_)[0];
  const Quat c_rot = out_rotations_[0], d_rot = db_->rotations(frame_)[0];
  for (size_t s = 0; s < trajectory_.size(); ++s) {
    const Vec3 rel = inverse_rotate(c_rot, trajectory_[s].position - c_pos);
    query_trajectory_[s] = RootSample{d_pos + rotate(d_rot, rel), d_rot * (inverse(c_rot) * trajectory_[s].rotation)};
  }
  features_from_local_pose(db_->schema(), db_->skeleton().parents.data(), joints_, db_->positions(frame_),
                           db_->rotations(frame_), db_->velocities(frame_), db_->angular_velocities(frame_),
                           query_trajectory_.data(), scratch_, query_.data());
  normalize_features(query_.data(), db_->feature_offset(), db_->feature_scale(), db_->schema().dims);
}

void DatabaseCharacter::search_and_transition(bool must_leave) {
  build_query();
  ++stats_.searches;
  time_since_search_ = 0.0f;
  const int found = search_->search(query_.data(), must_leave ? -1 : frame_, settings_.search, result_.data(), 1,
                                   search_scratch_);
  if (found > 0 && result_[0].frame != frame_) {
    start_transition(result_[0].frame);
    ++stats_.transitions;
  }
}

void DatabaseCharacter::start_transition(int frame) {
  // Root: the velocity difference in character space, decayed later.
  const Vec3 old_root_velocity = inverse_rotate(out_rotations_[0], out_velocities_[0]);
  const Vec3 old_root_angular = inverse_rotate(out_rotations_[0], out_angular_[0]);
  range_ = range_of(*db_, frame);
  frame_time_ = frame;
  sample_database(frame_time_);
  const Quat d_rot = sample_rotations_[0];
  offset_positions_[0] = old_root_velocity - inverse_rotate(d_rot, sample_velocities_[0]);
  offset_rotations_[0] = old_root_angular - inverse_rotate(d_rot, sample_angular_[0]);
  offset_velocities_[0] = offset_angular_[0] = Vec3{};
  for (int j = 1; j < joints_; ++j) {
    offset_positions_[size_t(j)] = out_positions_[size_t(j)] - sample_positions_[size_t(j)];
    offset_velocities_[size_t(j)] = out_velocities_[size_t(j)] - sample_velocities_[size_t(j)];
    offset_rotations_[size_t(j)] =
        to_scaled_angle_axis(animated_rotations_[size_t(j)] * inverse(sample_rotations_[size_t(j)]));
    offset_angular_[size_t(j)] = out_angular_[size_t(j)] - sample_angular_[size_t(j)];
  }
}

void DatabaseCharacter::sample_database(double frame_time) {
  const DatabaseRange& range = db_->ranges()[size_t(range_)];
  frame_ = std::clamp(static_cast<int>(std::floor(frame_time)), range.start, range.stop - 1);
  const int next = std::min(frame_ + 1, range.stop - 1);
  const float a = static_cast<float>(std::clamp(frame_time - frame_, 0.0, 1.0));
  for (int j = 0; j < joints_; ++j) {
    const size_t i = size_t(j);
    sample_positions_[i] = lerp(db_->positions(frame_)[j], db_->positions(next)[j], a);
    sample_rotations_[i] = slerp(db_->rotations(frame_)[j], db_->rotations(next)[j], a);
    sample_velocities_[i] = lerp(db_->velocities(frame_)[j], db_->velocities(next)[j], a);
    sample_angular_[i] = lerp(db_->angular_velocities(frame_)[j], db_->angular_velocities(next)[j], a);
  }
}

void DatabaseCharacter::advance_playback(float dt) {
  const DatabaseRange& range = db_->ranges()[size_t(range_)];
  frame_time_ = std::min(frame_time_ + double(dt) * db_->fps(), double(range.stop - 1));
}

void DatabaseCharacter::apply_inertialization(float dt) {
  const float halflife = settings_.inertialization_halflife;
  for (int j = 0; j < joints_; ++j) {
    const size_t i = size_t(j);
    spring_decay(offset_positions_[i], offset_velocities_[i], halflife, dt);
    spring_decay(offset_rotations_[i], offset_angular_[i], halflife, dt);
    if (j == 0) continue;  // the root is integrated from velocities
    out_positions_[i] = sample_positions_[i] + offset_positions_[i];
    out_rotations_[i] = from_scaled_angle_axis(offset_rotations_[i]) * sample_rotations_[i];
    out_velocities_[i] = sample_velocities_[i] + offset_velocities_[i];
    out_angular_[i] = sample_angular_[i] + offset_angular_[i];
  }
}

void DatabaseCharacter::integrate_root(float dt) {
  const Quat d_rot = sample_rotations_[0];
  const Vec3 local_velocity = inverse_rotate(d_rot, sample_velocities_[0]) + offset_positions_[0];
  const Vec3 local_angular = inverse_rotate(d_rot, sample_angular_[0]) + offset_rotations_[0];
  Quat rotation = out_rotations_[0];
  const Vec3 velocity = rotate(rotation, local_velocity), angular = rotate(rotation, local_angular);
  Vec3 position = out_positions_[0] + velocity * dt;
  rotation = normalize(from_scaled_angle_axis(angular * dt) * rotation);
  if (settings_.adjust_to_simulation) {
    const float blend = 1.0f - std::exp(-dt * 0.69314718f / settings_.adjustment_halflife);
    Vec3 step = on_ground(sim_.position - position) * blend;
    const float max_step = settings_.adjustment_max_ratio * length(velocity) * dt;
    if (length(step) > max_step) step = normalize(step) * max_step;
    position = position + step;
    Vec3 turn = to_scaled_angle_axis(sim_.rotation * inverse(rotation)) * blend;
    const float max_turn = settings_.adjustment_max_ratio * (length(angular) + length(velocity)) * dt;
    if (length(turn) > max_turn) turn = normalize(turn) * max_turn;
    rotation = normalize(from_scaled_angle_axis(turn) * rotation);
  }
  out_positions_[0] = position;
  out_rotations_[0] = rotation;
  out_velocities_[0] = velocity;
  out_angular_[0] = angular;
}

void DatabaseCharacter::apply_foot_lock(float dt) {
  const Vec3 forward = rotate(out_rotations_[0], Vec3{0, 0, 1});
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
    two_joint_ik(chain, chain.ankle + foot.offset, forward, out_rotations_[size_t(foot.hip)],
                 out_rotations_[size_t(foot.knee)], out_rotations_[size_t(foot.ankle)]);
    // Refresh the global pose before the next foot (chains may share joints).
    forward_kinematics(db_->skeleton().parents.data(), joints_, out_positions_.data(), out_rotations_.data(),
                       global_positions_.data(), global_rotations_.data());
  }
}

void DatabaseCharacter::record_history() {
  history_[size_t(history_next_)] = RootSample{on_ground(out_positions_[0]), out_rotations_[0]};
  history_time_[size_t(history_next_)] = clock_;
  history_next_ = (history_next_ + 1) % kHistoryCapacity;
}

}  // namespace lmm
