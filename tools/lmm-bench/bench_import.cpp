// lmm-bench import: the wall time of complete imports (read, process, features, write).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "bench_common.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/import.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using namespace lmm::bench;

// Times complete imports (read, process, features, write) of the inputs.
int bench_import(int argc, char** argv) {
  cxxopts::Options o("lmm-bench import", "Median wall time of a complete lmm-import run.");
  const std::string configs = default_config_dir();
  o.add_options()
      ("inputs", "BVH files or folders", cxxopts::value<std::vector<std::string>>())
      ("runs", "repetitions", cxxopts::value<int>()->default_value("3"))
      ("threads", "worker threads", cxxopts::value<int>()->default_value("2"))
      ("skeleton", "skeleton config", cxxopts::value<std::string>()->default_value(configs + "/skeletons/bandai.toml"))
      ("features", "feature schema",
       cxxopts::value<std::string>()->default_value(configs + "/features/locomotion27.toml"))
      ("json", "write results as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  o.parse_positional({"inputs"});
  cxxopts::ParseResult args;
  int code = 0;
  if (parse_or_stop(o, argc, argv, "inputs", args, code)) return code;
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
