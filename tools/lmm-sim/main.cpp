// lmm-sim: drive database (--db) or learned (--model) motion-matching characters from scripted or
// random gamepad input.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/report.hpp"
#include "lmm/engines/simulation.hpp"
#include "lmm/import/config.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

cxxopts::Options make_options() {
  cxxopts::Options o("lmm-sim",
                     "Run database motion matching (--db X.mmdb) or learned motion matching (--model X.lmmw) on scripted\n"
                     "(--input) or random (--random) gamepad input\n"
                     "and write the motion (BVH), root trajectories (CSV), a plot (SVG) and metrics (JSON).\n"
                     "Input CSV: header with time,stick_x,stick_y,camera_deg,strafe,gait[,right_x,right_y];\n"
                     "each row holds from its time until the next row.");
  o.add_options()
      ("db", "motion database (*.mmdb): database motion matching", cxxopts::value<std::string>())
      ("model", "model bundle (*.lmmw): learned motion matching, no database needed", cxxopts::value<std::string>())
      ("input", "input script (CSV)", cxxopts::value<std::string>())
      ("random", "use seeded random input")
      ("seed", "random seed (character i uses seed + i)", cxxopts::value<uint32_t>()->default_value("1"))
      ("random-strafe", "random input with strafe requests: facing held, stick left, right or back (needs sideways / "
       "backward steps in the data)")
      ("seconds", "simulated time", cxxopts::value<float>()->default_value("60"))
      ("dt", "time step in seconds (0 < dt <= 0.25)", cxxopts::value<float>()->default_value("0.0166667"))
      ("characters", "number of characters", cxxopts::value<int>()->default_value("1"))
      ("foot-lock", "lock feet in contact with two-joint IK (with --model: the decoder's contacts)")
      ("no-adjust", "do not pull the root towards the simulated root")
      ("controller", "controller config (TOML, docs/configs.md): speeds and spring halflives; speeds left out are "
       "measured from the data", cxxopts::value<std::string>()->default_value(""))
      ("search-interval", "seconds between searches (projections with --model)", cxxopts::value<float>()->default_value("0.1"))
      ("transition", "--model: 'blend' (latent blending) or 'inertialize'", cxxopts::value<std::string>()->default_value("blend"))
      ("blend-time", "--model: seconds of latent blending per transition", cxxopts::value<float>()->default_value("0.2"))
      ("max-prediction", "--model: seconds before the projector replaces a prediction", cxxopts::value<float>()->default_value("2"))
      ("transition-cost", "cost added to every transition candidate", cxxopts::value<float>()->default_value("0"))
      ("random-constraints", "a random tag constraint at every input key (require, exclude or require any of the "
       "database's tags, or with --model the bundle's)")
      ("state", "game state (a [states.NAME] of --controller) to start in", cxxopts::value<std::string>())
      ("schema", "expected feature schema name (error when the database differs)", cxxopts::value<std::string>()->default_value(""))
      ("out", "output folder (motion.bvh, motion.glb, root.csv, plot.svg)", cxxopts::value<std::string>())
      ("mesh", "skinned mesh in motion.glb: none, spindles (generated around the bones), or FILE.glb / .gltf: "
               "its skinned mesh, bound in the skeleton's rest pose, joints matched by name",
       cxxopts::value<std::string>()->default_value("none"))
      ("units", "BVH length unit: file (that of the imported BVH files), m, cm, mm or metres per unit",
       cxxopts::value<std::string>()->default_value("file"))
      ("json", "write metrics as JSON", cxxopts::value<std::string>())
      ("h,help", "show this help");
  return o;
}

constexpr int kMaxSimCharacters = 4096;

float checked_dt(float dt) {
  if (dt > 0.0f && dt <= kMaxDt) return dt;
  const float clamped = dt > kMaxDt ? kMaxDt : 1.0f / 60.0f;
  spdlog::warn("--dt {} is outside (0, {}]; using {}", dt, kMaxDt, clamped);
  return clamped;
}

void write_outputs(const std::string& dir, const Skeleton& skeleton, const std::vector<CharacterTrack>& tracks, float dt,
                   float unit_scale, const SkinnedMesh& mesh) {
  std::filesystem::create_directories(dir);
  for (size_t c = 0; c < tracks.size(); ++c) {
    write_motion_files(dir + (c == 0 ? "/motion" : "/motion_" + std::to_string(c)), skeleton, tracks[c].clip, unit_scale, mesh);
  }
  write_root_csv(dir + "/root.csv", tracks, dt);
  write_svg(dir + "/plot.svg", skeleton, tracks, dt);
  spdlog::info("wrote {}/motion.bvh ({} m per unit), motion.glb (metres), {}/root.csv, {}/plot.svg", dir, format_number(unit_scale), dir, dir);
}

// Prints the errors of one kind of request (lmm::pipeline::RequestErrors).
void print_requests(const char* kind, const RequestErrors& e) {
  if (e.frames == 0) return;
  std::printf("  %s (%d settled frames): median facing error %.1f deg, median velocity error %.2f m/s, mean speed / desired %.2f\n",
              kind, e.frames, e.facing_error_deg, e.velocity_error_m_s, e.speed_ratio);
}

// The clips most strafing frames were played from (at most `count`, most first) with their share.
// Prints the gameplay measurements of database characters (docs/cli-sim-path.md).
void print_gameplay(const GameplayMetrics& g) {
  long events = g.action_ends;
  for (const auto& e : g.events) events += e.second;
  std::printf("  gameplay: constraint violations %ld, forbidden entries %ld, unsatisfied searches %ld, events %ld "
              "(%ld updates mismatched), action ends %ld\n",
              g.constraint_violations, g.forbidden_entries, g.unsatisfied_searches, events, g.event_mismatches,
              g.action_ends);
  std::printf("  action frames without an action: %.2f s free, %.2f s idle (standing on an action clip's still frames)\n",
              g.free_action_seconds, g.idle_action_seconds);
  if (g.idle_updates > 0) {
    const double standing = double(g.idle_standing_updates);
    std::printf("  idle: %.1f%% of settled released-stick updates on standing frames, foot speed %.2f cm/s, root "
                "turn %.2f deg/s; %zu pushes moved again in %.2f s (max)\n",
                100.0 * standing / double(g.idle_updates), standing > 0 ? g.idle_foot_speed_sum_cm_s / standing : 0.0,
                standing > 0 ? g.idle_root_turn_sum_deg_s / standing : 0.0, g.resume_s.size(),
                g.resume_s.empty() ? 0.0 : *std::max_element(g.resume_s.begin(), g.resume_s.end()));
  }
  for (const ActionRecord& a : g.actions) {
    const std::string frames = a.first < 0 ? "" : "frames " + std::to_string(a.first) + ".." + std::to_string(a.last) +
                                                      " (its run ends at " + std::to_string(a.run_last) + "), " +
                                                      (a.in_order ? "in order, " : "OUT OF ORDER, ");
    std::printf("  action %s: %s%.2f s, %s, moving %.2f s after its end, fastest joint %.1f m/s\n", a.tags.c_str(),
                frames.c_str(), a.seconds, a.ended ? "ended" : "NOT ENDED", a.resume_s, a.max_joint_speed_m_s);
  }
}

std::vector<JsonObject> top_strafe_clips(const Database& db, const std::vector<int>& frames_per_clip, size_t count) {
  std::vector<size_t> order;
  long total = 0;
  for (size_t c = 0; c < frames_per_clip.size(); ++c) {
    if (frames_per_clip[c] > 0) order.push_back(c);
    total += frames_per_clip[c];
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return frames_per_clip[a] > frames_per_clip[b]; });
  order.resize(std::min(order.size(), count));
  const char* travel_names[] = {"still", "forward", "side", "back"};
  const std::vector<Travel> travel = clip_travel(db);
  std::vector<JsonObject> clips;
  for (size_t c : order) {
    clips.push_back(JsonObject()
                        .text("clip", db.ranges()[c].name)
                        .text("travel", travel_names[int(travel[c])])
                        .number("share", double(frames_per_clip[c]) / double(total)));
  }
  return clips;
}

CharacterSettings database_settings(const cxxopts::ParseResult& args) {
  CharacterSettings settings;
  settings.foot_lock = args.count("foot-lock") > 0;
  settings.adjust_to_simulation = !args.count("no-adjust");
  settings.search_interval = args["search-interval"].as<float>();
  settings.search.transition_cost = args["transition-cost"].as<float>();
  settings.expected_schema = args["schema"].as<std::string>();
  return settings;
}

// The game states of --controller ([states.NAME] tables; none without a config).
std::vector<StateConfig> controller_states(const cxxopts::ParseResult& args) {
  const std::string path = args["controller"].as<std::string>();
  if (args.count("state") && path.empty()) throw InputError("--state needs --controller FILE with [states." +
                                                            args["state"].as<std::string>() + "]");
  return path.empty() ? std::vector<StateConfig>{} : load_controller_config(path).states;
}

// A key at time 0 that sets state `name` (--state).
InputKey start_state(const std::string& name) {
  InputKey key;
  key.gameplay.state = name;
  return key;
}

LearnedSettings learned_settings(const cxxopts::ParseResult& args) {
  LearnedSettings settings;
  settings.adjust_to_simulation = !args.count("no-adjust");
  settings.search_interval = args["search-interval"].as<float>();
  settings.transition_cost = args["transition-cost"].as<float>();
  settings.expected_schema = args["schema"].as<std::string>();
  settings.blend_time = args["blend-time"].as<float>();
  settings.max_prediction = args["max-prediction"].as<float>();
  settings.foot_lock = args.count("foot-lock") > 0;
  const std::string transition = args["transition"].as<std::string>();
  if (transition == "blend") {
    settings.transition = LearnedTransition::LatentBlend;
  } else if (transition == "inertialize") {
    settings.transition = LearnedTransition::Inertialize;
  } else {
    throw InputError("--transition: '" + transition + "' is not 'blend' or 'inertialize'");
  }
  if (!(settings.blend_time >= 0.0f && settings.blend_time <= 5.0f)) throw InputError("--blend-time must be in [0, 5]");
  if (!(settings.max_prediction > 0.0f)) throw InputError("--max-prediction must be positive");
  return settings;
}

// Adds --random-constraints (over the tags of `tags` in `present`) and --state to every script.
void add_gameplay_keys(const cxxopts::ParseResult& args, const TagNames& tags, TagMask present,
                       std::vector<InputScript>& scripts) {
  for (size_t c = 0; c < scripts.size(); ++c) {
    if (args.count("random-constraints")) add_random_constraints(scripts[c], tags, present, args["seed"].as<uint32_t>() + uint32_t(c));
    if (args.count("state")) scripts[c].keys.insert(scripts[c].keys.begin(), start_state(args["state"].as<std::string>()));
  }
}

int run(int argc, char** argv) {
  cxxopts::Options options = make_options();
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  if (args.count("db") == args.count("model") || args.count("input") == args.count("random")) {
    spdlog::error("lmm-sim: need exactly one of --db FILE / --model FILE and exactly one of --input FILE / --random (see --help)");
    return 2;
  }
  const float seconds = args["seconds"].as<float>();
  if (!(seconds > 0.0f && seconds <= 86400.0f)) throw InputError("--seconds must be in (0, 86400]");
  check_mesh_option(args["mesh"].as<std::string>());
  const float dt = checked_dt(args["dt"].as<float>());
  const int count = args["characters"].as<int>();
  if (count < 1 || count > kMaxSimCharacters) {
    throw InputError("--characters must be in [1, " + std::to_string(kMaxSimCharacters) + "] (got " +
                     std::to_string(count) + ")");
  }
  std::vector<InputScript> scripts;
  for (int c = 0; c < count; ++c) {
    scripts.push_back(args.count("input") ? load_input_script(args["input"].as<std::string>())
                                          : random_input_script(args["seed"].as<uint32_t>() + uint32_t(c), seconds,
                                                                        args.count("random-strafe") > 0));
  }
  std::vector<CharacterTrack> tracks;
  std::shared_ptr<const Database> db;
  std::shared_ptr<const Model> model;
  SimMetrics m;
  SkinnedMesh mesh;  // read before the run, so that a bad --mesh fails at once
  std::string error;
  const bool learned = args.count("model") > 0;
  if (learned) {
    model = Model::load_file(args["model"].as<std::string>(), error);
    if (model == nullptr) throw InputError(error);
    mesh = output_mesh(args["mesh"].as<std::string>(), model->skeleton());
    LearnedSettings settings = learned_settings(args);
    settings.controller = resolve_controller(args["controller"].as<std::string>(), model->speeds(), "the bundle");
    settings.speeds_from_data = false;
    add_gameplay_keys(args, model->tags(), model->tags().all(), scripts);
    m = run_simulation(model, settings, scripts, seconds, dt, tracks, controller_states(args));
  } else {
    db = Database::load_file(args["db"].as<std::string>(), error);
    if (db == nullptr) throw InputError(error);
    mesh = output_mesh(args["mesh"].as<std::string>(), db->skeleton());
    if (args.count("foot-lock") && db->contact_joints().empty()) {
      throw InputError(args["db"].as<std::string>() + ": --foot-lock needs contact labels, and the database has no "
                       "contact joints (its skeleton config had no [contacts] joints when it was imported)");
    }
    FeatureSearch search;
    if (!search.build(db, error)) throw InputError(error);
    CharacterSettings settings = database_settings(args);
    settings.controller = resolve_controller(args["controller"].as<std::string>(), db->speeds(), "the database");
    settings.speeds_from_data = false;
    add_gameplay_keys(args, db->annotations().tag_set(), tags_present(*db), scripts);
    m = run_simulation(db, search, settings, scripts, seconds, dt, tracks, controller_states(args));
  }
  const Skeleton& skeleton = learned ? model->skeleton() : db->skeleton();
  std::string unit_note;
  const float unit_scale =
      output_unit_scale(args["units"].as<std::string>(), learned ? model->source_unit_scale() : db->source_unit_scale(),
                        args[learned ? "model" : "db"].as<std::string>(), unit_note);
  if (args.count("out") && !unit_note.empty()) spdlog::info("{}", unit_note);
  std::printf("lmm-sim: %d character(s) x %d frames (dt %.4f s)\n"
              "  searches %d, transitions %d, median update %.1f us\n"
              "  foot slide %.2f cm/s, jitter %.2f m/s^2, trajectory error %.3f m (1 s ahead)\n"
              "  NaN frames %d, still frames with stick held %d, sanitised inputs %d, clamped dt %d\n"
              "  forced projections %d, non-finite network outputs %d, clamped states %d, farthest joint from the root %.2f m\n",
              m.characters, m.frames, dt, m.searches, m.transitions, m.us_per_update, m.foot_slide_cm_per_s,
              m.jitter, m.trajectory_error_m, m.nan_frames, m.still_frames, m.sanitized_inputs, m.clamped_dt,
              m.forced_projections, m.nonfinite_states, m.clamped_states, m.max_joint_distance_m);
  print_requests("strafing", m.strafe);
  print_requests("forward", m.forward);
  std::vector<JsonObject> strafe_clips;
  if (m.strafe.frames > 0 && !learned) {
    std::printf("  strafing frames played from sideways / backward clips: %.1f%%\n", 100.0 * m.strafe_clip_share);
    strafe_clips = top_strafe_clips(*db, m.strafe_frames_per_clip, 5);
  }
  if (m.gameplay.measured) print_gameplay(m.gameplay);
  if (m.sanitized_inputs > 0) spdlog::warn("{} non-finite input values were treated as zero", m.sanitized_inputs);
  if (args.count("out")) {
    write_outputs(args["out"].as<std::string>(), skeleton, tracks, dt, unit_scale, mesh);
  }
  if (args.count("json")) {
    JsonObject report =
               JsonObject()
                   .number("characters", m.characters)
                   .number("frames", m.frames)
                   .number("searches", m.searches)
                   .number("transitions", m.transitions)
                   .number("foot_slide_cm_per_s", m.foot_slide_cm_per_s)
                   .number("foot_ik_error_max_cm", m.legs.ik_error_max_cm)
                   .number("foot_ik_error_mean_cm", m.legs.ik_error_mean_cm())
                   .number("leg_joint_speed_max_m_s", m.legs.leg_speed_max_m_s)
                   .number("jitter", m.jitter)
                   .number("trajectory_error_m", m.trajectory_error_m)
                   .number("us_per_update", m.us_per_update)
                   .number("us_per_update_mean", m.us_per_update_mean)
                   .number("nan_frames", m.nan_frames)
                   .number("still_frames", m.still_frames)
                   .number("sanitized_inputs", m.sanitized_inputs)
                   .number("clamped_dt", m.clamped_dt)
                   .number("forced_projections", m.forced_projections)
                   .number("nonfinite_states", m.nonfinite_states)
                   .number("clamped_states", m.clamped_states)
                   .number("max_joint_distance_m", m.max_joint_distance_m)
                   .number("strafe_frames", m.strafe.frames)
                   .number("strafe_facing_error_deg", m.strafe.facing_error_deg)
                   .number("strafe_velocity_error_m_s", m.strafe.velocity_error_m_s)
                   .number("strafe_speed_ratio", m.strafe.speed_ratio)
                   .number("strafe_clip_share", m.strafe_clip_share)
                   .number("forward_frames", m.forward.frames)
                   .number("forward_facing_error_deg", m.forward.facing_error_deg)
                   .number("forward_velocity_error_m_s", m.forward.velocity_error_m_s)
                   .number("forward_speed_ratio", m.forward.speed_ratio)
                   .objects("strafe_clips", strafe_clips)
                   .text("controller", learned ? "learned" : "database")
                   .boolean("foot_lock", args.count("foot-lock") > 0);
    if (m.gameplay.measured) report.object("gameplay", m.gameplay.json());
    write_json(args["json"].as<std::string>(), report);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-sim", [&] { return run(argc, argv); });
}
