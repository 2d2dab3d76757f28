#include "lmm/character/crowd.hpp"

#include <algorithm>
#include <cmath>

#include "lmm/asset/pose_vector.hpp"
#include "lmm/eval/pose_kernels.hpp"

namespace lmm {
namespace {

void copy_row(const float* from, int n, float* to) { std::copy(from, from + n, to); }

double seconds_since(LearnedCrowd::Clock::time_point start) {
  return std::chrono::duration<double>(LearnedCrowd::Clock::now() - start).count();
}

}  // namespace

float crowd_search_phase(int index) {
  // Fractional parts of index x (golden ratio - 1): consecutive characters land far apart and
  // any prefix of the sequence covers [0, 1) almost evenly.
  const double phase = double(index) * 0.6180339887498949;
  return float(phase - std::floor(phase));
}

bool UpdateClaims::claim(int begin, int end, int worker) {
  const std::lock_guard<std::mutex> lock(*mutex_);
  Claim* free = nullptr;
  for (Claim& c : claims_) {
    if (!c.held) {
      free = free != nullptr ? free : &c;
      continue;
    }
    const bool ranks_overlap = begin < c.end && c.begin < end;
    if (ranks_overlap || (worker >= 0 && worker == c.worker)) return false;
  }
  if (free == nullptr) return false;
  *free = Claim{begin, end, worker, true};
  return true;
}

void UpdateClaims::release(int begin, int end, int worker) {
  const std::lock_guard<std::mutex> lock(*mutex_);
  for (Claim& c : claims_) {
    if (c.held && c.begin == begin && c.end == end && c.worker == worker) {
      c.held = false;
      return;
    }
  }
}

namespace {

// Holds a claim of a crowd's update call for its duration (claimed() says whether it got one).
class ClaimScope {
 public:
  ClaimScope(UpdateClaims& claims, int begin, int end, int worker)
      : claims_(claims), begin_(begin), end_(end), worker_(worker), claimed_(claims.claim(begin, end, worker)) {}
  ClaimScope(const ClaimScope&) = delete;
  ClaimScope& operator=(const ClaimScope&) = delete;
  ~ClaimScope() {
    if (claimed_) claims_.release(begin_, end_, worker_);
  }
  bool claimed() const { return claimed_; }

 private:
  UpdateClaims& claims_;
  int begin_, end_, worker_;
  bool claimed_;
};

}  // namespace

template <typename Character>
int CrowdBase<Character>::sub_steps(float due) {
  if (!(due > kMaxDt)) return 1;
  return int(std::min(std::ceil(due / kMaxDt), float(kMaxSubSteps)));
}

template <typename Character>
void CrowdBase<Character>::resize(int count) {
  characters_.resize(size_t(count));
  inputs_.assign(size_t(count), GamepadInput{});
  divisors_.assign(size_t(count), 1);
  ticks_.assign(size_t(count), 0);
  order_.resize(size_t(count));
  for (int i = 0; i < count; ++i) order_[size_t(i)] = i;
  deferrals_.assign(size_t(count), 0);
  pending_dt_.assign(size_t(count), 0.0f);
  overdue_.assign(size_t(count), 0);
}

template <typename Character>
void CrowdBase<Character>::set_rate_divisor(int i, int divisor) {
  divisors_[size_t(i)] = std::clamp(divisor, 1, kMaxRateDivisor);
  ticks_[size_t(i)] = i;  // characters of one divisor take turns
}

template <typename Character>
bool CrowdBase<Character>::set_priorities(const float* priorities, int count) {
  if (count != size() || std::any_of(priorities, priorities + count, [](float p) { return std::isnan(p); })) {
    return false;
  }
  std::sort(order_.begin(), order_.end(),
            [&](int a, int b) { return priorities[a] != priorities[b] ? priorities[a] > priorities[b] : a < b; });
  return true;
}

template <typename Character>
bool CrowdBase<Character>::take_turn(int i, float dt) {
  const size_t k = size_t(i);
  const float step = std::isfinite(dt) && dt > 0.0f ? dt : 0.0f;  // a character alone steps these by 1e-4 s
  pending_dt_[k] = std::min(pending_dt_[k] + step, float(kMaxSubSteps) * kMaxDt);
  ticks_[k] = (ticks_[k] + 1) % divisors_[k];
  return ticks_[k] == 0 || overdue_[k] != 0;
}

template <typename Character>
float CrowdBase<Character>::consume(int i) {
  const size_t k = size_t(i);
  const float dt = pending_dt_[k];
  pending_dt_[k] = 0.0f;
  overdue_[k] = 0;
  return dt;
}

template <typename Character>
void CrowdBase<Character>::defer(int i) {
  overdue_[size_t(i)] = 1;
  ++deferrals_[size_t(i)];
}

template <typename Character>
GroundMove CrowdBase<Character>::shown_move(int i) const {
  const Character& c = character(i);
  const float elapsed = pending_dt_[size_t(i)];
  const Vec3 root = c.root_position();
  const float yaw = c.root_angular_velocity().y * elapsed;
  return GroundMove{root, root + on_ground(c.root_velocity()) * elapsed,
                    quat_from_angle_axis(yaw, Vec3{0.0f, 1.0f, 0.0f})};
}

template class CrowdBase<DatabaseCharacter>;
template class CrowdBase<LearnedCharacter>;

bool DatabaseCrowd::init(std::shared_ptr<const Database> db, const FeatureSearch& search,
                         const CharacterSettings& settings, int count, std::string& error) {
  if (count < 1) {
    error = "a crowd needs at least 1 character, not " + std::to_string(count);
    return false;
  }
  resize(count);
  for (int i = 0; i < count; ++i) {
    if (!character(i).init(db, search, crowd_character_settings(settings, i), Vec3{}, 0.0f, error)) return false;
  }
  return true;
}

bool DatabaseCrowd::update(int begin, int end, float dt, Clock::time_point deadline) {
  const ClaimScope claim(claims_, begin, end, -1);
  if (!claim.claimed()) return false;
  int updated = 0;
  visit_due(
      begin, end, dt, [&](int i, float due_dt) { character(i).update(inputs_[size_t(i)], due_dt); },
      [&] { return ++updated % kDeadlineGroup == 0 && deadline != kNoDeadline && Clock::now() >= deadline; });
  return true;
}

bool LearnedCrowd::init(std::shared_ptr<const Model> model, const LearnedSettings& settings, int count, int workers,
                        std::string& error) {
  if (count < 1 || workers < 1) {
    error = "a crowd needs at least 1 character and 1 worker, not " + std::to_string(count) + " and " +
            std::to_string(workers);
    return false;
  }
  resize(count);
  for (int i = 0; i < count; ++i) {
    if (!character(i).init(model, crowd_character_settings(settings, i), Vec3{}, 0.0f, error)) return false;
  }
  model_ = model;
  workers_ = std::vector<Worker>(size_t(workers));
  const size_t rows = kBlock, state = size_t(model->state_size());
  for (Worker& w : workers_) {
    if (!w.evaluator.init(model, 2 * kBlock, settings.kernels, error)) return false;
    w.queries.assign(rows * size_t(model->projector_input_size()), 0.0f);
    w.states.assign(rows * state, 0.0f);
    w.step_in.assign(2 * rows * state, 0.0f);
    w.step_out.assign(2 * rows * state, 0.0f);
    w.shown.assign(rows * state, 0.0f);
    w.poses.assign(rows * size_t(model->pose_layout().size()), 0.0f);
    w.dt.assign(rows, 0.0f);
    w.members.assign(rows, 0);
    w.projecting.assign(rows, 0);
    w.frames.assign(rows, 0);
    w.step_owner.assign(2 * rows, 0);
    w.step_track.assign(2 * rows, 0);
    w.local_positions.assign(rows, nullptr);
    w.local_rotations.assign(rows, nullptr);
    w.global_positions.assign(rows, nullptr);
    w.global_rotations.assign(rows, nullptr);
    w.kinematics.assign(size_t(forward_kinematics_scratch(model->skeleton().joint_count())), 0.0f);
  }
  return true;
}

void LearnedCrowd::set_timing(bool on) {
  timing_ = on;
  if (!on) return;
  for (Worker& w : workers_) w.timing = CrowdTiming{};
}

CrowdTiming LearnedCrowd::timing(int worker) const {
  return worker >= 0 && worker < workers() ? workers_[size_t(worker)].timing : CrowdTiming{};
}

template <typename Call>
bool LearnedCrowd::timed_network(Worker& w, const Call& call) {
  if (!w.timed) return call();
  const Clock::time_point start = Clock::now();
  const bool ok = call();
  w.timing.network_seconds += seconds_since(start);
  return ok;
}

bool LearnedCrowd::update(int begin, int end, float dt, int worker, Clock::time_point deadline) {
  if (worker < 0 || worker >= workers()) return false;
  const ClaimScope claim(claims_, begin, end, worker);
  if (!claim.claimed()) return false;
  Worker& w = workers_[size_t(worker)];
  w.timed = timing_;
  const Clock::time_point start = w.timed ? Clock::now() : Clock::time_point{};
  // Under a deadline, blocks of kDeadlineGroup characters, the clock read after each.
  const int block = deadline == kNoDeadline ? kBlock : kDeadlineGroup;
  int count = 0;
  bool flushed = false;
  visit_due(
      begin, end, dt,
      [&](int i, float due_dt) {
        if (count > 0 && w.members[size_t(count - 1)] == i) {  // a sub-step waits for the one before
          update_block(w, count);
          count = 0;
        }
        w.members[size_t(count)] = i;
        w.dt[size_t(count)] = due_dt;
        flushed = ++count == block;
        if (!flushed) return;
        update_block(w, count);
        count = 0;
      },
      [&] { return flushed && deadline != kNoDeadline && Clock::now() >= deadline; });
  if (count > 0) update_block(w, count);
  if (w.timed) w.timing.update_seconds += seconds_since(start);
  return true;
}

// LearnedCharacter::update for the block's members, in the same parts, each network call
// made once for the whole block.
void LearnedCrowd::update_block(Worker& w, int count) {
  if (w.timed) w.timing.character_updates += count;
  for (int k = 0; k < count; ++k) {
    LearnedCharacter& c = character(w.members[size_t(k)]);
    w.dt[size_t(k)] = c.begin_frame(inputs_[size_t(w.members[size_t(k)])], w.dt[size_t(k)]);
  }
  project_block(w, count);
  step_block(w, count);
  decode_block(w, count);
}

void LearnedCrowd::project_block(Worker& w, int count) {
  const int inputs = model_->projector_input_size(), state = model_->state_size();
  int rows = 0;
  for (int k = 0; k < count; ++k) {
    LearnedCharacter& c = character(w.members[size_t(k)]);
    if (!c.projection_due()) continue;
    if (!c.build_query()) {
      c.take_projection(false, c.projected_.data());
      continue;
    }
    copy_row(c.query_.data(), inputs, w.queries.data() + size_t(rows) * inputs);
    w.projecting[size_t(rows++)] = k;
  }
  const bool ok = timed_network(w, [&] { return w.evaluator.project_batch(w.queries.data(), rows, w.states.data()); });
  int steps = 0;  // the transitions' first steps, batched
  for (int r = 0; r < rows; ++r) {
    const int k = w.projecting[size_t(r)];
    LearnedCharacter& c = character(w.members[size_t(k)]);
    float* row = w.states.data() + size_t(r) * state;
    if (!c.take_projection(ok && all_finite(row, size_t(state)), row)) continue;
    const float* step = c.playback_.transition_stepped_later(row, c.out_, c.stats_);
    if (step == nullptr) continue;
    copy_row(step, state, w.step_in.data() + size_t(steps) * state);
    w.step_owner[size_t(steps++)] = k;
  }
  const bool stepped =
      timed_network(w, [&] { return w.evaluator.step_batch(w.step_in.data(), steps, w.step_out.data()); });
  for (int r = 0; r < steps; ++r) {
    LearnedCharacter& c = character(w.members[size_t(w.step_owner[size_t(r)])]);
    c.playback_.finish_step(0, stepped, w.step_out.data() + size_t(r) * state, c.stats_);
  }
}

void LearnedCrowd::step_block(Worker& w, int count) {
  const int state = model_->state_size();
  int rounds = 0;
  for (int k = 0; k < count; ++k) {
    w.frames[size_t(k)] = character(w.members[size_t(k)]).playback_.begin_advance(w.dt[size_t(k)]);
    rounds = std::max(rounds, w.frames[size_t(k)]);
  }
  // Round f steps every track of the characters with more than f model frames to go.
  for (int f = 0; f < rounds; ++f) {
    int rows = 0;
    for (int k = 0; k < count; ++k) {
      if (w.frames[size_t(k)] <= f) continue;
      LearnedPlayback& playback = character(w.members[size_t(k)]).playback_;
      for (int t = 0; t < playback.stepping_tracks(); ++t, ++rows) {
        copy_row(playback.prepare_step(t), state, w.step_in.data() + size_t(rows) * state);
        w.step_owner[size_t(rows)] = k;
        w.step_track[size_t(rows)] = t;
      }
    }
    const bool ok = timed_network(w, [&] { return w.evaluator.step_batch(w.step_in.data(), rows, w.step_out.data()); });
    for (int r = 0; r < rows; ++r) {
      LearnedCharacter& c = character(w.members[size_t(w.step_owner[size_t(r)])]);
      c.playback_.finish_step(w.step_track[size_t(r)], ok, w.step_out.data() + size_t(r) * state, c.stats_);
    }
  }
}

void LearnedCrowd::decode_block(Worker& w, int count) {
  const int state = model_->state_size(), pose = model_->pose_layout().size();
  for (int k = 0; k < count; ++k) {
    const float* shown = character(w.members[size_t(k)]).playback_.compose_shown();
    copy_row(shown, state, w.shown.data() + size_t(k) * state);
  }
  const bool ok = timed_network(w, [&] { return w.evaluator.decode_batch(w.shown.data(), count, w.poses.data()); });
  for (int k = 0; k < count; ++k) {
    LearnedCharacter& c = character(w.members[size_t(k)]);
    const float dt = w.dt[size_t(k)];
    c.playback_.finish_advance(w.poses.data() + size_t(k) * pose, ok, dt, c.settings_.inertialization_halflife, c.out_,
                               c.stats_);
  }
  // The roots' dependent chains one after the other, so that consecutive ones overlap.
  for (int k = 0; k < count; ++k) character(w.members[size_t(k)]).move_root(w.dt[size_t(k)]);
  update_globals_of_block(w, count);
  for (int k = 0; k < count; ++k) character(w.members[size_t(k)]).close_frame();
}

// LearnedCharacter::update_globals of the block's members, sixteen at once.
void LearnedCrowd::update_globals_of_block(Worker& w, int count) {
  for (int k = 0; k < count; ++k) {
    LearnedCharacter& c = character(w.members[size_t(k)]);
    w.local_positions[size_t(k)] = c.out_.positions.data();
    w.local_rotations[size_t(k)] = c.out_.rotations.data();
    w.global_positions[size_t(k)] = c.global_positions_.data();
    w.global_rotations[size_t(k)] = c.global_rotations_.data();
  }
  const std::vector<int>& parents = model_->skeleton().parents;
  const PoseArrays poses{w.local_positions.data(), w.local_rotations.data(), w.global_positions.data(),
                         w.global_rotations.data(), count};
  forward_kinematics_many(parents.data(), int(parents.size()), poses, w.kinematics.data(), w.evaluator.path());
}

}  // namespace lmm
