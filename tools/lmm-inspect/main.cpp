// lmm-inspect: print what a motion database (*.mmdb) holds.
#include <cmath>
#include <cstdio>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/database.hpp"
#include "lmm/pipeline/bvh.hpp"
#include "lmm/pipeline/report.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

// Statistics of one feature group over the whole database.
struct GroupStats {
  double raw_std = 0.0;     // group std in feature units (scale * weight)
  double norm_std = 0.0;    // mean per-dimension std of the normalised values
  double norm_min = 1e30, norm_max = -1e30;
};

GroupStats group_stats(const Database& db, const FeatureGroup& g) {
  GroupStats s;
  const int dims = feature_group_dims(g);
  s.raw_std = db.feature_scale()[g.first_dim] * g.weight;
  for (int d = g.first_dim; d < g.first_dim + dims; ++d) {
    double sum = 0.0, sum_sq = 0.0;
    for (int f = 0; f < db.frame_count(); ++f) {
      const double v = db.features(f)[d];
      sum += v;
      sum_sq += v * v;
      s.norm_min = std::min(s.norm_min, v);
      s.norm_max = std::max(s.norm_max, v);
    }
    const double mean = sum / db.frame_count();
    s.norm_std += std::sqrt(std::max(0.0, sum_sq / db.frame_count() - mean * mean)) / dims;
  }
  return s;
}

int run(int argc, char** argv) {
  cxxopts::Options options("lmm-inspect", "Print frames, clips, duration, frame rate, joints and "
                                          "per-group feature statistics of a motion database.");
  options.add_options()
      ("file", "database (*.mmdb)", cxxopts::value<std::string>())
      ("json", "also write the report as JSON to this path", cxxopts::value<std::string>())
      ("h,help", "show this help");
  options.parse_positional({"file"});
  options.positional_help("FILE");
  const cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help") || !args.count("file")) {
    std::puts(options.help().c_str());
    return args.count("help") ? 0 : 2;
  }
  const std::string path = args["file"].as<std::string>();
  Database db;
  std::string error;
  if (!db.load_file(path, error)) throw InputError(error);

  int mirrored = 0;
  for (const DatabaseRange& r : db.ranges()) mirrored += r.mirrored ? 1 : 0;
  const double seconds = db.frame_count() / db.fps();
  std::printf("%s\n  frames       %d\n  clips        %zu (%d mirrored)\n  duration     %.1f s\n"
              "  fps          %.2f\n  joints       %d: %s\n  features     %d dims, schema '%s'\n",
              path.c_str(), db.frame_count(), db.ranges().size(), mirrored, seconds, db.fps(),
              db.joint_count(), db.skeleton().joined_names().c_str(), db.schema().dims,
              db.schema().name.c_str());
  std::printf("  %-28s %-21s %4s %6s %9s %9s %9s %9s\n", "group", "kind", "dims", "weight",
              "raw std", "norm std", "norm min", "norm max");
  std::vector<JsonObject> groups;
  for (const FeatureGroup& g : db.schema().groups) {
    const GroupStats s = group_stats(db, g);
    std::printf("  %-28s %-21s %4d %6.2f %9.4f %9.4f %9.3f %9.3f\n", g.name.c_str(),
                feature_kind_name(g.kind), feature_group_dims(g), g.weight, s.raw_std, s.norm_std,
                s.norm_min, s.norm_max);
    groups.push_back(JsonObject()
                         .text("name", g.name)
                         .text("kind", feature_kind_name(g.kind))
                         .number("dims", feature_group_dims(g))
                         .number("weight", g.weight)
                         .number("raw_std", s.raw_std)
                         .number("normalized_std", s.norm_std)
                         .number("normalized_min", s.norm_min)
                         .number("normalized_max", s.norm_max));
  }
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(),
               JsonObject()
                   .text("file", path)
                   .number("frames", db.frame_count())
                   .number("clips", double(db.ranges().size()))
                   .number("mirrored_clips", mirrored)
                   .number("seconds", seconds)
                   .number("fps", db.fps())
                   .number("joints", db.joint_count())
                   .texts("joint_names", db.skeleton().names)
                   .number("feature_dims", db.schema().dims)
                   .text("schema", db.schema().name)
                   .objects("groups", groups));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-inspect", [&] { return run(argc, argv); });
}
