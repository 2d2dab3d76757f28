#include "lmm/character/database_character.hpp"

#include <algorithm>
#include <cmath>

namespace lmm {
namespace {

// Whether some frame of `db` has every tag `constraint` requires (not 0) and none it excludes.
bool any_frame_allowed(const Database& db, const TagConstraint& constraint) {
  for (int f = 0; constraint.require_all != 0 && f < db.frame_count(); ++f) {
    if (constraint.allows(db.annotations().tags(f))) return true;
  }
  return false;
}

}  // namespace

bool DatabaseCharacter::init(std::shared_ptr<const Database> database, const FeatureSearch& search,
                             const CharacterSettings& settings, Vec3 position, float heading, std::string& error) {
  if (!search.steers(database, "to steer with", error)) return false;
  const Database& db = *database;
  if (!settings.expected_schema.empty() && settings.expected_schema != db.schema().name) {
    error = "feature schema mismatch: controller expects '" + settings.expected_schema + "', database has '" +
            db.schema().name + "'";
    return false;
  }
  db_ = database;
  search_ = &search;
  settings_ = settings;
  if (settings.speeds_from_data) db.speeds().apply(settings_.controller);
  gameplay_.init(db.annotations().tag_set(), db.annotations().kept_out_tags(), settings.idle, settings.search.constraint,
                 settings.search.transition_cost);
  if (!any_frame_allowed(db, gameplay_.idle_constraint())) gameplay_.disable_idle();  // no idle frame: idle off
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
  gameplay_.reset_idle();
  idle_unmet_ = false;
  apply_constraint();
  constraint_changed_ = !settings_.search.constraint.allows_all() || gameplay_.has_state();
  constraint_unmet_ = false;
  action_ = Action{};
  action_end_ = ActionEnd{};
  leave_pending_ = false;
  last_entry_ = -1;
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
  action_end_.begin_update();
  if (action_.active && action_.settings.interruptible &&
      length(steering_.desired_velocity()) > kActionInterruptSpeed) {
    end_action(true, 0.0f);
  }
  update_idle();
  if (!action_.active) match_if_due(dt);
  playback_.advance(dt, settings_.inertialization_halflife, out_);
  const bool in_place = action_.active && action_.settings.root == ActionRoot::InPlace;
  // Idle frames and actions drive the root themselves; idle without an idle frame to play steers.
  const bool root_driven = action_.active || (gameplay_.idle() && !idle_unmet_);
  steering_.integrate_root(in_place ? Vec3{} : playback_.local_root_velocity(),
                           in_place ? Vec3{} : playback_.local_root_angular(), dt, out_.positions[0],
                           out_.rotations[0], out_.velocities[0], out_.angular[0], !root_driven);
  update_globals(db_->skeleton().parents);
  animated_rotations_ = out_.rotations;  // the pose before IK: what transitions blend from
  if (settings_.foot_lock) {
    feet_.apply(db_->contacts(playback_.frame()), settings_.foot_unlock_distance, settings_.foot_blend_halflife, dt,
                db_->skeleton().parents, out_, global_positions_, global_rotations_);
  }
  // Meanwhile the simulated root stays on the character's (a steering root would be held moving
  // at the character's velocity, and predict that motion to the searches).
  if (root_driven) steering_.hold_at(out_.positions[0], out_.rotations[0], out_.velocities[0]);
  if (action_.active && playback_.frame() >= action_.last) end_action(true, dt);
  steering_.end_update(out_.positions[0], out_.rotations[0]);
  end_root_motion();
}

void DatabaseCharacter::match_if_due(float dt) {
  const int frame = playback_.frame(), stop = playback_.clip_stop();
  const bool at_clip_end = frame >= stop - 1;
  // Entering the clip's excluded end zone searches at once (only the current frame can keep
  // playing from there); the last frame must leave.
  const bool entering_end_zone = frame >= stop - settings_.search.ignore_range_end && !end_zone_searched_;
  // Frames the constraint does not allow are left before they are played (once per regular
  // search while no allowed frame exists).
  const bool leaving = (!constraint_unmet_ || steering_.search_due()) && playback_.leaves(active_constraint(), dt);
  if (constraint_changed_ || leaving) ++stats_.constraint_searches;
  if (steering_.search_due() || at_clip_end || entering_end_zone || constraint_changed_ || leaving || leave_pending_) {
    search_and_transition(at_clip_end || leaving || leave_pending_);
    constraint_changed_ = leave_pending_ = false;
    end_zone_searched_ = playback_.frame() >= playback_.clip_stop() - settings_.search.ignore_range_end;
  }
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
  const int current = must_leave ? -1 : frame;
  bool found = SearchMatchJob{search_, query_, current, settings_.search, &search_scratch_, &result_}.run();
  idle_unmet_ = gameplay_.idle() && !found;
  if (idle_unmet_) {  // no idle frame under the game's constraint: the game's alone
    SearchParams game = settings_.search;
    game.constraint = gameplay_.game_search_constraint();
    game.transition_cost = gameplay_.base_transition_cost();
    found = SearchMatchJob{search_, query_, current, game, &search_scratch_, &result_}.run();
  }
  constraint_unmet_ = !found && !active_constraint().allows_all();
  stats_.unsatisfied_searches += !found && !gameplay_.game_constraint().allows_all();
  if (found && result_.frame != frame) {
    feet_.restore_pelvis(out_);  // blend from the animated pose
    playback_.jump(result_.frame, out_, animated_rotations_);
    last_entry_ = result_.frame;
    ++stats_.transitions;
  }
}

bool DatabaseCharacter::play_action(int first, int last, const ActionSettings& settings) {
  const Database& db = *db_;
  if (first < 0 || last < first || last >= db.frame_count() || clip_index(db, first) != clip_index(db, last)) {
    return false;
  }
  if (action_.active) end_action(false, 0.0f);  // replaced: it ends too
  feet_.restore_pelvis(out_);
  playback_.jump(first, out_, animated_rotations_);
  last_entry_ = first;
  ++stats_.transitions;
  action_ = Action{true, last, settings};
  leave_pending_ = false;
  return true;
}

bool DatabaseCharacter::play_action(TagMask tags, const ActionSettings& settings) {
  const FrameAnnotations& a = db_->annotations();
  const auto holds = [&](int f) { return (a.tags(f) & tags) == tags; };
  int best = -1, best_last = -1;
  float best_distance = INFINITY;
  for (const DatabaseRange& r : db_->ranges()) {
    for (int f = r.start; tags != 0 && f < r.stop; ++f) {
      if (!holds(f) || (f > r.start && holds(f - 1))) continue;  // not the first frame of a run
      int last = f;
      while (last + 1 < r.stop && holds(last + 1)) ++last;
      const float distance = pose_distance(playback_.frame(), f);
      if (distance < best_distance) best = f, best_last = last, best_distance = distance;
    }
  }
  return best >= 0 && play_action(best, best_last, settings);
}

bool DatabaseCharacter::play_action(int first, int last, const ActionSettings& settings, std::string& error) {
  if (play_action(first, last, settings)) return true;
  error = "frames " + std::to_string(first) + ".." + std::to_string(last) + " are not a run of one clip (the database has " +
          std::to_string(db_->frame_count()) + " frames)";
  return false;
}

bool DatabaseCharacter::play_action(TagMask tags, const ActionSettings& settings, std::string& error) {
  if (play_action(tags, settings)) return true;
  const TagNames& names = db_->annotations().tag_set();
  error = tags == 0 ? "no tag given" : "no frame holds every tag of '" + names.names_of(tags) + "'";
  return false;
}

void DatabaseCharacter::cancel_action() {
  if (action_.active) end_action(false, 0.0f);
}

void DatabaseCharacter::end_action(bool now, float time) {
  action_.active = false;
  action_end_.mark(now, time);
  leave_pending_ = true;
}

float DatabaseCharacter::pose_distance(int a, int b) const {
  float sum = 0.0f;
  for (const FeatureGroup& g : db_->schema().groups) {
    if (is_trajectory_kind(g.kind)) continue;
    for (int d = g.first_dim; d < g.first_dim + feature_group_dims(g); ++d) {
      const float t = db_->features(a)[d] - db_->features(b)[d];
      sum += t * t;
    }
  }
  return sum;
}

int DatabaseCharacter::events(CharacterEvent* out, int capacity) const {
  const int count = playback_.events(out, capacity);
  return action_end_.report(out, count, capacity, playback_.frame());
}

void DatabaseCharacter::constraint_taken() {
  apply_constraint();
  constraint_changed_ = true;
  constraint_unmet_ = false;
}

void DatabaseCharacter::update_idle() {
  if (!gameplay_.update_idle(length(steering_.desired_velocity()), action_.active)) return;
  idle_unmet_ = false;
  constraint_taken();
}

void DatabaseCharacter::apply_constraint() {
  settings_.search.constraint = gameplay_.combined();
  settings_.search.transition_cost = gameplay_.transition_cost();
}

void DatabaseCharacter::played_trajectory(Vec3* positions, Vec3* directions) const {
  trajectory_of_features(db_->schema(), db_->features(current_frame()), db_->feature_offset(), db_->feature_scale(),
                         positions, directions);
}

}  // namespace lmm
