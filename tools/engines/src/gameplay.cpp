#include "lmm/engines/gameplay.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "lmm/asset/skeleton.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/core/springs.hpp"

namespace lmm::pipeline {
namespace {

constexpr double kRadToDeg = 57.29577951308232;

// The mask of `names` ("none" or "": 0); throws InputError naming `where` for an unknown tag.
TagMask mask_of(const FrameAnnotations& a, const std::string& names, const std::string& where) {
  TagMask mask = 0;
  std::string error;
  if (names != "none" && !a.tag_mask(names, mask, error)) throw InputError(where + ": " + error);
  return mask;
}

// The last frame of the run of frames holding every tag of `tags` that `first` starts.
int run_last(const Database& db, int first, TagMask tags) {
  const int stop = db.ranges()[size_t(clip_index(db, first))].stop;
  int last = first;
  while (last + 1 < stop && (db.annotations().tags(last + 1) & tags) == tags) ++last;
  return last;
}

// The fastest joint (m/s) between two global poses dt apart (0 when `previous` is empty).
double fastest_joint(const std::vector<Vec3>& previous, const std::vector<Vec3>& global, float dt) {
  double fastest = 0.0;
  for (size_t j = 0; j < previous.size() && j < global.size(); ++j) {
    fastest = std::max(fastest, double(length(global[j] - previous[j])) / dt);
  }
  return fastest;
}

// `global` (joint 0 the root) relative to its root's position and heading.
std::vector<Vec3> root_relative(std::vector<Vec3> global, Quat root_rotation) {
  const Vec3 root = global.empty() ? Vec3{} : global[0];
  const Quat heading = heading_of(root_rotation);
  for (Vec3& p : global) p = inverse_rotate(heading, p - root);
  return global;
}

// The largest distance between matching joints of two poses.
double largest_distance(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  double largest = 0.0;
  for (size_t j = 0; j < a.size() && j < b.size(); ++j) largest = std::max(largest, double(length(a[j] - b[j])));
  return largest;
}

}  // namespace

GameplayCommand random_constraint_command(const Database& db, uint32_t seed) {
  std::vector<int> used;  // tags some frame has
  TagMask present = 0;
  for (int f = 0; f < db.frame_count(); ++f) present |= db.annotations().tags(f);
  for (int t = 0; t < kMaxTags; ++t) {
    if (present & (TagMask(1) << t)) used.push_back(t);
  }
  GameplayCommand c;
  c.sets_constraint = true;
  if (used.empty()) return c;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const auto pick = [&] { return db.annotations().tag_names()[size_t(used[size_t(rng() % used.size())])]; };
  const float kind = unit(rng);
  if (kind < 0.3f) {
    c.require = pick();
  } else if (kind < 0.6f) {
    c.exclude = pick();
  } else if (kind < 0.8f) {
    c.require_any = pick() + "," + pick();
  }
  return c;
}

JsonObject GameplayMetrics::json() const {
  JsonObject tags, names;
  for (const auto& [tag, seconds] : tag_seconds) tags.number(tag, seconds);
  for (const auto& [name, count] : events) names.number(name, double(count));
  std::vector<JsonObject> played;
  for (const ActionRecord& a : actions) {
    played.push_back(JsonObject()
                         .text("tags", a.tags)
                         .number("first_frame", a.first)
                         .number("last_frame", a.last)
                         .number("run_last_frame", a.run_last)
                         .boolean("in_order", a.in_order)
                         .boolean("ended", a.ended)
                         .number("resume_s", a.resume_s)
                         .number("max_joint_speed_m_s", a.max_joint_speed_m_s)
                         .number("entered_joint_speed_m_s", a.entered_joint_speed_m_s)
                         .number("before_joint_speed_m_s", a.before_joint_speed_m_s)
                         .number("clip_joint_speed_m_s", a.clip_joint_speed_m_s)
                         .number("pose_offset_m", a.pose_offset_m)
                         .number("jump_bound_m_s", a.jump_bound_m_s));
  }
  long total = action_ends;
  for (const auto& e : events) total += e.second;
  const double standing = double(idle_standing_updates);
  return JsonObject()
      .object("tag_seconds", tags)
      .number("constraint_violations", double(constraint_violations))
      .number("forbidden_entries", double(forbidden_entries))
      .number("unsatisfied_searches", double(unsatisfied_searches))
      .number("constraint_searches", double(constraint_searches))
      .object("events", names)
      .number("events_total", double(total))
      .number("action_ends", double(action_ends))
      .number("event_mismatches", double(event_mismatches))
      .number("idle_updates", double(idle_updates))
      .number("idle_standing_share", idle_updates ? standing / double(idle_updates) : NAN)
      .number("idle_foot_speed_cm_s", idle_standing_updates ? idle_foot_speed_sum_cm_s / standing : NAN)
      .number("idle_root_turn_deg_s", idle_standing_updates ? idle_root_turn_sum_deg_s / standing : NAN)
      .number("resume_count", double(resume_s.size()))
      .number("resume_s_max", resume_s.empty() ? NAN : *std::max_element(resume_s.begin(), resume_s.end()))
      .number("resume_s_median", resume_s.empty() ? NAN : median(resume_s))
      .objects("actions", played)
      .number("max_joint_speed_m_s", max_joint_speed_m_s);
}

GameplayRecorder::GameplayRecorder(const FeatureSearch& search, float dt, float halflife)
    : search_(search), db_(*search.database()), dt_(dt), halflife_(halflife) {
  const FrameAnnotations& a = db_.annotations();
  tag_seconds_.assign(a.tag_names().size(), 0.0);
  event_counts_.assign(a.event_names().size(), 0);
  events_.resize(256);
  standing_ = a.known_tags("standing");
  m_.measured = !a.tag_names().empty() || !a.events().empty() || a.restricts_search();
}

void GameplayRecorder::apply(DatabaseCharacter& character, const GameplayCommand& command, const std::string& where) {
  const FrameAnnotations& a = db_.annotations();
  if (!command.state.empty() && !character.set_state(command.state)) {
    throw InputError(where + ": unknown state '" + command.state + "' (define it in the controller config's "
                     "[states." + command.state + "])");
  }
  unsatisfied_since_change_ = unsatisfied_since_change_ && command.state.empty() && !command.sets_constraint;
  if (command.sets_constraint) {
    character.set_constraint(TagConstraint{mask_of(a, command.require, where), mask_of(a, command.require_any, where),
                                           mask_of(a, command.exclude, where)});
  }
  if (command.action == "cancel") {
    character.cancel_action();
  } else if (!command.action.empty()) {
    const TagMask tags = mask_of(a, command.action, where);
    const ActionSettings settings{command.in_place ? ActionRoot::InPlace : ActionRoot::Animated, false};
    if (!character.play_action(tags, settings)) {
      throw InputError(where + ": no frame holds every tag of action '" + command.action + "'");
    }
    ActionRecord record;
    record.tags = command.action;
    record.first = record.last = character.current_frame();
    record.run_last = run_last(db_, record.first, tags);
    bound_pose_jump(character, record);
    m_.actions.push_back(record);
    action_start_ = true;
  }
}

void GameplayRecorder::record(const DatabaseCharacter& character, float stick, float time, int before,
                              int transitions_before, const std::vector<Vec3>& previous_global) {
  const double joint_speed = fastest_joint(previous_global, character.global_positions(), dt_);
  m_.max_joint_speed_m_s = std::max(m_.max_joint_speed_m_s, joint_speed);
  recent_joint_speeds_.push_back(joint_speed);
  while (double(recent_joint_speeds_.size()) * dt_ > 0.5) recent_joint_speeds_.pop_front();
  const bool transitioned = character.stats().transitions != transitions_before;
  record_tags(character);
  const bool ended = record_events(character, before, transitioned);
  record_constraint(character, transitioned, character.action_playing() || ended || action_start_);
  record_idle(character, stick, time, previous_global);
  record_action(character, time, ended, joint_speed);
  action_start_ = false;
}

void GameplayRecorder::record_tags(const DatabaseCharacter& character) {
  const TagMask tags = character.current_tags();
  for (size_t t = 0; t < tag_seconds_.size(); ++t) {
    if (tags & (TagMask(1) << t)) tag_seconds_[t] += dt_;
  }
}

void GameplayRecorder::record_constraint(const DatabaseCharacter& character, bool transitioned, bool action_update) {
  if (character.stats().unsatisfied_searches != unsatisfied_seen_) {
    unsatisfied_seen_ = character.stats().unsatisfied_searches;
    unsatisfied_since_change_ = true;
  }
  if (!action_update && !unsatisfied_since_change_ && !character.constraint_held()) ++m_.constraint_violations;
  if (transitioned && !action_start_ && !search_.entry_allowed(character.last_entry_frame(), character.constraint())) {
    ++m_.forbidden_entries;
  }
}

bool GameplayRecorder::record_events(const DatabaseCharacter& character, int before, bool transitioned) {
  const int count = std::min(character.events(events_.data(), int(events_.size())), int(events_.size()));
  bool ended = false;
  std::vector<DatabaseEvent> reported;
  for (int i = 0; i < count; ++i) {
    const CharacterEvent& e = events_[size_t(i)];
    if (e.name == kActionEndEvent) {
      ++m_.action_ends;
      ended = true;
      continue;
    }
    ++event_counts_[size_t(e.name)];
    reported.push_back(DatabaseEvent{e.frame, e.name});
  }
  if (transitioned || action_start_) return ended;
  // Without a transition the update played the frames after `before` up to the current one
  // (the database's events are in frame order).
  const std::vector<DatabaseEvent>& all = db_.annotations().events();
  const auto first = std::upper_bound(all.begin(), all.end(), before,
                                      [](int frame, const DatabaseEvent& e) { return frame < e.frame; });
  const auto last = std::upper_bound(first, all.end(), character.current_frame(),
                                     [](int frame, const DatabaseEvent& e) { return frame < e.frame; });
  const auto same = [](const DatabaseEvent& a, const DatabaseEvent& b) { return a.frame == b.frame && a.name == b.name; };
  if (!std::equal(first, last, reported.begin(), reported.end(), same)) ++m_.event_mismatches;
  return ended;
}

void GameplayRecorder::record_idle(const DatabaseCharacter& character, float stick, float time,
                                   const std::vector<Vec3>& previous) {
  const bool settled = released_since_ >= 0.0f && time - released_since_ >= kIdleSettleSeconds;
  if (stick >= kReleasedStick) {
    if (settled) pushed_at_ = time;
    released_since_ = -1.0f;
  } else if (released_since_ < 0.0f) {
    released_since_ = time;
  }
  if (pushed_at_ >= 0.0f && length(on_ground(character.root_velocity())) >= kResumeSpeed) {
    m_.resume_s.push_back(time - pushed_at_);
    pushed_at_ = -1.0f;
  }
  if (!settled || stick >= kReleasedStick || character.action_playing()) return;
  ++m_.idle_updates;
  if (!(character.current_tags() & standing_) || previous.empty()) return;
  ++m_.idle_standing_updates;
  double foot = 0.0;
  for (int joint : db_.contact_joints()) {
    foot += 100.0 * length(on_ground(character.global_positions()[size_t(joint)] - previous[size_t(joint)])) / dt_;
  }
  m_.idle_foot_speed_sum_cm_s += db_.contact_joints().empty() ? 0.0 : foot / double(db_.contact_joints().size());
  m_.idle_root_turn_sum_deg_s += std::fabs(character.root_angular_velocity().y) * kRadToDeg;
}

void GameplayRecorder::record_action(const DatabaseCharacter& character, float time, bool ended, double joint_speed) {
  if (m_.actions.empty()) return;
  ActionRecord& a = m_.actions.back();
  if (character.action_playing() || ended) {
    const int frame = character.current_frame();
    a.in_order = a.in_order && frame >= a.last && clip_index(db_, frame) == clip_index(db_, a.first);
    a.last = frame;
    a.max_joint_speed_m_s = std::max(a.max_joint_speed_m_s, joint_speed);
    a.entered_joint_speed_m_s = std::max(a.entered_joint_speed_m_s, joint_speed);
  }
  if (ended) {
    a.ended = true;
    action_end_time_ = time;
    return;
  }
  if (action_end_time_ < 0.0f) return;
  if (time - action_end_time_ <= 0.5f) a.max_joint_speed_m_s = std::max(a.max_joint_speed_m_s, joint_speed);
  if (a.resume_s < 0.0 && length(on_ground(character.root_velocity())) >= kResumeSpeed) {
    a.resume_s = time - action_end_time_;
  }
  if (a.resume_s >= 0.0 && time - action_end_time_ > 0.5f) action_end_time_ = -1.0f;
}

void GameplayRecorder::finish(const DatabaseCharacter& character, GameplayMetrics& metrics) {
  const FrameAnnotations& a = db_.annotations();
  metrics.measured = metrics.measured || m_.measured;
  metrics.tag_seconds.resize(tag_seconds_.size());
  for (size_t t = 0; t < tag_seconds_.size(); ++t) {
    metrics.tag_seconds[t].first = a.tag_names()[t];
    metrics.tag_seconds[t].second += tag_seconds_[t];
  }
  metrics.events.resize(event_counts_.size());
  for (size_t e = 0; e < event_counts_.size(); ++e) {
    metrics.events[e].first = a.event_names()[e];
    metrics.events[e].second += event_counts_[e];
  }
  metrics.constraint_violations += m_.constraint_violations;
  metrics.forbidden_entries += m_.forbidden_entries;
  metrics.unsatisfied_searches += character.stats().unsatisfied_searches;
  metrics.constraint_searches += character.stats().constraint_searches;
  metrics.action_ends += m_.action_ends;
  metrics.event_mismatches += m_.event_mismatches;
  metrics.idle_updates += m_.idle_updates;
  metrics.idle_standing_updates += m_.idle_standing_updates;
  metrics.idle_foot_speed_sum_cm_s += m_.idle_foot_speed_sum_cm_s;
  metrics.idle_root_turn_sum_deg_s += m_.idle_root_turn_sum_deg_s;
  metrics.resume_s.insert(metrics.resume_s.end(), m_.resume_s.begin(), m_.resume_s.end());
  metrics.actions.insert(metrics.actions.end(), m_.actions.begin(), m_.actions.end());
  metrics.max_joint_speed_m_s = std::max(metrics.max_joint_speed_m_s, m_.max_joint_speed_m_s);
}

void GameplayRecorder::bound_pose_jump(const DatabaseCharacter& character, ActionRecord& a) const {
  // The pose played so far (not yet updated) against the action's first frame.
  a.pose_offset_m = largest_distance(root_relative(character.global_positions(), character.global_rotations().at(0)),
                                     frame_pose(a.first));
  a.before_joint_speed_m_s =
      recent_joint_speeds_.empty() ? 0.0 : *std::max_element(recent_joint_speeds_.begin(), recent_joint_speeds_.end());
  a.clip_joint_speed_m_s = clip_joint_speed(a.first, a.run_last);
  a.jump_bound_m_s = a.before_joint_speed_m_s + 2.0 * a.clip_joint_speed_m_s +
                     double(spring_y(halflife_)) * a.pose_offset_m / std::exp(1.0);
}

void GameplayRecorder::frame_globals(int frame, std::vector<Vec3>& positions, std::vector<Quat>& rotations) const {
  positions.resize(size_t(db_.joint_count()));
  rotations.resize(size_t(db_.joint_count()));
  forward_kinematics(db_.skeleton().parents.data(), db_.joint_count(), db_.positions(frame), db_.rotations(frame),
                     positions.data(), rotations.data());
}

std::vector<Vec3> GameplayRecorder::frame_pose(int frame) const {
  std::vector<Vec3> positions;
  std::vector<Quat> rotations;
  frame_globals(frame, positions, rotations);
  return root_relative(positions, rotations.at(0));
}

double GameplayRecorder::clip_joint_speed(int first, int last) const {
  double fastest = 0.0;
  std::vector<Vec3> previous, next;
  std::vector<Quat> rotations;
  frame_globals(first, previous, rotations);
  for (int f = first + 1; f <= last; ++f) {  // in the clip's own space: its root motion counts
    frame_globals(f, next, rotations);
    fastest = std::max(fastest, fastest_joint(previous, next, 1.0f / db_.fps()));
    std::swap(previous, next);
  }
  return fastest;
}

}  // namespace lmm::pipeline
