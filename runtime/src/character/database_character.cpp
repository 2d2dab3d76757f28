#include "lmm/character/database_character.hpp"

#include <algorithm>
#include <cmath>

namespace lmm {
bool DatabaseCharacter::init(std::shared_ptr<const Database> database, const FeatureSearch& search,
                             const CharacterSettings& settings, Vec3 position, float heading, std::string& error) {
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
    error = "feature schema mismatch: controller expects '" + settings.expected_schema + "', database has '" +
            db.schema().name + "'";
    return false;
  }
  if (db.schema().trajectory_offsets.empty()) {
    error = "feature schema '" + db.schema().name + "' has no trajectory groups to steer with";
    return false;
  }
  db_ = database;
  search_ = &search;
  settings_ = settings;
  if (settings.speeds_from_data) db.speeds().apply(settings_.controller);
  resize_output(db.joint_count());
  query_.assign(size_t(db.schema().dims), 0.0f);
  search_scratch_ = search.make_scratch();
  feet_.init(db.skeleton().parents, db.contact_joints());
  start(position, heading);
  return true;
}

void DatabaseCharacter::reset(Vec3 position, float heading) { start(position, heading); }

void DatabaseCharacter::start(Vec3 position, float heading) {
  const Database& db = *db_;
  stats_ = CharacterStats{};
  const Quat facing = quat_from_heading(Vec3{std::sin(heading), 0, std::cos(heading)});
  steering_.init(settings_, db.schema().trajectory_offsets, db.fps(), position, facing);
  playback_.init(db_, db.ranges()[0].start);
  end_zone_searched_ = false;
  constraint_changed_ = !settings_.search.constraint.allows_all();
  constraint_unmet_ = false;
  out_ = playback_.sample();
  out_.positions[0] = steering_.simulation().position;
  out_.rotations[0] = facing;
  animated_rotations_ = out_.rotations;
  update_globals(db.skeleton().parents);
  feet_.release_all();
  begin_root_motion();
  end_root_motion();
}

void DatabaseCharacter::update(const GamepadInput& input, float raw_dt) {
  begin_root_motion();
  const float dt = steering_.begin_update(input, raw_dt, out_.positions[0], stats_);
  const int frame = playback_.frame(), stop = playback_.clip_stop();
  const bool at_clip_end = frame >= stop - 1;
  // Entering the clip's excluded end zone searches at once (only the current frame can keep
  // playing from there); the last frame must leave.
  const bool entering_end_zone = frame >= stop - settings_.search.ignore_range_end && !end_zone_searched_;
  // Frames the constraint does not allow are left before they are played (once per regular
  // search while no allowed frame exists).
  const bool leaving = (!constraint_unmet_ || steering_.search_due()) && leaving_constraint(dt);
  if (constraint_changed_ || leaving) ++stats_.constraint_searches;
  if (steering_.search_due() || at_clip_end || entering_end_zone || constraint_changed_ || leaving) {
    constraint_changed_ = false;
    search_and_transition(at_clip_end || leaving);
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
  end_root_motion();
}

void DatabaseCharacter::search_and_transition(bool must_leave) {
  // The query: the playing frame's own features with the trajectory the controller predicts.
  const int frame = playback_.frame();
  QueryJob query = query_job_for(*db_);
  query.pose_features = Span<const float>(db_->features(frame), query_.size());
  query.root = RootSample{on_ground(out_.positions[0]), out_.rotations[0]};
  query.trajectory = steering_.trajectory();
  query.query = query_;
  query.run();
  steering_.searched(stats_);
  const SearchMatchJob match{search_, query_, must_leave ? -1 : frame, settings_.search, &search_scratch_, &result_};
  const bool found = match.run();
  constraint_unmet_ = !found && !settings_.search.constraint.allows_all();
  stats_.unsatisfied_searches += constraint_unmet_;
  if (found && result_.frame != frame) {
    playback_.jump(result_.frame, out_, animated_rotations_);
    ++stats_.transitions;
  }
}

void DatabaseCharacter::set_constraint(const TagConstraint& constraint) {
  settings_.search.constraint = constraint;
  constraint_changed_ = true;
  constraint_unmet_ = false;
}

bool DatabaseCharacter::leaving_constraint(float dt) const {
  const TagConstraint& constraint = settings_.search.constraint;
  if (constraint.allows_all()) return false;
  const int frame = playback_.frame(), steps = static_cast<int>(std::ceil(dt * db_->fps())) + 1;
  for (int f = frame; f <= std::min(frame + steps, playback_.clip_stop() - 1); ++f) {
    if (!constraint.allows(db_->annotations().tags(f))) return true;
  }
  return false;
}

void DatabaseCharacter::played_trajectory(Vec3* positions, Vec3* directions) const {
  trajectory_of_features(db_->schema(), db_->features(current_frame()), db_->feature_offset(), db_->feature_scale(),
                         positions, directions);
}

}  // namespace lmm
