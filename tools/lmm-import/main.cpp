// lmm-import: BVH and glTF files or folders -> motion database (*.mmdb) with matching features, or
// (--convert) each clip as a .glb or .bvh file.
#include <chrono>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/report.hpp"
#include "lmm/import/gltf.hpp"
#include "lmm/import/import.hpp"

using namespace lmm::pipeline;
using lmm::printable;

namespace {

cxxopts::Options make_options() {
  const std::string configs = default_config_dir();
  cxxopts::Options o("lmm-import",
                     "Import BVH or glTF 2.0 motion capture into a motion database (*.mmdb), or convert it.\n"
                     "Example: lmm-import data/bandai-loco --out loco.mmdb --json summary.json\n"
                     "         lmm-import data/bandai-loco --convert glb --out loco-glb/");
  o.add_options()
      ("inputs", "BVH, .gltf or .glb files or folders (searched recursively)", cxxopts::value<std::vector<std::string>>())
      ("o,out", "output database path (with --convert: output folder)", cxxopts::value<std::string>())
      ("convert", "write each clip to --out as glb or bvh (in the skeleton config's unit) instead of importing",
       cxxopts::value<std::string>())
      ("mesh", "with --convert glb: skinned mesh in each .glb: none, spindles (generated around the bones), or "
               "FILE.glb / .gltf: its skinned mesh, bound in the skeleton's rest pose, joints matched by name",
       cxxopts::value<std::string>()->default_value("none"))
      ("skeleton", "skeleton config (TOML)", cxxopts::value<std::string>()->default_value(configs + "/skeletons/bandai.toml"))
      ("features", "feature schema (TOML)", cxxopts::value<std::string>()->default_value(configs + "/features/locomotion27.toml"))
      ("fps", "frame rate of the database", cxxopts::value<float>()->default_value("60"))
      ("up-axis", "up axis of the files, y or z (default: the skeleton config's up_axis, else y)",
       cxxopts::value<std::string>())
      ("no-mirror", "do not add mirrored copies of the clips")
      ("skip-bad", "skip bad files (unreadable, out of range, or failing to process) with a warning instead of stopping")
      ("threads", "worker threads", cxxopts::value<int>()->default_value("2"))
      ("json", "write a JSON summary (frames, clips, seconds_wall, ...) to this path", cxxopts::value<std::string>())
      ("h,help", "show this help");
  o.parse_positional({"inputs"});
  o.positional_help("DIR_OR_MOTION_FILE...");
  return o;
}

// Logs progress at every 10% of a stage.
void log_progress(const char* stage, int done, int total) {
  if (done == total || done * 10 / total != (done - 1) * 10 / total) {
    spdlog::info("{:8} {:5}/{} ({}%)", stage, done, total, done * 100 / total);
  }
}

// --convert: every clip of `options.inputs` to `out_dir` as `format` (glb or bvh).
int convert(const ImportOptions& options, const std::string& format, const std::string& out_dir,
            std::chrono::steady_clock::time_point start) {
  if (format != "glb" && format != "bvh") throw InputError("--convert: '" + printable(format) + "' is not glb or bvh");
  const std::vector<std::string> written =
      convert_motion_files(options, format == "glb" ? MotionFormat::Glb : MotionFormat::Bvh, out_dir);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("wrote {} .{} file{} to {} in {:.1f} s", written.size(), format, written.size() == 1 ? "" : "s", out_dir, seconds);
  return 0;
}

int run(int argc, char** argv) {
  cxxopts::Options options = make_options();
  const cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help")) {
    std::puts(options.help().c_str());
    return 0;
  }
  if (!args.count("inputs") || !args.count("out")) {
    spdlog::error("lmm-import: need input BVH or glTF files or folders and --out PATH (see --help)");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  ImportOptions opt;
  opt.inputs = args["inputs"].as<std::vector<std::string>>();
  opt.skeleton = load_skeleton_config(args["skeleton"].as<std::string>());
  if (args.count("up-axis") && !parse_up_axis(args["up-axis"].as<std::string>(), opt.skeleton.up_axis)) {
    throw InputError("--up-axis: '" + printable(args["up-axis"].as<std::string>()) + "' is not y or z");
  }
  opt.features = load_feature_config(args["features"].as<std::string>());
  opt.fps = args["fps"].as<float>();
  if (!(opt.fps >= 1.0f && opt.fps <= 1000.0f)) throw InputError("--fps must be between 1 and 1000");
  opt.mirror = !args.count("no-mirror");
  opt.skip_bad = args.count("skip-bad") > 0;
  opt.threads = std::max(1, args["threads"].as<int>());
  opt.mesh = args["mesh"].as<std::string>();
  check_mesh_option(opt.mesh);
  if (opt.mesh != "none" && !(args.count("convert") && args["convert"].as<std::string>() == "glb")) {
    throw InputError("--mesh needs --convert glb");
  }
  opt.warn = [](const std::string& m) { spdlog::warn("{}", m); };
  opt.info = [](const std::string& m) { spdlog::info("{}", m); };
  opt.progress = log_progress;
  const std::string out = args["out"].as<std::string>();
  if (args.count("convert")) return convert(opt, args["convert"].as<std::string>(), out, start);
  const ImportSummary s = import_database(opt, out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("wrote {}: {} frames, {} clips, {} joints, {} feature dims, {:.0f} Hz, {:.1f} MB, "
               "{:.1f}% contact labels, {} files ({} skipped) in {:.1f} s",
               out, s.frames, s.clips, s.joints, s.feature_dims, s.fps, s.bytes / 1e6,
               100.0 * s.contact_ratio, s.files, s.skipped_files, seconds);
  spdlog::info("skeleton height: rest {:.3f} m ('{}' to '{}' along the bones), median standing {:.3f} m "
               "('{}' above the ground)", s.height.rest, s.height.foot, s.height.top, s.height.standing, s.height.top);
  if (!s.speeds.valid()) spdlog::warn("{}", speeds_warning(s.speeds, out));  // no locomotion at all
  if (s.moving_ratio < kStandingMovingRatio) {
    spdlog::info("standing-only data: the root moves ({:.1f} m/s or faster) in {:.1f}% of frames, so feet in "
                 "contact in most frames are expected", kMovingSpeed, 100.0 * s.moving_ratio);
  }
  std::vector<JsonObject> contact_joints;
  for (const ContactJointSummary& c : s.contact_joints) {
    spdlog::info("contacts of {}: {:.1f}% of frames (below {:.3f} m and the velocity threshold)", c.joint,
                 100.0 * c.ratio, c.height_threshold);
    contact_joints.push_back(
        JsonObject().text("joint", c.joint).number("ratio", c.ratio).number("height_threshold_m", c.height_threshold));
  }
  std::vector<JsonObject> tags;
  std::string tag_counts;
  for (const TagCount& t : s.tags) {
    tag_counts += fmt::format("{}{} {} ({:.1f}%)", tag_counts.empty() ? "" : ", ", t.tag, t.frames,
                              100.0 * t.frames / std::max(1, s.frames));
    tags.push_back(JsonObject().text("tag", t.tag).number("frames", t.frames));
  }
  if (!tag_counts.empty()) spdlog::info("tagged frames: {}", tag_counts);
  std::string actions;
  for (const std::string& tag : s.action_tags) actions += (actions.empty() ? "" : ", ") + tag;
  if (!actions.empty()) {
    spdlog::info("action tags (their frames are entered only by play_action or a constraint that requires a tag): {}",
                 actions);
  }
  if (s.events > 0 || s.no_entry_frames > 0 || s.biased_frames > 0) {
    spdlog::info("{} events, {} no-entry frames, {} frames with a cost bias", s.events, s.no_entry_frames,
                 s.biased_frames);
  }
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(),
               JsonObject()
                   .number("frames", s.frames)
                   .number("clips", s.clips)
                   .number("seconds_wall", seconds)
                   .number("files", s.files)
                   .number("skipped_files", s.skipped_files)
                   .number("joints", s.joints)
                   .number("feature_dims", s.feature_dims)
                   .number("fps", s.fps)
                   .number("bytes", double(s.bytes))
                   .number("contact_ratio", s.contact_ratio)
                   .number("moving_ratio", s.moving_ratio)
                   .text("up_axis", up_axis_name(opt.skeleton.up_axis))
                   .objects("contact_joints", contact_joints)
                   .number("rest_height_m", s.height.rest)
                   .number("standing_height_m", s.height.standing)
                   .objects("tags", tags)
                   .texts("action_tags", s.action_tags)
                   .number("events", s.events)
                   .number("no_entry_frames", s.no_entry_frames)
                   .number("biased_frames", s.biased_frames));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-import", [&] { return run(argc, argv); });
}
