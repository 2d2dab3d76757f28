// lmm-path: path following with long-horizon motion matching (Lee, Kwon & Lee 2023) on a motion database.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/engines/path_run.hpp"
#include "lmm/import/config.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

cxxopts::Options make_options() {
  cxxopts::Options o(
      "lmm-path",
      "Follow a drawn path with long-horizon motion matching LHMM(k, l) (Lee, Kwon & Lee 2023) and write the motion (BVH),\n"
      "root trajectory (CSV), a top-view plot (SVG) and metrics (JSON). A path file is CSV with a header\n"
      "t,x,z (seconds, metres on the ground) or JSON [[t, x, z], ...]. --ablation runs the built-in test paths\n"
      "through Lee, Kwon & Lee 2023's Table 2 ablation and Table 1 configurations instead; --facing-table compares the\n"
      "facing modes (Sec. VI-D: tangent, joystick, DirectionNet) on the test paths and paths walked sideways or backwards.\n"
      "  lmm-path --db X.mmdb --path P.csv [--k 3 --l 3] [--mode local|global] [--speed-scale 1] --out DIR [--json PATH]");
  o.add_options()
      ("db", "motion database (*.mmdb)", cxxopts::value<std::string>())
      ("path", "path file (CSV t,x,z or JSON); repeat for several characters, each with its own path",
       cxxopts::value<std::vector<std::string>>())
      ("test-path", "use a built-in test path: circle-accelerating, sharp-corners, s-curve, hand-drawn, or one "
       "walked facing +Z: backward-walk, sideways-shuffle, back-and-forth", cxxopts::value<std::string>())
      ("ablation", "run every test path through the Table 2 and Table 1 configurations")
      ("facing-table", "run every test path with each facing mode (tangent; joystick where one offset walks it; "
                       "net with --direction-net)")
      ("long-db", "--ablation: database with the longer query (configs/features/locomotion-long.toml)",
       cxxopts::value<std::string>())
      ("k", "nearest neighbours per LHMM level (also --k)", cxxopts::value<int>()->default_value("3"))
      ("l", "LHMM levels, 1 = basic motion matching (also --l)", cxxopts::value<int>()->default_value("3"))
      ("mode", "local (path moved to the character) or global (walk to its start first)",
       cxxopts::value<std::string>()->default_value("local"))
      ("speed-scale", "playback speed / drawing speed (Lee, Kwon & Lee 2023 uses 0.2)", cxxopts::value<float>())
      ("max-speed", "speed limit v_max of the revised query, m/s (default: the controller config's run_forward, "
       "else the data's measured run speed)", cxxopts::value<float>())
      ("controller", "controller config (TOML, docs/configs.md): its [speeds] run_forward is v_max",
       cxxopts::value<std::string>())
      ("desired", "desired position: constrained (Eq. 1), current (current frame) or nearest",
       cxxopts::value<std::string>()->default_value("constrained"))
      ("no-smooth", "do not smooth the path")
      ("foot-lock", "lock feet in contact with two-joint IK (Lee, Kwon & Lee 2023 App. A)")
      ("no-prune", "search every node of the LHMM tree (the paper's kNN call count) instead of skipping the "
                   "branches that cannot win (same matches)")
      ("no-adjust", "do not pull the root towards the desired path point (Lee, Kwon & Lee 2023's method as published)")
      ("adjust-halflife", "seconds: halflife of the pull towards the path", cxxopts::value<float>()->default_value("0.2"))
      ("adjust-ratio", "the pull's speed limit as a fraction of the root's speed", cxxopts::value<float>()->default_value("0.2"))
      ("no-speed-limit", "do not limit the future query's speed")
      ("no-corner-fix", "do not modify the query at sharp corners")
      ("raw", "raw future query: current-frame desired position, no speed limit, no corner fix")
      ("facing", "future facing of the query (Lee, Kwon & Lee 2023 Sec. VI-D): tangent, joystick (the tangent "
                 "turned by --facing-offset) or net (DirectionNet, --direction-net)", cxxopts::value<std::string>())
      ("facing-offset", "degrees added to the tangential facing (joystick offset; implies --facing joystick)",
       cxxopts::value<float>()->default_value("0"))
      ("direction-net", "DirectionNet bundle (*.lmdn, lmm-export --direction) for --facing net and --facing-table",
       cxxopts::value<std::string>())
      ("start-facing", "degrees: the character starts facing the path's first tangent turned by this (default: the "
                       "test path's own, else 0)", cxxopts::value<float>())
      ("match-interval", "seconds between LHMM calls", cxxopts::value<float>()->default_value("0.1666667"))
      ("dt", "time step in seconds", cxxopts::value<float>()->default_value("0.0166667"))
      ("out", "output folder (motion.bvh, motion.glb, root.csv, plot.svg; with --ablation the plots)", cxxopts::value<std::string>())
      ("mesh", "skinned mesh in motion.glb: none, spindles (generated around the bones), or FILE.glb / .gltf: "
               "its skinned mesh, bound in the skeleton's rest pose, joints matched by name",
       cxxopts::value<std::string>()->default_value("none"))
      ("units", "BVH length unit: file (that of the imported BVH files), m, cm, mm or metres per unit",
       cxxopts::value<std::string>()->default_value("file"))
      ("json", "write metrics (or the ablation tables) as JSON", cxxopts::value<std::string>())
      ("require", "play only frames with all these tags (comma-separated; a tagged database)", cxxopts::value<std::string>())
      ("require-any", "play only frames with at least one of these tags", cxxopts::value<std::string>())
      ("exclude", "play no frame with any of these tags", cxxopts::value<std::string>())
      ("h,help", "show this help");
  return o;
}

// The DirectionNet bundle `file`; InputError naming it when it cannot be used.
std::shared_ptr<const DirectionNet> load_direction_net(const std::string& file) {
  std::string error;
  std::shared_ptr<const DirectionNet> net = DirectionNet::load_file(file, error);
  if (net == nullptr) throw InputError(error);
  return net;
}

// v_max: --max-speed, else the controller config's run_forward, else measured from the data.
void set_speed_limit(const cxxopts::ParseResult& args, PathQuerySettings& q) {
  if (args.count("controller")) {
    const ControllerConfig config = load_controller_config(args["controller"].as<std::string>());
    for (const auto& [key, value] : config.values) {
      if (key == "run_forward") q.max_speed = value, q.max_speed_from_data = false;
    }
  }
  if (args.count("max-speed")) {
    q.max_speed = args["max-speed"].as<float>();
    q.max_speed_from_data = false;
    if (!(q.max_speed > 0.0f)) throw InputError("--max-speed must be positive");
  }
}

constexpr float kRadPerDeg = 0.017453292f;

// --facing, --facing-offset, --direction-net and --start-facing.
void set_facing(const cxxopts::ParseResult& args, PathQuerySettings& q) {
  const float offset = args["facing-offset"].as<float>();
  if (!std::isfinite(offset)) throw InputError("--facing-offset must be a finite number of degrees");
  const std::string facing = args.count("facing") ? args["facing"].as<std::string>() : (offset != 0.0f ? "joystick" : "tangent");
  if (facing != "tangent" && facing != "joystick" && facing != "net") {
    throw InputError("--facing: '" + facing + "' is not tangent, joystick or net");
  }
  if (offset != 0.0f && facing != "joystick") throw InputError("--facing-offset is the joystick mode's: use --facing joystick");
  q.facing_offset = offset * kRadPerDeg;
  if (args.count("start-facing")) {
    q.start_facing_offset = args["start-facing"].as<float>() * kRadPerDeg;
    if (!std::isfinite(q.start_facing_offset)) throw InputError("--start-facing must be a finite number of degrees");
  }
  if (facing == "net" && !args.count("direction-net")) throw InputError("--facing net needs --direction-net FILE");
  if (facing == "net") q.direction = load_direction_net(args["direction-net"].as<std::string>());
}

PathRunOptions run_options(const cxxopts::ParseResult& args) {
  PathRunOptions o;
  const std::string mode = args["mode"].as<std::string>();
  if (mode != "local" && mode != "global") throw InputError("--mode: '" + mode + "' is not 'local' or 'global'");
  o.mode = mode == "local" ? PathMode::Local : PathMode::Global;
  o.shaping.smooth = !args.count("no-smooth");
  if (args.count("speed-scale")) o.shaping.speed_scale = args["speed-scale"].as<float>();
  o.follower.adjust_to_path = !args.count("no-adjust");
  o.follower.foot_lock = args.count("foot-lock") > 0;
  o.follower.prune = args.count("no-prune") == 0;
  o.follower.adjustment_halflife = args["adjust-halflife"].as<float>();
  o.follower.adjustment_max_ratio = args["adjust-ratio"].as<float>();
  if (!(o.follower.adjustment_halflife > 0.0f) || !(o.follower.adjustment_max_ratio >= 0.0f)) {
    throw InputError("--adjust-halflife must be positive and --adjust-ratio not negative");
  }
  o.follower.k = args["k"].as<int>();
  o.follower.levels = args["l"].as<int>();
  o.follower.match_interval = args["match-interval"].as<float>();
  PathQuerySettings& q = o.follower.query;
  set_speed_limit(args, q);
  const std::string desired = args["desired"].as<std::string>();
  if (desired == "constrained") {
    q.desired = DesiredPosition::Constrained;
  } else if (desired == "current") {
    q.desired = DesiredPosition::CurrentFrame;
  } else if (desired == "nearest") {
    q.desired = DesiredPosition::Nearest;
  } else {
    throw InputError("--desired: '" + desired + "' is not constrained, current or nearest");
  }
  q.speed_limit = !args.count("no-speed-limit") && !args.count("raw");
  q.corner_fix = !args.count("no-corner-fix") && !args.count("raw");
  if (args.count("raw")) q.desired = DesiredPosition::CurrentFrame;
  set_facing(args, q);
  o.dt = args["dt"].as<float>();
  if (!(o.dt > 0.0f && o.dt <= kMaxDt)) throw InputError("--dt must be in (0, 0.25]");
  return o;
}

// --require, --require-any and --exclude resolved against `db`'s tags; throws InputError naming
// the option and the unknown tag.
TagConstraint constraint_of(const cxxopts::ParseResult& args, const Database& db) {
  TagConstraint c;
  const std::pair<const char*, TagMask*> options[] = {
      {"require", &c.require_all}, {"require-any", &c.require_any}, {"exclude", &c.exclude}};
  for (const auto& [name, mask] : options) {
    std::string error;
    if (args.count(name) && !db.annotations().tag_mask(args[name].as<std::string>(), *mask, error)) {
      throw InputError(std::string("--") + name + ": " + error);
    }
  }
  return c;
}

JsonObject metrics_json(const PathMetrics& m) {
  JsonObject tags;
  for (const auto& [tag, seconds] : m.tag_seconds) tags.number(tag, seconds);
  JsonObject json = JsonObject()
      .number("avg_distance_m", m.avg_distance_m)
      .boolean("completed", m.completed)
      .number("seconds_to_complete", m.seconds_to_complete)
      .number("run_limit_s", m.run_limit_s)
      .number("ms_per_lhmm", m.ms_per_lhmm)
      .number("knn_calls_per_lhmm", m.knn_calls_per_lhmm)
      .number("frames", m.frames)
      .number("matches", m.matches)
      .number("transitions", m.transitions)
      .number("corner_queries", m.corner_queries)
      .number("foot_slide_cm_per_s", m.foot_slide_cm_per_s)
      .number("foot_ik_error_max_cm", m.legs.ik_error_max_cm)
      .number("foot_ik_error_mean_cm", m.legs.ik_error_mean_cm())
      .number("leg_joint_speed_max_m_s", m.legs.leg_speed_max_m_s)
      .number("facing_error_deg", m.facing_error_deg)
      .number("sideways_clip_share", m.sideways_clip_share)
      .number("direction_calls", m.direction_calls);
  if (m.tag_seconds.empty()) return json;
  return json.object("tag_seconds", tags)
      .number("constraint_violations", double(m.constraint_violations))
      .number("constraint_matches", m.constraint_matches)
      .number("unsatisfied_matches", m.unsatisfied_matches);
}

// One named configuration of the ablation tables.
struct Variant {
  std::string name;
  PathRunOptions options;
  std::shared_ptr<const Database> db;      // another database (the longer query's), or the main one
  const FeatureSearch* search = nullptr;
};

std::vector<Variant> table2_variants(const PathRunOptions& base) {
  std::vector<Variant> v(8, Variant{"", base, nullptr, nullptr});
  v[0].name = "full";
  v[1].name = "no path smoothing";
  v[1].options.shaping.smooth = false;
  v[2].name = "desired: current frame";
  v[2].options.follower.query.desired = DesiredPosition::CurrentFrame;
  v[3].name = "desired: nearest point";
  v[3].options.follower.query.desired = DesiredPosition::Nearest;
  v[4].name = "no speed limit";
  v[4].options.follower.query.speed_limit = false;
  v[5].name = "no corner modification";
  v[5].options.follower.query.corner_fix = false;
  v[6].name = "raw future query";
  v[6].options.follower.query.desired = DesiredPosition::CurrentFrame;
  v[6].options.follower.query.speed_limit = false;
  v[6].options.follower.query.corner_fix = false;
  v[7].name = "no root adjustment";
  v[7].options.follower.adjust_to_path = false;
  return v;
}

std::vector<Variant> table1_variants(const PathRunOptions& base) {
  std::vector<Variant> v(3, Variant{"", base, nullptr, nullptr});
  v[0].name = "LHMM(3,3)";
  v[1].name = "LHMM(10,3)";
  v[1].options.follower.k = 10;
  v[2].name = "BMM = LHMM(1,1)";
  v[2].options.follower.k = 1;
  v[2].options.follower.levels = 1;
  return v;
}

// Runs `variants` on every test path; prints rows of `columns(metrics)` and returns the JSON rows.
template <typename Cell>
std::vector<JsonObject> run_table(const char* title, const std::shared_ptr<const Database>& db, const FeatureSearch& search,
                                  const std::vector<Variant>& variants, const std::string& out, const Cell& cell) {
  const std::vector<TestPath> paths = test_paths();
  std::printf("\n%s\n%-26s", title, "configuration");
  for (const TestPath& p : paths) std::printf(" %22s", p.name.c_str());
  std::printf("\n");
  std::vector<JsonObject> rows;
  for (const Variant& v : variants) {
    std::printf("%-26s", v.name.c_str());
    for (const TestPath& p : paths) {
      PathRunOptions o = v.options;
      o.shaping.speed_scale = p.speed_scale;
      CharacterTrack track;
      Path path;
      const PathMetrics m = run_path(v.db ? v.db : db, v.search ? *v.search : search, p.samples, o, track, path);
      std::printf(" %22s", cell(m).c_str());
      std::fflush(stdout);
      rows.push_back(metrics_json(m).text("configuration", v.name).text("path", p.name));
      if (!out.empty()) {
        std::string file = v.name + "-" + p.name;
        for (char& c : file) c = std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
        write_path_svg(out + "/" + file + ".svg", path, track, v.name + ", " + p.name);
      }
    }
    std::printf("\n");
  }
  return rows;
}

std::string distance_cell(const PathMetrics& m) {
  char text[32];
  std::snprintf(text, sizeof text, m.completed ? "%.4f" : "%.4f (fail)", m.avg_distance_m);
  return text;
}

std::string timing_cell(const PathMetrics& m) {
  char text[40];
  std::snprintf(text, sizeof text, "%.3f ms %4.0f knn %.3f m", m.ms_per_lhmm, m.knn_calls_per_lhmm, m.avg_distance_m);
  return text;
}

int run_ablation(const std::shared_ptr<const Database>& db, const FeatureSearch& search, const PathRunOptions& base,
                 const cxxopts::ParseResult& args) {
  FeatureSearch long_search;
  std::vector<Variant> timing = table1_variants(base);
  if (args.count("long-db")) {
    std::string error;
    const std::shared_ptr<const Database> long_db = Database::load_file(args["long-db"].as<std::string>(), error);
    if (long_db == nullptr || !long_search.build(long_db, error)) throw InputError(error);
    Variant longer{"BMM, longer query", base, long_db, &long_search};
    longer.options.follower.k = 1;
    longer.options.follower.levels = 1;
    timing.push_back(longer);
  } else {
    std::printf("(Table 1's \"BMM with longer queries\" row needs --long-db: a database imported with "
                "--features configs/features/locomotion-long.toml)\n");
  }
  const std::string out = args.count("out") ? args["out"].as<std::string>() : "";
  if (!out.empty()) std::filesystem::create_directories(out);
  const std::vector<JsonObject> table2 = run_table("Table 2: average distance to the path (m); (fail) = not completed",
                                                   db, search, table2_variants(base), out, distance_cell);
  const std::vector<JsonObject> table1 = run_table("Table 1: median ms per LHMM call, kNN calls per call, distance (m)",
                                                   db, search, timing, "", timing_cell);
  if (args.count("json")) write_json(args["json"].as<std::string>(), JsonObject().objects("table2", table2).objects("table1", table1));
  return 0;
}

std::vector<TestPath> all_test_paths() {
  std::vector<TestPath> paths = test_paths();
  for (TestPath& p : facing_test_paths()) paths.push_back(std::move(p));
  return paths;
}

std::string facing_cell(const PathMetrics& m) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f m%s %5.1f deg %3.0f%%", m.avg_distance_m, m.completed ? "" : " (fail)",
                m.facing_error_deg, 100.0 * m.sideways_clip_share);
  return text;
}

// The facing modes on every test path: distance, facing error against the intended facing and the
// share of frames from sideways or backward clips (Lee, Kwon & Lee 2023 Sec. VI-D-G, Fig. 10).
int run_facing_table(const std::shared_ptr<const Database>& db, const FeatureSearch& search, const PathRunOptions& base,
                     const cxxopts::ParseResult& args) {
  std::vector<std::pair<std::string, PathRunOptions>> modes{{"tangent", base}, {"joystick", base}};
  modes[0].second.follower.query.direction = nullptr;
  modes[1].second.follower.query.direction = nullptr;
  if (args.count("direction-net")) {
    modes.emplace_back("net", base);
    modes.back().second.follower.query.direction = load_direction_net(args["direction-net"].as<std::string>());
  } else {
    std::printf("(the net column needs --direction-net FILE)\n");
  }
  const std::string out = args.count("out") ? args["out"].as<std::string>() : "";
  if (!out.empty()) std::filesystem::create_directories(out);
  std::printf("Facing modes: average distance to the path, mean facing error against the intended facing (the "
              "tangent, or +Z on the last three paths), share of frames from sideways / backward clips\n%-20s", "path");
  for (const auto& mode : modes) std::printf(" %30s", mode.first.c_str());
  std::printf("\n");
  std::vector<JsonObject> rows;
  for (const TestPath& p : all_test_paths()) {
    std::printf("%-20s", p.name.c_str());
    for (const auto& [name, options] : modes) {
      const bool joystick = name == "joystick";
      if (joystick && !std::isfinite(p.joystick_deg)) {
        std::printf(" %30s", "-");
        continue;
      }
      PathRunOptions o = options;
      o.shaping.speed_scale = p.speed_scale;
      o.fixed_facing = p.fixed_facing;
      o.follower.query.start_facing_offset = p.start_facing_deg * kRadPerDeg;
      o.follower.query.facing_offset = joystick ? p.joystick_deg * kRadPerDeg : 0.0f;
      CharacterTrack track;
      Path path;
      const PathMetrics m = run_path(db, search, p.samples, o, track, path);
      std::printf(" %30s", facing_cell(m).c_str());
      std::fflush(stdout);
      rows.push_back(metrics_json(m).text("facing", name).text("path", p.name));
      if (!out.empty()) write_path_svg(out + "/" + name + "-" + p.name + ".svg", path, track, name + ", " + p.name);
    }
    std::printf("\n");
  }
  if (args.count("json")) write_json(args["json"].as<std::string>(), JsonObject().objects("facing_table", rows));
  return 0;
}

// A path to follow and where it came from (for messages).
struct NamedPath {
  std::string name;
  std::vector<PathSample> samples;
};

// The paths to follow, one per character: the --path files or the named test path.
std::vector<NamedPath> chosen_paths(const cxxopts::ParseResult& args, PathRunOptions& options) {
  std::vector<NamedPath> paths;
  if (args.count("path")) {
    for (const std::string& file : args["path"].as<std::vector<std::string>>()) paths.push_back({file, load_path(file)});
    return paths;
  }
  const std::string name = args["test-path"].as<std::string>();
  for (const TestPath& p : all_test_paths()) {
    if (p.name != name) continue;
    if (!args.count("speed-scale")) options.shaping.speed_scale = p.speed_scale;
    if (!args.count("start-facing")) options.follower.query.start_facing_offset = p.start_facing_deg * kRadPerDeg;
    options.fixed_facing = p.fixed_facing;
    paths.push_back({"test path " + p.name, p.samples});
    return paths;
  }
  throw InputError("--test-path: unknown path '" + name + "'");
}

void print_metrics(size_t character, const PathRunOptions& o, const PathMetrics& m) {
  std::printf("lmm-path: character %zu, LHMM(%d, %d), %d frames, %d matches (%.1f kNN calls each, median %.3f ms), "
              "%d transitions\n  average distance to the path %.4f m, %s\n",
              character, o.follower.k, o.follower.levels, m.frames, m.matches, m.knn_calls_per_lhmm, m.ms_per_lhmm,
              m.transitions, m.avg_distance_m,
              m.completed ? ("completed in " + std::to_string(m.seconds_to_complete) + " s").c_str()
                          : ("NOT completed (the desired position did not reach the path's end within the run limit of " +
                             format_number(m.run_limit_s) + " s)").c_str());
  if (!o.follower.search.constraint.allows_all()) {
    std::printf("  constraint: %ld updates on frames it rejects, %d matches it made, %d found no allowed frame\n",
                m.constraint_violations, m.constraint_matches, m.unsatisfied_matches);
  }
  const std::string direction =
      m.direction_calls > 0 ? ", " + std::to_string(m.direction_calls) + " DirectionNet predictions" : "";
  if (!std::isfinite(m.facing_error_deg)) {  // no frame to measure (JSON: null)
    std::printf("  facing not measured: the path never moves faster than %.1f m/s before it is completed%s\n",
                double(kFacingPathSpeed), direction.c_str());
    return;
  }
  std::printf("  facing %.1f deg from the intended facing on average, %.0f%% of the frames from sideways / backward "
              "clips%s\n",
              m.facing_error_deg, 100.0 * m.sideways_clip_share, direction.c_str());
}

void write_outputs(const std::string& dir, const Database& db, const std::vector<CharacterTrack>& tracks,
                   const std::vector<Path>& paths, float dt, float unit_scale, const SkinnedMesh& mesh) {
  std::filesystem::create_directories(dir);
  for (size_t c = 0; c < tracks.size(); ++c) {
    const std::string suffix = c == 0 ? "" : "_" + std::to_string(c);
    write_motion_files(dir + "/motion" + suffix, db.skeleton(), tracks[c].clip, unit_scale, mesh);
    write_path_svg(dir + "/plot" + suffix + ".svg", paths[c], tracks[c], "lmm-path, character " + std::to_string(c));
  }
  write_root_csv(dir + "/root.csv", tracks, dt);
  spdlog::info("wrote {}/motion.bvh ({} m per unit), motion.glb (metres), root.csv (desired = the desired path point) and "
               "plot.svg{}", dir, format_number(unit_scale),
               tracks.size() > 1 ? " (motion_N.bvh, motion_N.glb, plot_N.svg for the others)" : "");
}

// cxxopts reads one-letter names as short options (-k 3); the documented --k / --l (and
// --k=3) spellings are rewritten to them.
std::vector<std::string> with_short_k_and_l(int argc, char** argv) {
  std::vector<std::string> words(argv, argv + argc);
  for (std::string& w : words) {
    for (const char* name : {"--k", "--l"}) {
      if (w == name) w = w.substr(1);
      if (w.rfind(std::string(name) + "=", 0) == 0) w = w.substr(1, 2) + w.substr(4);
    }
  }
  return words;
}

int run(int argc, char** argv) {
  cxxopts::Options options = make_options();
  std::vector<std::string> words = with_short_k_and_l(argc, argv);
  std::vector<char*> pointers;
  for (std::string& w : words) pointers.push_back(w.data());
  const auto args = options.parse(int(pointers.size()), pointers.data());
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  const int sources =
      int((args.count("path") > 0) + args.count("test-path") + args.count("ablation") + args.count("facing-table"));
  if (!args.count("db") || sources != 1) {
    spdlog::error("lmm-path: need --db FILE and exactly one of --path FILE, --test-path NAME, --ablation or "
                  "--facing-table (see --help)");
    return 2;
  }
  PathRunOptions o = run_options(args);
  check_mesh_option(args["mesh"].as<std::string>());
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(args["db"].as<std::string>(), error);
  if (db == nullptr) throw InputError(error);
  const SkinnedMesh mesh = output_mesh(args["mesh"].as<std::string>(), db->skeleton());  // a bad --mesh fails at once
  if (!db->speeds().valid()) spdlog::warn("{}", speeds_warning(db->speeds(), args["db"].as<std::string>()));
  FeatureSearch search;
  if (!search.build(db, error)) throw InputError(error);
  o.follower.search.constraint = constraint_of(args, *db);
  if (args.count("ablation")) return run_ablation(db, search, o, args);
  if (args.count("facing-table")) return run_facing_table(db, search, o, args);
  std::string unit_note;
  const float unit_scale = output_unit_scale(args["units"].as<std::string>(), db->source_unit_scale(),
                                             args["db"].as<std::string>(), unit_note);
  if (args.count("out") && !unit_note.empty()) spdlog::info("{}", unit_note);
  const std::vector<NamedPath> samples = chosen_paths(args, o);
  std::vector<CharacterTrack> tracks(samples.size());
  std::vector<Path> paths(samples.size());
  std::vector<JsonObject> characters;
  for (size_t c = 0; c < samples.size(); ++c) {
    o.start = Vec3{2.0f * float(c), 0.0f, 0.0f};
    PathMetrics m;
    try {
      m = run_path(db, search, samples[c].samples, o, tracks[c], paths[c]);
    } catch (const InputError& e) {
      throw InputError(samples[c].name + ": " + e.what());
    }
    print_metrics(c, o, m);
    characters.push_back(metrics_json(m));
  }
  if (args.count("out")) {
    write_outputs(args["out"].as<std::string>(), *db, tracks, paths, o.dt, unit_scale, mesh);
  }
  if (args.count("json")) {
    JsonObject json = characters[0];
    if (characters.size() > 1) json.objects("characters", characters);
    write_json(args["json"].as<std::string>(), json);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-path", [&] { return run(argc, argv); });
}
