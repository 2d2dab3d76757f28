// lmm-bench crowd: characters per millisecond of a crowd (lmm/character/crowd.hpp) updated at 60 Hz on T
// threads, against the same characters updated one by one (each thread owning a share, as a game
// without the crowd API would) timed interleaved in the same run; optional rate divisors (level
// of detail) with their pose and root error against full rate (lod_error.hpp), and a per-frame
// time budget. A learned crowd's batched networks are timed in a further run
// (LearnedCrowd::set_timing): the speedup's ceiling.
#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>

#include <cxxopts.hpp>

#include "bench_common.hpp"
#include "crowd_population.hpp"
#include "frame_pool.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/character/crowd.hpp"
#include "lod_error.hpp"

using namespace lmm;
using namespace lmm::bench;
using namespace lmm::pipeline;

namespace {

constexpr int kWarmupFrames = 30;

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

// What to measure (lmm-bench crowd's options).
struct Options {
  std::vector<int> counts;
  int threads = 2, frames = 60, repetitions = 7;
  std::vector<int> divisors;  // level of detail: characters split evenly over these
  double budget_ms = 0.0;     // > 0: each frame's crowd update has this deadline
};

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

// Times `p`'s crowd against its one-by-one characters on the pool, interleaved, over o.repetitions.
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
      const std::chrono::duration<double, std::milli> budget(o.budget_ms);
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(budget);
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

// The figures of n characters started by `init`, with the level of detail's errors when o.divisors are given.
template <typename Crowd, typename Character, typename Init>
CrowdFigures run_count(int n, const Options& o, FramePool& pool, const Init& init) {
  Population<Crowd, Character> p;
  start_population(p, n, o.divisors, init);
  if (o.budget_ms > 0.0) {
    std::vector<float> nearness(static_cast<size_t>(n));  // characters near the origin (the camera) first
    for (int i = 0; i < n; ++i) nearness[size_t(i)] = -length(start_of(i));
    p.crowd.set_priorities(nearness.data(), n);
  }
  CrowdFigures fig = measure(p, o, pool);
  if (!o.divisors.empty()) {
    // Quality: a fresh pair of populations from the same start, LOD crowd vs full rate.
    Population<Crowd, Character> q;
    start_population(q, n, o.divisors, init);
    fig.lod_error = lod_errors(q, o.divisors, 600);
  }
  return fig;
}

// What the run does, for its first line.
std::string plan_of(const Options& o) {
  return std::to_string(o.frames) + " frames x " + std::to_string(o.repetitions) + " repetitions";
}

// The comma-separated whole numbers (each >= 1) of --`option`; throws InputError naming the option.
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

// Prints one character count's figures (divisors: the --lod rate divisors).
void print_figures(const CrowdFigures& f, int threads, const std::vector<int>& divisors) {
  std::printf("  %5d characters: %8.3f ms/frame  %8.0f characters/ms  %6.2f us/character (threads x wall)  "
              "one by one %8.3f ms/frame  speedup %.2fx\n"
              "        CPU time per character update: %.2f us (one by one %.2f us)\n",
              f.characters, f.ms_per_frame, f.characters / f.ms_per_frame,
              us_per_char(f.ms_per_frame, threads, f.characters),
              f.alone_ms_per_frame, f.speedup, f.cpu_us_per_char, f.alone_cpu_us_per_char);
  if (f.network_us_per_char > 0.0) {
    std::printf("        batched networks: %.2f of %.2f us per character update (%.0f%%); one by one "
                "(threads x wall) / networks: %.2fx (the speedup if nothing else cost anything)\n",
                f.network_us_per_char, f.timed_us_per_char, 100.0 * f.network_us_per_char / f.timed_us_per_char,
                f.speedup_ceiling);
  }
  if (f.updates_per_frame < f.characters) {
    std::printf("        %.1f character updates per frame (%.1f deferred by the budget)\n", f.updates_per_frame,
                f.deferred_per_frame);
  }
  for (size_t l = 0; l < f.lod_error.size(); ++l) {
    const PoseDifference& e = f.lod_error[l];
    std::printf("        rate divisor %d vs full rate (means): joints in root space %.2f cm apart; held: roots "
                "%.2f cm, world joints %.2f cm, root step error %.2f cm; shown (shown_move): roots %.2f cm, world "
                "joints %.2f cm, root step error %.2f cm\n",
                divisors[l], 100.0 * e.joints, 100.0 * e.root, 100.0 * e.world, 100.0 * e.step, 100.0 * e.shown_root,
                100.0 * e.shown_world, 100.0 * e.shown_step);
  }
}

// One character count's figures as JSON (divisors: the --lod rate divisors).
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

// Times every character count and returns the JSON of the results.
template <typename Crowd, typename Character, typename Init>
JsonObject run_all(const Options& o, const Init& init) {
  FramePool pool(o.threads);
  JsonObject json;
  std::vector<JsonObject> rows;
  for (int n : o.counts) {
    const CrowdFigures f = run_count<Crowd, Character>(n, o, pool, init);
    print_figures(f, o.threads, o.divisors);
    rows.push_back(figures_json(f, o.threads, o.divisors));
  }
  return json.objects("counts", rows);
}

// The command's options and help.
cxxopts::Options crowd_options() {
  cxxopts::Options o("lmm-bench crowd",
                     "Crowd update cost (lmm/character/crowd.hpp) at 60 Hz on T threads: ms per frame, characters per ms, "
                     "us of thread time per character, and the speedup over the same characters updated one by one "
                     "(timed interleaved in the same run); medians over repetitions. A learned crowd at full rate also "
                     "times its batched networks in a further run: their share and the speedup's ceiling.\n"
                     "  lmm-bench crowd (--model X.lmmw | --db X.mmdb) [--characters 1,64,1024,4096] [--threads 2] "
                     "[--lod 1,2,4] [--budget MS] [--json PATH]");
  o.add_options()
      ("model", "learned crowd over this bundle", cxxopts::value<std::string>())
      ("db", "database crowd over this database", cxxopts::value<std::string>())
      ("characters", "character counts, comma-separated",
       cxxopts::value<std::string>()->default_value("1,64,1024,4096"))
      ("threads", "threads (each updates a share of the characters)", cxxopts::value<int>()->default_value("2"))
      ("frames", "timed frames per repetition", cxxopts::value<int>()->default_value("60"))
      ("repetitions", "repetitions (medians over them)", cxxopts::value<int>()->default_value("7"))
      ("lod", "rate divisors the characters are split over evenly (e.g. 1,2,4); also measures each level's "
              "joint error against full rate", cxxopts::value<std::string>())
      ("budget", "ms: each frame's crowd update defers what is left at this deadline (characters nearest the "
                 "origin first)", cxxopts::value<double>())
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  return o;
}

// The checked Options of parsed `args`; throws InputError naming a bad option.
Options parse_options(const cxxopts::ParseResult& args) {
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
  return opt;
}

// Runs learned crowds over the bundle at `source`; returns the JSON of the results.
JsonObject run_learned(const std::string& source, const Options& opt) {
  std::string error;
  const std::shared_ptr<const Model> model = Model::load_file(source, error);
  if (model == nullptr) throw InputError(error);
  std::printf("lmm-bench crowd: learned, %s (preset '%s'), %d threads, %s\n", source.c_str(), model->preset().c_str(),
              opt.threads, plan_of(opt).c_str());
  return run_all<LearnedCrowd, LearnedCharacter>(opt, [&](auto& p, int n) {
    std::string e;
    if (!p.crowd.init(model, LearnedSettings{}, n, opt.threads, e)) throw InputError(e);
    for (int i = 0; i < int(p.alone.size()); ++i) {
      if (!p.alone[size_t(i)].init(model, crowd_character_settings(LearnedSettings{}, i), start_of(i), 0.05f * float(i),
                                   e)) {
        throw InputError(e);
      }
    }
  });
}

// Runs database crowds over the database at `source`; returns the JSON of the results.
JsonObject run_database(const std::string& source, const Options& opt) {
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(source, error);
  if (db == nullptr) throw InputError(error);
  FeatureSearch search;
  if (!search.build(db, error)) throw InputError(error);
  std::printf("lmm-bench crowd: database, %s (%d frames), %d threads, %s\n", source.c_str(), db->frame_count(),
              opt.threads, plan_of(opt).c_str());
  return run_all<DatabaseCrowd, DatabaseCharacter>(opt, [&](auto& p, int n) {
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

}  // namespace

int bench_crowd(int argc, char** argv) {
  cxxopts::Options o = crowd_options();
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, nullptr, args, code)) return code;
  if (args.count("model") == args.count("db")) {
    std::puts(o.help().c_str());
    return 2;
  }
  const Options opt = parse_options(args);
  const std::string source = args[args.count("model") ? "model" : "db"].as<std::string>();
  JsonObject json = args.count("model") ? run_learned(source, opt) : run_database(source, opt);
  if (args.count("json")) {
    json.text("source", source).number("threads", opt.threads).number("frames", opt.frames);
    json.number("repetitions", opt.repetitions);
    write_json(args["json"].as<std::string>(), json);
  }
  return 0;
}
