// Crowds: many characters sharing one asset, updated by one call or by ranges that an engine's
// job system (or the caller's threads) runs concurrently. A learned crowd evaluates the
// projector, stepper and decoder of a block of characters as batches grouped by routed expert
// (Kleanthous & Martini 2023 Sec. 3, top-2 routing), so each expert's weights are read once per
// block; a database crowd spreads its characters' periodic searches over the search interval.
// Every character gives the same result, bit for bit, as the same character updated alone
// with the settings of crowd_character_settings().
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "lmm/character/learned_character.hpp"
#include "lmm/eval/pose_kernels.hpp"

namespace lmm {

// The search phase (SteeringSettings::search_phase) of crowd character `index`: a golden-ratio
// sequence, so any number of characters spreads evenly over the search interval.
float crowd_search_phase(int index);
// `settings` as crowd character `index` uses them (search_phase set by crowd_search_phase).
template <typename Settings>
Settings crowd_character_settings(const Settings& settings, int index) {
  Settings s = settings;
  s.search_phase = crowd_search_phase(index);
  return s;
}

// The rank ranges and workers of a crowd's update calls in progress, so that a call whose ranks
// overlap another's, or that takes a worker in use, is refused instead of racing it. A fixed
// table under a mutex: a claim allocates nothing.
class UpdateClaims {
 public:
  // Most update calls of one crowd in progress at once.
  static constexpr int kMaxCalls = 64;
  // Claims ranks [begin, end) and `worker` (-1: none) for a call; false (nothing claimed) when a
  // call in progress overlaps the ranks or holds the worker, or kMaxCalls calls are in progress.
  bool claim(int begin, int end, int worker);
  // Ends a claim that claim(begin, end, worker) made.
  void release(int begin, int end, int worker);

 private:
  struct Claim {
    int begin = 0, end = 0, worker = -1;
    bool held = false;
  };
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  std::array<Claim, kMaxCalls> claims_{};
};

// What the two crowds share: the characters, their inputs and their update rates.
template <typename Character>
class CrowdBase {
 public:
  // Number of characters.
  int size() const { return int(characters_.size()); }
  // Character i (0 <= i < size()); calls on it are the caller's to synchronise with updates.
  Character& character(int i) { return characters_[size_t(i)]; }
  const Character& character(int i) const { return characters_[size_t(i)]; }
  // The gamepad input character i follows from the next update on.
  void set_input(int i, const GamepadInput& input) { inputs_[size_t(i)] = input; }
  // Level of detail: character i updates every `divisor`-th crowd update (1..kMaxRateDivisor,
  // clamped) with the summed dt, holding its pose in between; characters of one divisor take
  // turns, so a frame updates about 1 / divisor of them. 1 (the default) updates every frame.
  void set_rate_divisor(int i, int divisor);
  // Character i's rate divisor.
  int rate_divisor(int i) const { return divisors_[size_t(i)]; }
  // Priorities of all characters (`count` == size() values, higher first): updates visit
  // characters in this order, so under a deadline the most important ones update and the rest
  // wait. Ties keep index order. Sorts once; no allocation. False (nothing changed) when
  // `count` is not size() or a value is NaN.
  bool set_priorities(const float* priorities, int count);
  // The character at rank r of the priority order (r itself until priorities are set).
  int ranked(int r) const { return order_[size_t(r)]; }
  // How many of character i's updates a deadline has put off (each is made up, with the
  // summed dt, at its next update call).
  int deferrals(int i) const { return deferrals_[size_t(i)]; }
  // Level of detail: where to show character i between its updates. Its last pose carried on
  // along the ground by the root's velocity and turned by the root's yaw rate over the time
  // since that update (identity right after an update). Apply it to the character's global
  // pose (point() to positions, rotation() to rotations) when drawing; the character itself
  // does not move.
  GroundMove shown_move(int i) const;

  // Largest rate divisor set_rate_divisor accepts.
  static constexpr int kMaxRateDivisor = 16;
  // Characters updated between two looks at the clock under a deadline (the first group of a
  // call always updates, so the highest-priority characters are never starved).
  static constexpr int kDeadlineGroup = 32;
  using Clock = std::chrono::steady_clock;
  // "No deadline".
  static constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

 protected:
  // Sizes the per-character arrays for `count` characters (allocates).
  void resize(int count);
  // Adds dt to character i's pending time; whether it updates this frame (its turn under its
  // rate divisor, or a deferred update to make up).
  bool take_turn(int i, float dt);
  // Character i's summed dt, cleared: it updates now.
  float consume(int i);
  // Puts character i's update off to the next call.
  void defer(int i);
  // For the characters of ranks begin..end-1 due this frame, in rank order: take(i, step) for
  // each of the equal steps of at most kMaxDt that make up its summed dt (one step unless a rate
  // divisor or a deferral summed more), then out_of_time(); once that says true, the due
  // characters left are deferred.
  template <typename Take, typename OutOfTime>
  void visit_due(int begin, int end, float dt, const Take& take, const OutOfTime& out_of_time) {
    bool late = false;
    for (int r = std::max(begin, 0); r < std::min(end, size()); ++r) {
      const int i = ranked(r);
      if (!take_turn(i, dt)) continue;
      if (late) {
        defer(i);
        continue;
      }
      const float due = consume(i);
      const int steps = sub_steps(due);
      for (int s = 0; s < steps; ++s) take(i, steps == 1 ? due : due / float(steps));
      late = out_of_time();
    }
  }
  // Number of equal steps of at most kMaxDt that make up `due` seconds (1 for shorter ones).
  static int sub_steps(float due);
  // Most steps one update makes of a summed dt; pending time beyond kMaxSubSteps x kMaxDt (16 s)
  // is dropped.
  static constexpr int kMaxSubSteps = 64;

  UpdateClaims claims_;

  std::vector<Character> characters_;
  std::vector<GamepadInput> inputs_;
  std::vector<int> divisors_, ticks_, order_, deferrals_;
  std::vector<float> pending_dt_;
  std::vector<char> overdue_;
};

extern template class CrowdBase<DatabaseCharacter>;
extern template class CrowdBase<LearnedCharacter>;

// Database motion matching characters over one Database and FeatureSearch.
class DatabaseCrowd : public CrowdBase<DatabaseCharacter> {
 public:
  // `count` characters (>= 1) at the origin facing +Z with crowd_character_settings(settings,
  // i); place them with character(i).reset(). `search` must outlive the crowd. False with a
  // message when a character cannot start (see DatabaseCharacter::init).
  bool init(std::shared_ptr<const Database> db, const FeatureSearch& search, const CharacterSettings& settings,
            int count, std::string& error);
  // Updates the characters of ranks begin..end-1 (ranked()) by dt; disjoint ranges may run
  // concurrently. Past `deadline`, the remaining due characters are deferred. False, updating
  // nothing, when the ranks overlap those of an update in progress. No allocation.
  bool update(int begin, int end, float dt, Clock::time_point deadline = kNoDeadline);
  // Updates every character by dt on the calling thread.
  void update(float dt) { update(0, size(), dt); }
};

// Where one worker's update calls spent their time (LearnedCrowd::set_timing): the wall-clock
// seconds the calling thread spent in whole update calls and in their batched network calls
// (projector, stepper, decoder), and the character updates those calls made.
struct CrowdTiming {
  double update_seconds = 0.0, network_seconds = 0.0;
  std::int64_t character_updates = 0;
};

// Learned motion matching characters over one Model, their networks batched per block.
class LearnedCrowd : public CrowdBase<LearnedCharacter> {
 public:
  // Characters evaluated as one batch (a range is processed in blocks of this many).
  static constexpr int kBlock = 512;

  // `count` characters (>= 1) at the origin facing +Z with crowd_character_settings(settings,
  // i), and `workers` (>= 1) sets of batch scratch, one per concurrent update call. False with
  // a message when a character or an evaluator cannot start.
  bool init(std::shared_ptr<const Model> model, const LearnedSettings& settings, int count, int workers,
            std::string& error);
  // Updates the characters of ranks begin..end-1 (ranked()) by dt with worker scratch `worker`
  // (0..workers-1): calls with distinct workers and disjoint ranges may run concurrently. Past
  // `deadline`, the remaining due characters are deferred. False, updating nothing, for an
  // out-of-range worker, or when the ranks overlap those of an update in progress or the worker
  // is in use by one. No allocation.
  bool update(int begin, int end, float dt, int worker, Clock::time_point deadline = kNoDeadline);
  // Updates every character by dt on the calling thread (worker 0).
  void update(float dt) { update(0, size(), dt, 0); }
  // Number of worker scratch sets.
  int workers() const { return int(workers_.size()); }
  // Starts (on: every worker's sums zeroed) or stops timing update calls; while on, each call
  // reads the clock a few times per block. Not to be called while any update runs.
  void set_timing(bool on);
  // Worker `worker`'s sums since timing was last switched on (zeros for an out-of-range worker).
  // Not to be called while that worker's update runs.
  CrowdTiming timing(int worker) const;

 private:
  // One worker's batch rows (kBlock characters; steps take up to 2 rows per character).
  struct Worker {
    ModelEvaluator evaluator;
    std::vector<float> queries, states, step_in, step_out, shown, poses, dt;
    std::vector<int> members, projecting, frames;
    std::vector<int> step_owner, step_track;
    // The block's local and global joint arrays for forward_kinematics_many, and its scratch.
    std::vector<const Vec3*> local_positions;
    std::vector<const Quat*> local_rotations;
    std::vector<Vec3*> global_positions;
    std::vector<Quat*> global_rotations;
    std::vector<float> kinematics;
    CrowdTiming timing;
    bool timed = false;  // whether the running update call is timed (timing_ at its start)
  };
  void update_block(Worker& w, int count);
  void project_block(Worker& w, int count);
  void step_block(Worker& w, int count);
  void decode_block(Worker& w, int count);
  void update_globals_of_block(Worker& w, int count);
  // call() (a batched network call), its time added to w.timing when w.timed.
  template <typename Call>
  bool timed_network(Worker& w, const Call& call);

  std::shared_ptr<const Model> model_;
  std::vector<Worker> workers_;
  bool timing_ = false;
};

}  // namespace lmm
