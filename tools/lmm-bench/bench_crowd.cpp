// lmm-bench crowd: characters per millisecond of a crowd (lmm/character/crowd.hpp) updated at 60 Hz on T
// threads, against the same characters updated one by one (each thread owning a share, as a game
// without the crowd API would) timed interleaved in the same run; optional rate divisors (level
// of detail) with their pose and root error against full rate, a per-frame time budget, and a
// soak that counts non-finite poses and heap allocations. A learned crowd's batched networks are
// timed in a further run (LearnedCrowd::set_timing): the speedup's ceiling.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include <cxxopts.hpp>

#include "bench_common.hpp"
#include "lmm/character/crowd.hpp"
#include "lmm/pipeline/bvh.hpp"
#include "lmm/pipeline/report.hpp"
#include "support/allocation_counter.hpp"

using namespace lmm;
using namespace lmm::bench;
using namespace lmm::pipeline;

namespace {

constexpr float kDt = 1.0f / 60.0f;
constexpr int kWarmupFrames = 30;

// Runs one job per thread, the caller being thread 0, and waits for all; the helper threads
// spin (with yields) between frames so a frame's start costs no thread creation.
class FramePool {
 public:
  explicit FramePool(int threads) {
    for (int t = 1; t < threads; ++t) helpers_.emplace_back([this, t] { serve(t); });
  }
  ~FramePool() {
    stop_ = true;
    generation_.fetch_add(1);
    for (std::thread& h : helpers_) h.join();
  }
  int threads() const { return int(helpers_.size()) + 1; }
  void run(const std::function<void(int)>& job) {
    job_ = &job;
    pending_.store(int(helpers_.size()));
    generation_.fetch_add(1);
    job(0);
    while (pending_.load() > 0) std::this_thread::yield();
  }

 private:
  void serve(int t) {
    int seen = 0;
    for (;;) {
      while (generation_.load() == seen) std::this_thread::yield();
      seen = generation_.load();
      if (stop_) return;
      (*job_)(t);
      pending_.fetch_sub(1);
    }
  }
  std::vector<std::thread> helpers_;
  std::atomic<int> generation_{0}, pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* job_ = nullptr;
};

// A uniform value in [-1, 1) from `key` (splitmix64's finaliser; cheap next to an update).
float hashed_unit(uint64_t key) {
  key += 0x9E3779B97F4A7C15ull;
  key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
  key ^= key >> 31;
  return float(key >> 40) / float(1 << 23) - 1.0f;
}

// Character i's stick on frame f: a new random direction and gait every 1 to 2 seconds.
GamepadInput input_of(int i, int f) {
  const uint64_t key = (uint64_t(i) << 32 | uint64_t(f / (60 + i % 61))) * 4;
  GamepadInput in;
  in.left_x = hashed_unit(key);
  in.left_y = hashed_unit(key + 1);
  in.gait = hashed_unit(key + 2) > 0.3f ? 1.0f : 0.0f;
  return in;
}

Vec3 start_of(int i) { return Vec3{2.0f * float(i % 32), 0.0f, 2.0f * float(i / 32)}; }

// Thread t's share of n characters.
std::pair<int, int> share(int n, int t, int threads) { return {n * t / threads, n * (t + 1) / threads}; }

// The characters of one measurement, as a crowd and as individual characters.
template <typename Crowd, typename Character>
struct Population {
  Crowd crowd;
  std::vector<Character> alone;
  int frame = 0;

  int size() const { return crowd.size(); }
  void set_inputs() {
    for (int i = 0; i < size(); ++i) crowd.set_input(i, input_of(i, frame));
  }
  void update_alone(int t, int threads) {
    const auto [begin, end] = share(size(), t, threads);
    for (int i = begin; i < end; ++i) alone[size_t(i)].update(input_of(i, frame), kDt);
  }
};

// Per frame: wall seconds, and CPU seconds summed over the threads.
struct FrameTimes {
  double wall = 0.0, cpu = 0.0;
};

// FrameTimes of `frames` frames of `step(thread)` on the pool, after `prepare()`.
FrameTimes time_frames(FramePool& pool, int frames, const std::function<void()>& prepare,
                       const std::function<void(int)>& step) {
  std::vector<double> cpu(size_t(pool.threads()), 0.0);  // each thread adds to its own entry
  const std::function<void(int)> timed = [&](int t) {
    const double start = thread_cpu_seconds();
    step(t);
    cpu[size_t(t)] += thread_cpu_seconds() - start;
  };
  FrameTimes total;
  for (int f = 0; f < frames; ++f) {
    prepare();
    const auto start = Clock::now();
    pool.run(timed);
    total.wall += seconds_since(start);
  }
  for (double c : cpu) total.cpu += c;
  return FrameTimes{total.wall / frames, total.cpu / frames};
}

// Differences between two characters: the mean distance (m) of their joints in root space
// (pose error, wherever each root is) and the distance of their roots.
// With a level-of-detail character, also its world joints' distance as held and as shown
// (moved by the crowd's shown_move), the shown root's distance, and the root's stutter: how far
// its step of the frame, held or shown, is from the full-rate character's step.
struct PoseDifference {
  double joints = 0.0, root = 0.0, world = 0.0, shown_world = 0.0, shown_root = 0.0, step = 0.0, shown_step = 0.0;

  void add(const PoseDifference& d) {
    joints += d.joints, root += d.root, world += d.world, shown_world += d.shown_world, shown_root += d.shown_root;
    step += d.step, shown_step += d.shown_step;
  }
  void divide(double n) {
    joints /= n, root /= n, world /= n, shown_world /= n, shown_root /= n, step /= n, shown_step /= n;
  }
};

// Where a character's root is drawn this frame: held (its last update) and shown (moved), and
// at full rate.
struct DrawnRoots {
  Vec3 held, shown, full;
};

// One character count's figures.
struct CrowdFigures {
  int characters = 0;
  double ms_per_frame = 0.0, alone_ms_per_frame = 0.0, speedup = 0.0;
  double cpu_us_per_char = 0.0, alone_cpu_us_per_char = 0.0;  // CPU time per character update
  double deferred_per_frame = 0.0;  // character updates a --budget put off, per frame
  double updates_per_frame = 0.0;   // character updates made per frame (< characters with --lod / --budget)
  // Learned crowds at full rate without a budget, from a further run with the crowd's timing
  // on: wall time per character update in update calls and in their batched network calls, and
  // the one-by-one update's wall time per character over the latter (0 otherwise).
  double timed_us_per_char = 0.0, network_us_per_char = 0.0, speedup_ceiling = 0.0;
  std::vector<PoseDifference> lod_error;  // per rate divisor, mean differences from full rate (m)
};

template <typename Character>
PoseDifference difference(const Character& a, const Character& b, const GroundMove& shown) {
  const auto& pa = a.global_positions();
  const auto& pb = b.global_positions();
  PoseDifference d;
  for (size_t j = 0; j < pa.size(); ++j) {
    const Vec3 la = inverse_rotate(a.root_rotation(), pa[j] - a.root_position());
    const Vec3 lb = inverse_rotate(b.root_rotation(), pb[j] - b.root_position());
    d.joints += length(la - lb);
    d.world += length(pa[j] - pb[j]);
    d.shown_world += length(shown.point(pa[j]) - pb[j]);
  }
  d.joints /= double(pa.size());
  d.world /= double(pa.size());
  d.shown_world /= double(pa.size());
  d.root = length(a.root_position() - b.root_position());
  d.shown_root = length(shown.point(a.root_position()) - b.root_position());
  return d;
}

struct Options {
  std::vector<int> counts;
  int threads = 2, frames = 60, repetitions = 7;
  std::vector<int> divisors;  // level of detail: characters split evenly over these
  double soak_seconds = 0.0;  // > 0: a soak of the first count instead of the timings
  double budget_ms = 0.0;     // > 0: each frame's crowd update has this deadline
};

using Deadline = std::chrono::steady_clock::time_point;

// Crowd update of thread t's share (ranks), deferring what is left at `deadline`.
template <typename Crowd>
void update_share(Crowd& crowd, int t, int threads, Deadline deadline);

template <>
void update_share(LearnedCrowd& crowd, int t, int threads, Deadline deadline) {
  const auto [begin, end] = share(crowd.size(), t, threads);
  crowd.update(begin, end, kDt, t, deadline);
}

template <>
void update_share(DatabaseCrowd& crowd, int t, int threads, Deadline deadline) {
  const auto [begin, end] = share(crowd.size(), t, threads);
  crowd.update(begin, end, kDt, deadline);
}

// Thread time per character of a frame taking `ms_per_frame` on `threads` threads (threads x wall).
double us_per_char(double ms_per_frame, int threads, int characters) {
  return ms_per_frame * 1e3 * threads / characters;
}

// A database crowd has no networks to time.
void time_networks(DatabaseCrowd&, const std::function<void()>&, int, CrowdFigures&) {}

// The learned crowd's CrowdTiming over `run_frames()` per character update, and the ceiling
// against fig's one-by-one figures on `threads` threads, into `fig`.
void time_networks(LearnedCrowd& crowd, const std::function<void()>& run_frames, int threads, CrowdFigures& fig) {
  crowd.set_timing(true);
  run_frames();
  crowd.set_timing(false);
  CrowdTiming sum;
  for (int w = 0; w < crowd.workers(); ++w) {
    const CrowdTiming t = crowd.timing(w);
    sum.update_seconds += t.update_seconds;
    sum.network_seconds += t.network_seconds;
    sum.character_updates += t.character_updates;
  }
  if (sum.character_updates == 0 || sum.network_seconds <= 0.0) return;
  fig.timed_us_per_char = sum.update_seconds * 1e6 / double(sum.character_updates);
  fig.network_us_per_char = sum.network_seconds * 1e6 / double(sum.character_updates);
  fig.speedup_ceiling = us_per_char(fig.alone_ms_per_frame, threads, fig.characters) / fig.network_us_per_char;
}

template <typename Crowd, typename Character>
CrowdFigures measure(Population<Crowd, Character>& p, const Options& o, FramePool& pool) {
  const int threads = pool.threads();
  Deadline deadline = Crowd::kNoDeadline;
  auto crowd_step = [&](int t) { update_share(p.crowd, t, threads, deadline); };
  auto alone_step = [&](int t) { p.update_alone(t, threads); };
  auto next_frame = [&] {
    ++p.frame;
    p.set_inputs();
    if (o.budget_ms > 0.0) {
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(o.budget_ms));
    }
  };
  time_frames(pool, kWarmupFrames, next_frame, crowd_step);
  p.frame = 0;
  time_frames(pool, kWarmupFrames, [&] { ++p.frame; }, alone_step);
  std::vector<double> crowd_s, alone_s, ratio, crowd_cpu, alone_cpu;
  for (int r = 0; r < o.repetitions; ++r) {
    const int first = p.frame;
    const FrameTimes crowd = time_frames(pool, o.frames, next_frame, crowd_step);
    p.frame = first;  // the same frames (inputs) for the individual characters
    const FrameTimes alone = time_frames(pool, o.frames, [&] { ++p.frame; }, alone_step);
    crowd_s.push_back(crowd.wall), crowd_cpu.push_back(crowd.cpu);
    alone_s.push_back(alone.wall), alone_cpu.push_back(alone.cpu);
    ratio.push_back(alone.wall / crowd.wall);
  }
  CrowdFigures fig;
  long deferred = 0, updates = 0;
  for (int i = 0; i < p.size(); ++i) {
    deferred += p.crowd.deferrals(i);
    updates += p.crowd.character(i).stats().updates;
  }
  const double crowd_frames = double(kWarmupFrames + o.repetitions * o.frames);
  fig.deferred_per_frame = double(deferred) / crowd_frames;
  fig.updates_per_frame = double(updates) / crowd_frames;
  fig.characters = p.size();
  fig.ms_per_frame = median(crowd_s) * 1e3;
  fig.alone_ms_per_frame = median(alone_s) * 1e3;
  fig.speedup = median(ratio);
  fig.cpu_us_per_char = median(crowd_cpu) * 1e6 / p.size();
  fig.alone_cpu_us_per_char = median(alone_cpu) * 1e6 / p.size();
  // Per update made, so only comparable with one by one when every character updates every frame.
  if (o.divisors.empty() && o.budget_ms <= 0.0) {
    time_networks(p.crowd, [&] { time_frames(pool, o.frames, next_frame, crowd_step); }, threads, fig);
  }
  return fig;
}

// Sets the rate divisors (characters split evenly over `divisors`, in index order).
template <typename Crowd>
void set_divisors(Crowd& crowd, const std::vector<int>& divisors) {
  const int n = crowd.size(), levels = int(divisors.size());
  for (int i = 0; i < n; ++i) crowd.set_rate_divisor(i, divisors[size_t(i * levels / n)]);
}

// Mean differences of each divisor's characters from the same characters at full rate
// (updated individually, same inputs) over `frames` frames.
template <typename Crowd, typename Character>
std::vector<PoseDifference> lod_errors(Population<Crowd, Character>& p, const std::vector<int>& divisors, int frames) {
  const int n = p.size(), levels = int(divisors.size());
  std::vector<PoseDifference> sum(static_cast<size_t>(levels));
  std::vector<int> count(static_cast<size_t>(levels), 0);
  std::vector<DrawnRoots> last(static_cast<size_t>(n));
  for (int f = 0; f < frames; ++f) {
    ++p.frame;
    p.set_inputs();
    p.crowd.update(kDt);
    p.update_alone(0, 1);
    for (int i = 0; i < n; ++i) {
      const size_t level = size_t(i * levels / n);
      const GroundMove shown = p.crowd.shown_move(i);
      const Vec3 held_root = p.crowd.character(i).root_position();
      const DrawnRoots now{held_root, shown.point(held_root), p.alone[size_t(i)].root_position()};
      PoseDifference d = difference(p.crowd.character(i), p.alone[size_t(i)], shown);
      const DrawnRoots& before = last[size_t(i)];
      d.step = length(on_ground((now.held - before.held) - (now.full - before.full)));
      d.shown_step = length(on_ground((now.shown - before.shown) - (now.full - before.full)));
      last[size_t(i)] = now;
      if (f == 0) continue;  // no step yet
      sum[level].add(d);
      ++count[level];
    }
  }
  for (int l = 0; l < levels; ++l) sum[size_t(l)].divide(std::max(1, count[size_t(l)]));
  return sum;
}

// Starts `p`: a crowd of n characters at their start points with the rate divisors of `o`, and
// with `twins` the same characters to update one by one. `init(p, n)` initialises the crowd and
// the p.alone characters there are.
template <typename Crowd, typename Character, typename Init>
void start_population(Population<Crowd, Character>& p, int n, const Options& o, const Init& init, bool twins) {
  if (twins) p.alone.resize(size_t(n));
  init(p, n);
  for (int i = 0; i < n; ++i) p.crowd.character(i).reset(start_of(i), 0.05f * float(i));
  if (!o.divisors.empty()) set_divisors(p.crowd, o.divisors);
}

template <typename Crowd, typename Character, typename Init>
CrowdFigures run_count(int n, const Options& o, FramePool& pool, const Init& init) {
  Population<Crowd, Character> p;
  start_population(p, n, o, init, true);
  if (o.budget_ms > 0.0) {
    std::vector<float> nearness(static_cast<size_t>(n));  // characters near the origin (the camera) first
    for (int i = 0; i < n; ++i) nearness[size_t(i)] = -length(start_of(i));
    p.crowd.set_priorities(nearness.data(), n);
  }
  CrowdFigures fig = measure(p, o, pool);
  if (!o.divisors.empty()) {
    // Quality: a fresh pair of populations from the same start, LOD crowd vs full rate.
    Population<Crowd, Character> q;
    start_population(q, n, o, init, true);
    fig.lod_error = lod_errors(q, o.divisors, 600);
  }
  return fig;
}

// A long run of one crowd: no NaN pose, no heap allocation while updating.
struct SoakFigures {
  int characters = 0, frames = 0, nonfinite_poses = 0;
  long allocations = 0;
  double wall_seconds = 0.0;
  CharacterStats totals;
};

template <typename Character>
bool pose_is_finite(const Character& c) {
  for (const Vec3& p : c.global_positions()) {
    if (!is_finite(p)) return false;
  }
  return true;
}

// Runs `crowd` for `seconds` of game time at 60 Hz on the pool, counting heap allocations
// during the updates and checking every pose once per game second.
template <typename Crowd>
SoakFigures soak(Crowd& crowd, double seconds, FramePool& pool) {
  SoakFigures s;
  s.characters = crowd.size();
  const int threads = pool.threads();
  const std::function<void(int)> step = [&](int t) { update_share(crowd, t, threads, Crowd::kNoDeadline); };
  const auto start = Clock::now();
  for (int f = 0; f < int(seconds * 60.0); ++f, ++s.frames) {
    for (int i = 0; i < crowd.size(); ++i) crowd.set_input(i, input_of(i, f));
    test::start_counting_allocations();
    pool.run(step);
    s.allocations += test::stop_counting_allocations();
    if (f % 60 != 59) continue;
    for (int i = 0; i < crowd.size(); ++i) s.nonfinite_poses += pose_is_finite(crowd.character(i)) ? 0 : 1;
  }
  s.wall_seconds = seconds_since(start);
  for (int i = 0; i < crowd.size(); ++i) {
    const CharacterStats& c = crowd.character(i).stats();
    s.totals.transitions += c.transitions;
    s.totals.nonfinite_states += c.nonfinite_states;
    s.totals.clamped_states += c.clamped_states;
  }
  return s;
}

void print_soak(const SoakFigures& s) {
  std::printf("  soak: %d characters, %d frames (%.0f s of game time) in %.1f s: %d non-finite poses, %ld heap "
              "allocations while updating, %d transitions, %d non-finite network outputs discarded, %d states clamped\n",
              s.characters, s.frames, s.frames / 60.0, s.wall_seconds, s.nonfinite_poses, s.allocations,
              s.totals.transitions, s.totals.nonfinite_states, s.totals.clamped_states);
}

JsonObject soak_json(const SoakFigures& s) {
  JsonObject j;
  j.number("characters", s.characters)
      .number("frames", s.frames)
      .number("wall_seconds", s.wall_seconds)
      .number("nonfinite_poses", s.nonfinite_poses)
      .number("allocations", double(s.allocations))
      .number("transitions", s.totals.transitions)
      .number("nonfinite_states", s.totals.nonfinite_states)
      .number("clamped_states", s.totals.clamped_states);
  return j;
}

// What the run does, for its first line.
std::string plan_of(const Options& o) {
  if (o.soak_seconds > 0.0) return "soak of " + std::to_string(int(o.soak_seconds)) + " s of game time at 60 Hz";
  return std::to_string(o.frames) + " frames x " + std::to_string(o.repetitions) + " repetitions";
}

std::vector<int> parse_ints(const std::string& text, const char* option) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string cell;
  while (std::getline(in, cell, ',')) {
    try {
      out.push_back(std::stoi(cell));
    } catch (const std::exception&) {
      throw InputError(std::string("--") + option + ": '" + cell + "' is not a whole number");
    }
    if (out.back() < 1) throw InputError(std::string("--") + option + ": values must be >= 1, not " + cell);
  }
  if (out.empty()) throw InputError(std::string("--") + option + " needs at least one value");
  return out;
}

void print_figures(const CrowdFigures& f, int threads, const std::vector<int>& divisors) {
  std::printf("  %5d characters: %8.3f ms/frame  %8.0f characters/ms  %6.2f us/character (threads x wall)  "
              "one by one %8.3f ms/frame  speedup %.2fx\n"
              "        CPU time per character update: %.2f us (one by one %.2f us)\n",
              f.characters, f.ms_per_frame, f.characters / f.ms_per_frame, us_per_char(f.ms_per_frame, threads, f.characters),
              f.alone_ms_per_frame, f.speedup, f.cpu_us_per_char, f.alone_cpu_us_per_char);
  if (f.network_us_per_char > 0.0) {
    std::printf("        batched networks: %.2f of %.2f us per character update (%.0f%%); one by one (threads x wall) / networks: "
                "%.2fx (the speedup if nothing else cost anything)\n",
                f.network_us_per_char, f.timed_us_per_char, 100.0 * f.network_us_per_char / f.timed_us_per_char,
                f.speedup_ceiling);
  }
  if (f.updates_per_frame < f.characters) {
    std::printf("        %.1f character updates per frame (%.1f deferred by the budget)\n", f.updates_per_frame,
                f.deferred_per_frame);
  }
  for (size_t l = 0; l < f.lod_error.size(); ++l) {
    const PoseDifference& e = f.lod_error[l];
    std::printf("        rate divisor %d vs full rate (means): joints in root space %.2f cm apart; held: roots %.2f cm, "
                "world joints %.2f cm, root step error %.2f cm; shown (shown_move): roots %.2f cm, world joints "
                "%.2f cm, root step error %.2f cm\n",
                divisors[l], 100.0 * e.joints, 100.0 * e.root, 100.0 * e.world, 100.0 * e.step, 100.0 * e.shown_root,
                100.0 * e.shown_world, 100.0 * e.shown_step);
  }
}

JsonObject figures_json(const CrowdFigures& f, int threads, const std::vector<int>& divisors) {
  JsonObject j;
  j.number("characters", f.characters)
      .number("ms_per_frame", f.ms_per_frame)
      .number("chars_per_ms", f.characters / f.ms_per_frame)
      .number("us_per_char", us_per_char(f.ms_per_frame, threads, f.characters))
      .number("individual_ms_per_frame", f.alone_ms_per_frame)
      .number("speedup_vs_individual", f.speedup)
      .number("cpu_us_per_char", f.cpu_us_per_char)
      .number("individual_cpu_us_per_char", f.alone_cpu_us_per_char)
      .number("updates_per_frame", f.updates_per_frame)
      .number("deferred_per_frame", f.deferred_per_frame);
  if (f.network_us_per_char > 0.0) {
    j.number("timed_us_per_char", f.timed_us_per_char)
        .number("network_us_per_char", f.network_us_per_char)
        .number("speedup_ceiling", f.speedup_ceiling);
  }
  std::vector<JsonObject> lod;
  for (size_t l = 0; l < f.lod_error.size(); ++l) {
    lod.push_back(JsonObject()
                      .number("rate_divisor", divisors[l])
                      .number("joint_error_cm", 100.0 * f.lod_error[l].joints)
                      .number("root_error_cm", 100.0 * f.lod_error[l].root)
                      .number("world_joint_error_cm", 100.0 * f.lod_error[l].world)
                      .number("shown_root_error_cm", 100.0 * f.lod_error[l].shown_root)
                      .number("shown_world_joint_error_cm", 100.0 * f.lod_error[l].shown_world)
                      .number("root_step_error_cm", 100.0 * f.lod_error[l].step)
                      .number("shown_root_step_error_cm", 100.0 * f.lod_error[l].shown_step));
  }
  if (!lod.empty()) j.objects("lod", lod);
  return j;
}

// Times every character count (or, with a soak, runs the first count that long) and returns the
// JSON of the results.
template <typename Crowd, typename Character, typename Init>
JsonObject run_all(const Options& o, const Init& init) {
  FramePool pool(o.threads);
  JsonObject json;
  if (o.soak_seconds > 0.0) {
    Population<Crowd, Character> p;
    start_population(p, o.counts.front(), o, init, false);  // a soak needs no one-by-one twins
    const SoakFigures s = soak(p.crowd, o.soak_seconds, pool);
    print_soak(s);
    return json.objects("soak", {soak_json(s)});
  }
  std::vector<JsonObject> rows;
  for (int n : o.counts) {
    const CrowdFigures f = run_count<Crowd, Character>(n, o, pool, init);
    print_figures(f, o.threads, o.divisors);
    rows.push_back(figures_json(f, o.threads, o.divisors));
  }
  return json.objects("counts", rows);
}

}  // namespace

int bench_crowd(int argc, char** argv) {
  cxxopts::Options o("lmm-bench crowd",
                     "Crowd update cost (lmm/character/crowd.hpp) at 60 Hz on T threads: ms per frame, characters per ms, "
                     "us of thread time per character, and the speedup over the same characters updated one by one "
                     "(timed interleaved in the same run); medians over repetitions. A learned crowd at full rate also "
                     "times its batched networks in a further run: their share and the speedup's ceiling.\n"
                     "  lmm-bench crowd (--model X.lmmw | --db X.mmdb) [--characters 1,64,1024,4096] [--threads 2] "
                     "[--lod 1,2,4] [--budget MS] [--soak SECONDS] [--json PATH]");
  o.add_options()
      ("model", "learned crowd over this bundle", cxxopts::value<std::string>())
      ("db", "database crowd over this database", cxxopts::value<std::string>())
      ("characters", "character counts, comma-separated", cxxopts::value<std::string>()->default_value("1,64,1024,4096"))
      ("threads", "threads (each updates a share of the characters)", cxxopts::value<int>()->default_value("2"))
      ("frames", "timed frames per repetition", cxxopts::value<int>()->default_value("60"))
      ("repetitions", "repetitions (medians over them)", cxxopts::value<int>()->default_value("7"))
      ("lod", "rate divisors the characters are split over evenly (e.g. 1,2,4); also measures each level's "
              "joint error against full rate", cxxopts::value<std::string>())
      ("budget", "ms: each frame's crowd update defers what is left at this deadline (characters nearest the "
                 "origin first)", cxxopts::value<double>())
      ("soak", "instead of timing: run the first character count this many seconds of game time, counting "
               "non-finite poses and heap allocations while updating", cxxopts::value<double>())
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, nullptr, args, code)) return code;
  if (args.count("model") == args.count("db")) {
    std::puts(o.help().c_str());
    return 2;
  }
  Options opt;
  opt.counts = parse_ints(args["characters"].as<std::string>(), "characters");
  opt.threads = args["threads"].as<int>();
  opt.frames = args["frames"].as<int>();
  opt.repetitions = args["repetitions"].as<int>();
  if (opt.threads < 1 || opt.threads > 64) throw InputError("--threads must be in 1..64");
  if (opt.frames < 1 || opt.repetitions < 1) throw InputError("--frames and --repetitions must be >= 1");
  if (args.count("lod")) opt.divisors = parse_ints(args["lod"].as<std::string>(), "lod");
  if (args.count("budget")) opt.budget_ms = args["budget"].as<double>();
  if (!(opt.budget_ms >= 0.0 && opt.budget_ms <= 1000.0)) throw InputError("--budget must be 0..1000 ms");
  if (args.count("soak")) opt.soak_seconds = args["soak"].as<double>();
  if (!(opt.soak_seconds >= 0.0 && opt.soak_seconds <= 86400.0)) throw InputError("--soak must be 0..86400 seconds");
  std::string error;
  JsonObject json;
  std::string source;
  if (args.count("model")) {
    source = args["model"].as<std::string>();
    const std::shared_ptr<const Model> model = Model::load_file(source, error);
    if (model == nullptr) throw InputError(error);
    std::printf("lmm-bench crowd: learned, %s (preset '%s'), %d threads, %s\n", source.c_str(), model->preset().c_str(),
                opt.threads, plan_of(opt).c_str());
    json = run_all<LearnedCrowd, LearnedCharacter>(opt, [&](auto& p, int n) {
      std::string e;
      if (!p.crowd.init(model, LearnedSettings{}, n, opt.threads, e)) throw InputError(e);
      for (int i = 0; i < int(p.alone.size()); ++i) {
        if (!p.alone[size_t(i)].init(model, crowd_character_settings(LearnedSettings{}, i), start_of(i), 0.05f * float(i), e)) {
          throw InputError(e);
        }
      }
    });
  } else {
    source = args["db"].as<std::string>();
    const std::shared_ptr<const Database> db = Database::load_file(source, error);
    if (db == nullptr) throw InputError(error);
    FeatureSearch search;
    if (!search.build(db, error)) throw InputError(error);
    std::printf("lmm-bench crowd: database, %s (%d frames), %d threads, %s\n", source.c_str(), db->frame_count(),
                opt.threads, plan_of(opt).c_str());
    json = run_all<DatabaseCrowd, DatabaseCharacter>(opt, [&](auto& p, int n) {
      std::string e;
      if (!p.crowd.init(db, search, CharacterSettings{}, n, e)) throw InputError(e);
      for (int i = 0; i < int(p.alone.size()); ++i) {
        if (!p.alone[size_t(i)].init(db, search, crowd_character_settings(CharacterSettings{}, i), start_of(i),
                                     0.05f * float(i), e)) {
          throw InputError(e);
        }
      }
    });
  }
  if (args.count("json")) {
    json.text("source", source).number("threads", opt.threads).number("frames", opt.frames).number("repetitions", opt.repetitions);
    write_json(args["json"].as<std::string>(), json);
  }
  return 0;
}
