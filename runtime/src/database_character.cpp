#include "lmm/database_character.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/ik.hpp"
#include "lmm/skeleton.hpp"
#include "lmm/springs.hpp"

namespace lmm {
bool DatabaseCharacter::init(std::shared_ptr<const Database> database, const FeatureSearch& search,
                             const CharacterSettings& settings, Vec3 position, float heading,
                             std::string& error) {
  if (database == nullptr) {
    error = "no database (null pointer)";
    return false;
  }
  const Database& db = *database;
  if (db.frame_count() == 0) {
    error = "database has no frames";
    return false;
  }
  if (search.database() != database) {
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
  db_ = database;
  search_ = &search;
  settings_ = settings;
  stats_ = CharacterStats{};
  joints_ = db.joint_count();
  resize_output(joints_);
  animated_rotations_.assign(size_t(joints_), Quat{});
  scratch_.resize(joints_);
  query_.assign(size_t(db.schema().dims), 0.0f);
  query_trajectory_.assign(db.schema().trajectory_offsets.size(), RootSample{});
  result_.assign(1, SearchResult{});
  search_scratch_ = search.make_scratch();
  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)});
  steering_.init(settings, db.schema().trajectory_offsets, db.fps(), position, facing);

  playback_.init(database, db.ranges()[0].start);
  end_zone_searched_ = false;
  out_ = playback_.sample();
  out_.positions[0] = steering_.simulation().position;
  out_.rotations[0] = facing;
  animated_rotations_ = out_.rotations;
  update_globals(db.skeleton().parents);

  feet_.init(db.skeleton().parents, db.contact_joints());
  return true;
}

void DatabaseCharacter::update(const GamepadInput& input, float raw_dt) {
  const float dt = steering_.begin_update(input, raw_dt, out_.positions[0], stats_);
  const int frame = playback_.frame(), stop = playback_.clip_stop();
  const bool at_clip_end = frame >= stop - 1;
  // Entering the clip's excluded end zone searches at once (only the current frame can keep
  // playing from there); the last frame must leave.
  const bool entering_end_zone = frame >= stop - settings_.search.ignore_range_end && !end_zone_searched_;
  if (steering_.search_due() || at_clip_end || entering_end_zone) {
    search_and_transition(at_clip_end);
    end_zone_searched_ = playback_.frame() >= playback_.clip_stop() - settings_.search.ignore_range_end;
  }
  playback_.advance(dt, settings_.inertialization_halflife, out_);
  steering_.integrate_root(playback_.local_root_velocity(), playback_.local_root_angular(), dt, out_.positions[0],
                           out_.rotations[0], out_.velocities[0], out_.angular[0]);
  update_globals(db_->skeleton().parents);
  animated_rotations_ = out_.rotations;  // the pose before IK: what transitions blend from
  if (settings_.foot_lock) {
    feet_.apply(db_->contacts(playback_.frame()), settings_.foot_unlock_distance, settings_.foot_blend_halflife, dt,
                db_->skeleton().parents, out_, global_positions_, global_rotations_);
  }
  steering_.end_update(out_.positions[0], out_.rotations[0]);
}

void DatabaseCharacter::build_query() {
  // Trajectory relative to the character, re-expressed in the database frame's root so that
  // the pose part is exactly the database's own features of the current frame.
  const int frame = playback_.frame();
  const Vec3 c_pos = out_.positions[0], d_pos = db_->positions(frame)[0];
  const Quat c_rot = out_.rotations[0], d_rot = db_->rotations(frame)[0];
  const std::vector<RootSample>& trajectory = steering_.trajectory();
  for (size_t s = 0; s < trajectory.size(); ++s) {
    const Vec3 rel = inverse_rotate(c_rot, trajectory[s].position - c_pos);
    query_trajectory_[s] = RootSample{d_pos + rotate(d_rot, rel), d_rot * (inverse(c_rot) * trajectory[s].rotation)};
  }
  features_from_local_pose(db_->schema(), db_->skeleton().parents.data(), joints_, db_->positions(frame),
                           db_->rotations(frame), db_->velocities(frame), db_->angular_velocities(frame),
                           query_trajectory_.data(), scratch_, query_.data());
  normalize_features(query_.data(), db_->feature_offset(), db_->feature_scale(), db_->schema().dims);
}

void DatabaseCharacter::search_and_transition(bool must_leave) {
  build_query();
  steering_.searched(stats_);
  const int frame = playback_.frame();
  const int found = search_->search(query_.data(), must_leave ? -1 : frame, settings_.search, result_.data(), 1,
                                   search_scratch_);
  if (found > 0 && result_[0].frame != frame) {
    playback_.jump(result_[0].frame, out_, animated_rotations_);
    ++stats_.transitions;
  }
}

}  // namespace lmm
