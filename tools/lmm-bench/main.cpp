// lmm-bench: timing harness. Prints medians over repeated runs (the machines are noisy).
//   lmm-bench import DIR_OR_BVH... [--runs 3] [--json PATH]   whole-import wall time
//   lmm-bench features --db X.mmdb [--queries N] [--json PATH] runtime query feature cost
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/database.hpp"
#include "lmm/pipeline/import.hpp"
#include "lmm/pipeline/report.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Times complete imports (read, process, features, write) of the inputs.
int bench_import(int argc, char** argv) {
  cxxopts::Options o("lmm-bench import", "Median wall time of a complete lmm-import run.");
  const std::string configs = default_config_dir();
  o.add_options()
      ("inputs", "BVH files or folders", cxxopts::value<std::vector<std::string>>())
      ("runs", "repetitions", cxxopts::value<int>()->default_value("3"))
      ("threads", "worker threads", cxxopts::value<int>()->default_value("2"))
      ("skeleton", "skeleton config", cxxopts::value<std::string>()->default_value(configs + "/skeletons/bandai.toml"))
      ("features", "feature schema", cxxopts::value<std::string>()->default_value(configs + "/features/locomotion27.toml"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  o.parse_positional({"inputs"});
  const auto args = o.parse(argc, argv);
  if (args.count("help") || !args.count("inputs")) {
    std::puts(o.help().c_str());
    return args.count("help") ? 0 : 2;
  }
  ImportOptions opt;
  opt.inputs = args["inputs"].as<std::vector<std::string>>();
  opt.skeleton = load_skeleton_config(args["skeleton"].as<std::string>());
  opt.features = load_feature_config(args["features"].as<std::string>());
  opt.threads = args["threads"].as<int>();
  const std::string out = (std::filesystem::temp_directory_path() / "lmm-bench-import.mmdb").string();
  std::vector<double> times;
  ImportSummary s;
  for (int r = 0; r < std::max(1, args["runs"].as<int>()); ++r) {
    const auto start = Clock::now();
    s = import_database(opt, out);
    times.push_back(seconds_since(start));
    spdlog::info("run {}: {:.2f} s", r + 1, times.back());
  }
  std::filesystem::remove(out);
  const double med = median(times);
  std::printf("import: %d files, %d frames, %d clips, median %.2f s over %zu runs (%.0f frames/s, "
              "%d threads)\n", s.files, s.frames, s.clips, med, times.size(), s.frames / med, opt.threads);
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .number("files", s.files)
                                                   .number("frames", s.frames)
                                                   .number("clips", s.clips)
                                                   .number("seconds_median", med)
                                                   .number("runs", double(times.size()))
                                                   .number("frames_per_s", s.frames / med));
  }
  return 0;
}

// Times the runtime query path: velocity FK of one pose, features, normalisation.
int bench_features(int argc, char** argv) {
  cxxopts::Options o("lmm-bench features", "Median cost of building one runtime query.");
  o.add_options()
      ("db", "database", cxxopts::value<std::string>())
      ("queries", "queries per repetition", cxxopts::value<int>()->default_value("10000"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  const auto args = o.parse(argc, argv);
  if (args.count("help") || !args.count("db")) {
    std::puts(o.help().c_str());
    return args.count("help") ? 0 : 2;
  }
  Database db;
  std::string error;
  if (!db.load_file(args["db"].as<std::string>(), error)) throw InputError(error);
  const int j = db.joint_count(), queries = std::max(1, args["queries"].as<int>());
  const FeatureSchema& schema = db.schema();
  PoseScratch scratch;
  scratch.resize(j);
  std::vector<RootSample> trajectory(schema.trajectory_offsets.size());
  std::vector<float> query(size_t(schema.dims));
  std::vector<double> per_query_us;
  float sink = 0.0f;
  for (int rep = 0; rep < 7; ++rep) {
    const auto start = Clock::now();
    for (int q = 0; q < queries; ++q) {
      const int f = int((uint64_t(q) * 2654435761u) % uint64_t(db.frame_count()));
      for (size_t s = 0; s < trajectory.size(); ++s) {
        trajectory[s] = RootSample{db.positions(f)[0], db.rotations(f)[0]};
      }
      features_from_local_pose(schema, db.skeleton().parents.data(), j, db.positions(f),
                               db.rotations(f), db.velocities(f), db.angular_velocities(f),
                               trajectory.data(), scratch, query.data());
      normalize_features(query.data(), db.feature_offset(), db.feature_scale(), schema.dims);
      sink += query[0];
    }
    per_query_us.push_back(seconds_since(start) * 1e6 / queries);
  }
  const double med = median(per_query_us);
  std::printf("features: %d joints, %d dims, median %.3f us per query (FK with velocities + "
              "features + normalisation; checksum %g)\n", j, schema.dims, med, double(sink));
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject().number("us_query_features", med));
  }
  return 0;
}

int run(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "import") return bench_import(argc - 1, argv + 1);
  if (command == "features") return bench_features(argc - 1, argv + 1);
  std::puts("usage: lmm-bench import DIR_OR_BVH... [--runs N] [--json PATH]\n"
            "       lmm-bench features --db X.mmdb [--queries N] [--json PATH]\n"
            "Each command has --help.");
  return command == "-h" || command == "--help" ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-bench", [&] { return run(argc, argv); });
}
