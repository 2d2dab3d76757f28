// lmm-bench direction: the cost of one DirectionNet prediction (lmm/asset/direction_net.hpp) per kernel
// path, against the LHMM call it serves (Lee, Kwon & Lee 2023 Sec. VI-G), timed interleaved in one run.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "bench_common.hpp"
#include "lmm/common/report.hpp"
#include "lmm/asset/direction_net.hpp"
#include "lmm/engines/path_run.hpp"
#include "lmm/eval/kernel_support.hpp"

using namespace lmm;
using namespace lmm::bench;
using namespace lmm::pipeline;

namespace {

// Windows of a walk that wanders (0.5-2 m/s) with a facing that turns slowly, in the present
// frame, `count` of them: points (2 x window floats each) and facings (2 x (present + 1)).
void walk_windows(const DirectionNet& net, int count, std::vector<float>& points, std::vector<float>& facings) {
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  const int window = net.window(), past = net.present() + 1;
  points.assign(size_t(count) * 2 * window, 0.0f);
  facings.assign(size_t(count) * 2 * past, 0.0f);
  for (int w = 0; w < count; ++w) {
    float x = 0.0f, z = 0.0f, heading = 0.3f * noise(rng), facing = heading;
    const float speed = 0.5f + 1.5f * std::fabs(noise(rng)) / 3.0f;
    for (int t = 0; t < window; ++t) {
      heading += 0.05f * noise(rng);
      facing += 0.5f * (heading - facing) + 0.02f * noise(rng);
      x += speed * net.step_seconds() * std::sin(heading);
      z += speed * net.step_seconds() * std::cos(heading);
      points[size_t(w) * 2 * window + 2 * t] = x;
      points[size_t(w) * 2 * window + 2 * t + 1] = z;
      if (t >= past) continue;
      facings[size_t(w) * 2 * past + 2 * t] = std::sin(facing);
      facings[size_t(w) * 2 * past + 2 * t + 1] = std::cos(facing);
    }
  }
}

// Microseconds of thread CPU time per prediction of `evaluator` over every window.
double time_predictions(DirectionEvaluator& evaluator, const std::vector<float>& points, const std::vector<float>& facings,
                        int count, std::vector<float>& future) {
  const DirectionNet& net = *evaluator.net();
  const double start = thread_cpu_seconds();
  for (int w = 0; w < count; ++w) {
    evaluator.predict(points.data() + size_t(w) * 2 * net.window(), facings.data() + size_t(w) * 2 * (net.present() + 1),
                      future.data());
  }
  return (thread_cpu_seconds() - start) * 1e6 / count;
}

// The designed path hand-drawn (Lee, Kwon & Lee 2023 Sec. V-A): median ms per LHMM call.
double lhmm_ms(const std::shared_ptr<const Database>& db, const FeatureSearch& search, const PathRunOptions& options) {
  for (const TestPath& p : test_paths()) {
    if (p.name != "hand-drawn") continue;
    PathRunOptions o = options;
    o.shaping.speed_scale = p.speed_scale;
    CharacterTrack track;
    Path path;
    return run_path(db, search, p.samples, o, track, path).ms_per_lhmm;
  }
  return NAN;
}

}  // namespace

int bench_direction(int argc, char** argv) {
  cxxopts::Options o("lmm-bench direction",
                     "Microseconds per DirectionNet prediction on each kernel path, against the LHMM call it "
                     "serves (lmm-path's hand-drawn test path on --db, median ms per call, with the tangent facing "
                     "and with this DirectionNet), interleaved per repetition; medians.\n"
                     "  lmm-bench direction --model X.lmdn --db X.mmdb [--k 3 --l 3] [--calls 1000] [--json PATH]");
  o.add_options()
      ("model", "DirectionNet bundle (*.lmdn)", cxxopts::value<std::string>())
      ("db", "motion database for the LHMM baseline", cxxopts::value<std::string>())
      ("k", "LHMM nearest neighbours per level", cxxopts::value<int>()->default_value("3"))
      ("l", "LHMM levels", cxxopts::value<int>()->default_value("3"))
      ("calls", "predictions per repetition", cxxopts::value<int>()->default_value("1000"))
      ("repetitions", "repetitions", cxxopts::value<int>()->default_value("5"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "model", args, code)) return code;
  if (!args.count("db")) throw InputError("lmm-bench direction: --db X.mmdb is needed for the LHMM baseline");
  const int calls = args["calls"].as<int>(), repetitions = args["repetitions"].as<int>();
  if (calls < 1 || repetitions < 1) throw InputError("--calls and --repetitions must be at least 1");
  std::string error;
  const std::shared_ptr<const DirectionNet> net = DirectionNet::load_file(args["model"].as<std::string>(), error);
  if (net == nullptr) throw InputError(error);
  const std::shared_ptr<const Database> db = Database::load_file(args["db"].as<std::string>(), error);
  FeatureSearch search;
  if (db == nullptr || !search.build(db, error)) throw InputError(error);
  std::vector<float> points, facings, future(2 * size_t(net->future_steps()));
  walk_windows(*net, calls, points, facings);
  const std::vector<KernelPath> paths = available_kernel_paths();
  std::vector<DirectionEvaluator> evaluators(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!evaluators[i].init(net, paths[i], error)) throw InputError(error);
  }
  PathRunOptions tangent;
  tangent.follower.k = args["k"].as<int>();
  tangent.follower.levels = args["l"].as<int>();
  PathRunOptions with_net = tangent;
  with_net.follower.query.direction = net;
  std::vector<std::vector<double>> us(paths.size());
  std::vector<double> lhmm, lhmm_net;
  for (int r = 0; r < repetitions; ++r) {
    for (size_t i = 0; i < paths.size(); ++i) us[i].push_back(time_predictions(evaluators[i], points, facings, calls, future));
    lhmm.push_back(lhmm_ms(db, search, tangent));
    lhmm_net.push_back(lhmm_ms(db, search, with_net));
  }
  std::printf("lmm-bench direction: %s (%d units, %d steps, %d predicted), %d calls x %d repetitions\n",
              args["model"].as<std::string>().c_str(), net->hidden(), net->window(), net->future_steps(), calls,
              repetitions);
  JsonObject json;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::printf("  %-7s %8.2f us per prediction (thread CPU time)\n", kernel_path_name(paths[i]), median(us[i]));
    json.number(std::string("us_per_call_") + kernel_path_name(paths[i]), median(us[i]));
  }
  const double best = median(us.back()), ms = median(lhmm), ms_net = median(lhmm_net);
  std::printf("  LHMM(%d, %d) per call on hand-drawn: %.3f ms with the tangent facing, %.3f ms with DirectionNet; "
              "one prediction (%s) is %.1f%% of a tangent LHMM call\n",
              tangent.follower.k, tangent.follower.levels, ms, ms_net, kernel_path_name(paths.back()),
              100.0 * best / (1000.0 * ms));
  json.number("us_per_call", best).number("ms_per_lhmm", ms).number("ms_per_lhmm_with_net", ms_net)
      .number("ratio_to_lhmm", best / (1000.0 * ms));
  if (args.count("json")) write_json(args["json"].as<std::string>(), json);
  return 0;
}
