// lmm-sim: drive database motion-matching characters from scripted or random gamepad input.
#include <cmath>
#include <filesystem>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/pipeline/report.hpp"
#include "lmm/pipeline/simulation.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

cxxopts::Options make_options() {
  cxxopts::Options o("lmm-sim",
                     "Run database motion matching on scripted (--input) or random (--random) gamepad input\n"
                     "and write the motion (BVH), root trajectories (CSV), a plot (SVG) and metrics (JSON).\n"
                     "Input CSV: header with time,stick_x,stick_y,camera_deg,strafe,gait[,right_x,right_y];\n"
                     "each row holds from its time until the next row.");
  o.add_options()
      ("db", "motion database (*.mmdb)", cxxopts::value<std::string>())
      ("input", "input script (CSV)", cxxopts::value<std::string>())
      ("random", "use seeded random input")
      ("seed", "random seed (character i uses seed + i)", cxxopts::value<uint32_t>()->default_value("1"))
      ("random-strafe", "let the random input strafe (needs sideways / backwards steps in the data)")
      ("seconds", "simulated time", cxxopts::value<float>()->default_value("60"))
      ("dt", "time step in seconds (0 < dt <= 0.25)", cxxopts::value<float>()->default_value("0.0166667"))
      ("characters", "number of characters", cxxopts::value<int>()->default_value("1"))
      ("foot-lock", "lock feet in contact with two-joint IK")
      ("no-adjust", "do not pull the root towards the simulated root")
      ("search-interval", "seconds between searches", cxxopts::value<float>()->default_value("0.1"))
      ("transition-cost", "cost added to every transition candidate", cxxopts::value<float>()->default_value("0"))
      ("schema", "expected feature schema name (error when the database differs)", cxxopts::value<std::string>()->default_value(""))
      ("out", "output folder (motion.bvh, root.csv, plot.svg)", cxxopts::value<std::string>())
      ("json", "write metrics as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  return o;
}

float checked_dt(float dt) {
  if (dt > 0.0f && dt <= kMaxDt) return dt;
  const float clamped = dt > kMaxDt ? kMaxDt : 1.0f / 60.0f;
  spdlog::warn("--dt {} is outside (0, {}]; using {}", dt, kMaxDt, clamped);
  return clamped;
}

void write_outputs(const std::string& dir, const Database& db, const std::vector<CharacterTrack>& tracks, float dt) {
  std::filesystem::create_directories(dir);
  for (size_t c = 0; c < tracks.size(); ++c) {
    const std::string name = c == 0 ? "/motion.bvh" : "/motion_" + std::to_string(c) + ".bvh";
    write_text_atomic(dir + name, write_bvh(bvh_from_clip(db.skeleton(), tracks[c].clip, "ZXY", 0.01f)));
  }
  write_root_csv(dir + "/root.csv", tracks, dt);
  write_svg(dir + "/plot.svg", db.skeleton(), tracks, dt);
  spdlog::info("wrote {}/motion.bvh (centimetres), {}/root.csv, {}/plot.svg", dir, dir, dir);
}

int run(int argc, char** argv) {
  cxxopts::Options options = make_options();
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  if (!args.count("db") || args.count("input") == args.count("random")) {
    spdlog::error("lmm-sim: need --db and exactly one of --input FILE or --random (see --help)");
    return 2;
  }
  Database db;
  std::string error;
  if (!db.load_file(args["db"].as<std::string>(), error)) throw InputError(error);
  FeatureSearch search;
  if (!search.build(db, error)) throw InputError(error);

  const float seconds = args["seconds"].as<float>();
  if (!(seconds > 0.0f && seconds <= 86400.0f)) throw InputError("--seconds must be in (0, 86400]");
  const float dt = checked_dt(args["dt"].as<float>());
  const int count = std::max(1, args["characters"].as<int>());
  std::vector<InputScript> scripts;
  for (int c = 0; c < count; ++c) {
    scripts.push_back(args.count("input") ? load_input_script(args["input"].as<std::string>())
                                          : random_input_script(args["seed"].as<uint32_t>() + uint32_t(c), seconds,
                                                                        args.count("random-strafe") > 0));
  }
  CharacterSettings settings;
  settings.foot_lock = args.count("foot-lock") > 0;
  settings.adjust_to_simulation = !args.count("no-adjust");
  settings.search_interval = args["search-interval"].as<float>();
  settings.search.transition_cost = args["transition-cost"].as<float>();
  settings.expected_schema = args["schema"].as<std::string>();

  std::vector<CharacterTrack> tracks;
  const SimMetrics m = run_simulation(db, search, settings, scripts, seconds, dt, tracks);
  std::printf("lmm-sim: %d character(s) x %d frames (dt %.4f s)\n"
              "  searches %d, transitions %d, median update %.1f us\n"
              "  foot slide %.2f cm/s, jitter %.2f m/s^2, trajectory error %.3f m (1 s ahead)\n"
              "  NaN frames %d, still frames with stick held %d, sanitised inputs %d, clamped dt %d\n",
              m.characters, m.frames, dt, m.searches, m.transitions, m.us_per_update, m.foot_slide_cm_per_s,
              m.jitter, m.trajectory_error_m, m.nan_frames, m.still_frames, m.sanitized_inputs, m.clamped_dt);
  if (m.sanitized_inputs > 0) spdlog::warn("{} non-finite input values were treated as zero", m.sanitized_inputs);
  if (args.count("out")) write_outputs(args["out"].as<std::string>(), db, tracks, dt);
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(),
               JsonObject()
                   .number("characters", m.characters)
                   .number("frames", m.frames)
                   .number("searches", m.searches)
                   .number("transitions", m.transitions)
                   .number("foot_slide_cm_per_s", m.foot_slide_cm_per_s)
                   .number("jitter", m.jitter)
                   .number("trajectory_error_m", m.trajectory_error_m)
                   .number("us_per_update", m.us_per_update)
                   .number("nan_frames", m.nan_frames)
                   .number("still_frames", m.still_frames)
                   .number("sanitized_inputs", m.sanitized_inputs)
                   .number("clamped_dt", m.clamped_dt)
                   .boolean("foot_lock", settings.foot_lock));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-sim", [&] { return run(argc, argv); });
}
