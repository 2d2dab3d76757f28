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

TagMask tags_present(const Database& db) {
  TagMask present = 0;
  for (int f = 0; f < db.frame_count(); ++f) present |= db.annotations().tags(f);
  return present;
}

GameplayCommand random_constraint_command(const TagNames& tags, TagMask present, uint32_t seed) {
  std::vector<int> used;  // tags some frame has
  for (int t = 0; t < kMaxTags; ++t) {
    if (present & (TagMask(1) << t)) used.push_back(t);
  }
  GameplayCommand c;
  c.sets_constraint = true;
  if (used.empty()) return c;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const auto pick = [&] { return tags.names()[size_t(used[size_t(rng() % used.size())])]; };
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

std::vector<TagConstraint> random_tag_constraints(int tags, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> tag(0, tags - 1), kind(0, 3);
  std::vector<TagConstraint> out(static_cast<size_t>(count));
  for (TagConstraint& c : out) {
    const TagMask a = TagMask(1) << tag(rng), b = TagMask(1) << tag(rng);
    switch (kind(rng)) {
      case 0: c.require_all = a; break;
      case 1: c.require_any = a | b; break;
      case 2: c.exclude = a; break;
      default: c.require_all = a, c.exclude = b & ~a; break;
    }
  }
  return out;
}

JsonObject GameplayMetrics::json() const {
  JsonObject tags, names;
  for (const auto& [tag, seconds] : tag_seconds) tags.number(tag, seconds);
  for (const auto& [name, count] : events) names.number(name, double(count));
  std::vector<JsonObject> played;
  for (const ActionRecord& a : actions) {
    played.push_back(JsonObject()
                         .text("tags", a.tags)
                         .number("seconds", a.seconds)
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
      .number("free_action_seconds", free_action_seconds)
      .number("idle_action_seconds", idle_action_seconds)
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

GameplayTally::GameplayTally(const TagNames& tags, TagMask kept_out, std::vector<std::string> event_names,
                             std::vector<int> contact_joints, float dt)
    : tags_(tags), dt_(dt), event_names_(std::move(event_names)), contact_joints_(std::move(contact_joints)),
      time_(-dt), kept_out_(kept_out) {
  tag_seconds_.assign(size_t(tags.size()), 0.0);
  event_counts_.assign(event_names_.size(), 0);
  events_.resize(256);
  standing_ = tags.known_tags("standing");
}

TagMask GameplayTally::mask_of(const std::string& names, const std::string& where) const {
  TagMask mask = 0;
  std::string error;
  if (names != "none" && !tags_.tag_mask(names, mask, error)) throw InputError(where + ": " + error);
  return mask;
}

template <typename Character>
void GameplayTally::apply_constraint(Character& character, const GameplayCommand& command, const std::string& where) {
  if (!command.state.empty() && !character.set_state(command.state)) {
    throw InputError(where + ": unknown state '" + command.state + "' (define it in the controller config's "
                     "[states." + command.state + "])");
  }
  unsatisfied_since_change_ = unsatisfied_since_change_ && command.state.empty() && !command.sets_constraint;
  if (command.sets_constraint) {
    character.set_constraint(TagConstraint{mask_of(command.require, where), mask_of(command.require_any, where),
                                           mask_of(command.exclude, where)});
  }
}

ActionRecord& GameplayTally::start_action(const std::string& tags) {
  ActionRecord record;
  record.tags = tags;
  m_.actions.push_back(record);
  action_start_ = true;
  action_start_time_ = time_ + dt_;  // the update to come starts it
  return m_.actions.back();
}

template <typename Character>
bool GameplayTally::record_common(const Character& character, float stick, float time,
                                  const std::vector<Vec3>& previous_global) {
  const double joint_speed = fastest_joint(previous_global, character.global_positions(), dt_);
  time_ = time;
  m_.max_joint_speed_m_s = std::max(m_.max_joint_speed_m_s, joint_speed);
  recent_joint_speeds_.push_back(joint_speed);
  while (double(recent_joint_speeds_.size()) * dt_ > 0.5) recent_joint_speeds_.pop_front();
  const TagMask tags = character.current_tags();
  for (size_t t = 0; t < tag_seconds_.size(); ++t) {
    if (tags & (TagMask(1) << t)) tag_seconds_[t] += dt_;
  }
  const bool ended = record_events(character);
  record_constraint(character, character.action_playing() || ended || action_start_);
  record_idle(character, stick, time, previous_global);
  record_action(character, time, ended, joint_speed);
  record_kept_out(character, tags, ended);
  action_start_ = false;
  return ended;
}

template <typename Character>
void GameplayTally::record_kept_out(const Character& character, TagMask tags, bool ended) {
  if ((tags & kept_out_) == 0 || character.action_playing() || ended || action_start_) return;
  const TagConstraint& game = character.constraint();
  if (character.idle()) {
    m_.idle_action_seconds += dt_;
  } else if (game.require_all == 0 && game.require_any == 0) {
    m_.free_action_seconds += dt_;
  }
}

template <typename Character>
void GameplayTally::record_constraint(const Character& character, bool action_update) {
  if (character.stats().unsatisfied_searches != unsatisfied_seen_) {
    unsatisfied_seen_ = character.stats().unsatisfied_searches;
    unsatisfied_since_change_ = true;
  }
  if (!action_update && !unsatisfied_since_change_ && !character.constraint_held()) ++m_.constraint_violations;
}

template <typename Character>
bool GameplayTally::record_events(const Character& character) {
  event_count_ = std::min(character.events(events_.data(), int(events_.size())), int(events_.size()));
  bool ended = false;
  for (int i = 0; i < event_count_; ++i) {
    const CharacterEvent& e = events_[size_t(i)];
    if (e.name == kActionEndEvent) {
      ++m_.action_ends;
      ended = true;
    } else {
      ++event_counts_[size_t(e.name)];
    }
  }
  return ended;
}

template <typename Character>
void GameplayTally::record_idle(const Character& character, float stick, float time, const std::vector<Vec3>& previous) {
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
  for (int joint : contact_joints_) {
    foot += 100.0 * length(on_ground(character.global_positions()[size_t(joint)] - previous[size_t(joint)])) / dt_;
  }
  m_.idle_foot_speed_sum_cm_s += contact_joints_.empty() ? 0.0 : foot / double(contact_joints_.size());
  m_.idle_root_turn_sum_deg_s += std::fabs(character.root_angular_velocity().y) * kRadToDeg;
}

template <typename Character>
void GameplayTally::record_action(const Character& character, float time, bool ended, double joint_speed) {
  if (m_.actions.empty()) return;
  ActionRecord& a = m_.actions.back();
  if (character.action_playing() || ended) {
    a.max_joint_speed_m_s = std::max(a.max_joint_speed_m_s, joint_speed);
    a.entered_joint_speed_m_s = std::max(a.entered_joint_speed_m_s, joint_speed);
  }
  if (ended) {
    a.ended = true;
    a.seconds = time - action_start_time_ + dt_;
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

void GameplayTally::finish(const CharacterStats& stats, GameplayMetrics& metrics) const {
  metrics.measured = metrics.measured || m_.measured;
  metrics.tag_seconds.resize(tag_seconds_.size());
  for (size_t t = 0; t < tag_seconds_.size(); ++t) {
    metrics.tag_seconds[t].first = tags_.names()[t];
    metrics.tag_seconds[t].second += tag_seconds_[t];
  }
  metrics.events.resize(event_counts_.size());
  for (size_t e = 0; e < event_counts_.size(); ++e) {
    metrics.events[e].first = event_names_[e];
    metrics.events[e].second += event_counts_[e];
  }
  metrics.constraint_violations += m_.constraint_violations;
  metrics.forbidden_entries += m_.forbidden_entries;
  metrics.unsatisfied_searches += stats.unsatisfied_searches;
  metrics.constraint_searches += stats.constraint_searches;
  metrics.action_ends += m_.action_ends;
  metrics.event_mismatches += m_.event_mismatches;
  metrics.idle_updates += m_.idle_updates;
  metrics.idle_standing_updates += m_.idle_standing_updates;
  metrics.idle_foot_speed_sum_cm_s += m_.idle_foot_speed_sum_cm_s;
  metrics.idle_root_turn_sum_deg_s += m_.idle_root_turn_sum_deg_s;
  metrics.resume_s.insert(metrics.resume_s.end(), m_.resume_s.begin(), m_.resume_s.end());
  metrics.actions.insert(metrics.actions.end(), m_.actions.begin(), m_.actions.end());
  metrics.max_joint_speed_m_s = std::max(metrics.max_joint_speed_m_s, m_.max_joint_speed_m_s);
  metrics.free_action_seconds += m_.free_action_seconds;
  metrics.idle_action_seconds += m_.idle_action_seconds;
}

GameplayRecorder::GameplayRecorder(const FeatureSearch& search, float dt, float halflife)
    : GameplayTally(search.database()->annotations().tag_set(), search.database()->annotations().kept_out_tags(),
                    search.database()->annotations().event_names(), search.database()->contact_joints(), dt),
      search_(search), db_(*search.database()), halflife_(halflife) {
  const FrameAnnotations& a = db_.annotations();
  m_.measured = !a.tag_names().empty() || !a.events().empty() || a.restricts_search();
}

void GameplayRecorder::apply(DatabaseCharacter& character, const GameplayCommand& command, const std::string& where) {
  apply_constraint(character, command, where);
  if (command.action == "cancel") {
    character.cancel_action();
  } else if (!command.action.empty()) {
    const TagMask tags = mask_of(command.action, where);
    const ActionSettings settings{command.in_place ? ActionRoot::InPlace : ActionRoot::Animated, false};
    if (!character.play_action(tags, settings)) {
      throw InputError(where + ": no frame holds every tag of action '" + command.action + "'");
    }
    ActionRecord& record = start_action(command.action);
    record.first = record.last = character.current_frame();
    record.run_last = run_last(db_, record.first, tags);
    bound_pose_jump(character, record);
  }
}

void GameplayRecorder::record(const DatabaseCharacter& character, float stick, float time, int before,
                              int transitions_before, const std::vector<Vec3>& previous_global) {
  const bool transitioned = character.stats().transitions != transitions_before;
  const bool starting = action_start_;
  const bool ended = record_common(character, stick, time, previous_global);
  if (transitioned && !starting && !search_.entry_allowed(character.last_entry_frame(), character.constraint())) {
    ++m_.forbidden_entries;
  }
  if (!transitioned && !starting && !events_match(character, before)) ++m_.event_mismatches;
  record_frames(character, ended);
}

bool GameplayRecorder::events_match(const DatabaseCharacter& character, int before) const {
  std::vector<DatabaseEvent> reported;
  for (int i = 0; i < event_count_; ++i) {
    const CharacterEvent& e = events_[size_t(i)];
    if (e.name != kActionEndEvent) reported.push_back(DatabaseEvent{e.frame, e.name});
  }
  // Without a transition the update played the frames after `before` up to the current one
  // (the database's events are in frame order).
  const std::vector<DatabaseEvent>& all = db_.annotations().events();
  const auto first = std::upper_bound(all.begin(), all.end(), before,
                                      [](int frame, const DatabaseEvent& e) { return frame < e.frame; });
  const auto last = std::upper_bound(first, all.end(), character.current_frame(),
                                     [](int frame, const DatabaseEvent& e) { return frame < e.frame; });
  const auto same = [](const DatabaseEvent& a, const DatabaseEvent& b) { return a.frame == b.frame && a.name == b.name; };
  return std::equal(first, last, reported.begin(), reported.end(), same);
}

void GameplayRecorder::record_frames(const DatabaseCharacter& character, bool ended) {
  if (m_.actions.empty() || !(character.action_playing() || ended)) return;
  ActionRecord& a = m_.actions.back();
  const int frame = character.current_frame();
  a.in_order = a.in_order && frame >= a.last && clip_index(db_, frame) == clip_index(db_, a.first);
  a.last = frame;
}

LearnedGameplayRecorder::LearnedGameplayRecorder(const Model& model, float dt)
    : GameplayTally(model.tags(), model.kept_out_tags(), model.event_names(), model.contact_joints(), dt), model_(model) {
  m_.measured = model.tag_count() > 0;
}

void LearnedGameplayRecorder::apply(LearnedCharacter& character, const GameplayCommand& command,
                                    const std::string& where) {
  apply_constraint(character, command, where);
  if (command.action == "cancel") {
    character.cancel_action();
  } else if (!command.action.empty()) {
    const ActionSettings settings{command.in_place ? ActionRoot::InPlace : ActionRoot::Animated, false};
    std::string error;
    if (!character.play_action(mask_of(command.action, where), settings, error)) {
      throw InputError(where + ": action " + error);
    }
    start_action(command.action);
  }
}

void LearnedGameplayRecorder::record(const LearnedCharacter& character, float stick, float time, int, int,
                                     const std::vector<Vec3>& previous_global) {
  record_common(character, stick, time, previous_global);
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
