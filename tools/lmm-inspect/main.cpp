// lmm-inspect: print what a motion database (*.mmdb), a model bundle (*.lmmw) or a glTF motion file
// holds, or how far two databases of the same clips are apart.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/database_comparison.hpp"
#include "lmm/import/animation_file.hpp"
#include "lmm/import/motion.hpp"
#include "lmm/asset/model.hpp"

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

// The names of the tags of `mask`, in bit order.
std::vector<std::string> names_of(const TagNames& tags, TagMask mask) {
  std::vector<std::string> names;
  for (int t = 0; t < tags.size(); ++t) {
    if ((mask >> t & 1) != 0) names.push_back(tags.names()[size_t(t)]);
  }
  return names;
}

// Prints an "actions" line: `names`, then what `kind` of action tags they are.
void print_actions(const char* kind, const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  std::printf("  actions      %s (%s)\n", list.c_str(), kind);
}

// Prints the database's tags (frames each), the action tags free searches leave out, no-entry and
// biased frame counts and events (count per name), when it has any; returns them as JSON keys.
JsonObject print_annotations(const Database& db) {
  const FrameAnnotations& a = db.annotations();
  std::vector<int> tag_frames(a.tag_names().size(), 0), event_counts(a.event_names().size(), 0);
  int no_entry = 0, biased = 0;
  for (int f = 0; f < db.frame_count(); ++f) {
    for (size_t t = 0; t < tag_frames.size(); ++t) tag_frames[t] += (a.tags(f) >> t) & 1 ? 1 : 0;
    no_entry += a.no_entry(f) ? 1 : 0;
    biased += a.cost_bias(f) != 0.0f ? 1 : 0;
  }
  for (const DatabaseEvent& e : a.events()) ++event_counts[size_t(e.name)];
  std::vector<JsonObject> tags, events;
  for (size_t t = 0; t < tag_frames.size(); ++t) {
    tags.push_back(JsonObject().text("name", a.tag_names()[t]).number("frames", tag_frames[t]));
    std::printf("  tag          %-20s %d frames\n", a.tag_names()[t].c_str(), tag_frames[t]);
  }
  const std::vector<std::string> actions = names_of(a.tag_set(), a.kept_out_tags());
  if (!actions.empty()) print_actions("entered only by play_action or a constraint requiring a tag", actions);
  if (no_entry > 0) std::printf("  no-entry     %d frames\n", no_entry);
  if (biased > 0) std::printf("  cost bias    %d frames\n", biased);
  for (size_t n = 0; n < event_counts.size(); ++n) {
    events.push_back(JsonObject().text("name", a.event_names()[n]).number("count", event_counts[n]));
    std::printf("  event        %-20s %d\n", a.event_names()[n].c_str(), event_counts[n]);
  }
  return JsonObject()
      .objects("tags", tags)
      .texts("kept_out_tags", actions)
      .number("no_entry_frames", no_entry)
      .number("cost_bias_frames", biased)
      .objects("events", events);
}

SkeletonHeight print_height(const Database& db) {
  const SkeletonHeight h = measure_height(db.skeleton(), db.roles(),
                                          PoseFrames{db.positions(0), db.rotations(0), db.frame_count()});
  std::printf("  height       rest %.3f m ('%s' to '%s' along the bones), median standing %.3f m ('%s' above the ground)\n",
              h.rest, h.foot.c_str(), h.top.c_str(), h.standing, h.top.c_str());
  return h;
}

// One network's line: kind, sizes, experts, MACs and parameters.
JsonObject network_json(const char* name, const NetworkWeights& net) {
  std::string layers = std::to_string(net.in);
  for (const DenseLayer& l : net.expert_layers) layers += "-" + std::to_string(l.out);
  if (net.experts > 0 && !net.mlp.empty()) layers += " |";
  for (const DenseLayer& l : net.mlp) layers += "-" + std::to_string(l.out);
  std::printf("  %-10s %-28s experts %4d top-%d %9lld MACs %9lld parameters\n", name, layers.c_str(), net.experts,
              net.top_k, static_cast<long long>(net.macs()), static_cast<long long>(net.parameter_count()));
  return JsonObject()
      .text("network", name)
      .text("layers", layers)
      .number("experts", net.experts)
      .number("top_k", net.top_k)
      .number("macs", double(net.macs()))
      .number("parameters", double(net.parameter_count()));
}

// Prints the controller speeds `speeds` gives and returns them as JSON.
JsonObject speeds_json(const SpeedProfile& speeds, const std::string& data_name) {
  std::printf("  speeds       %s\n", describe_speeds(speeds, data_name).c_str());
  const std::string warning = speeds_warning(speeds, data_name);
  if (!warning.empty()) spdlog::warn("{}", warning);
  ControllerSettings s;
  speeds.apply(s);
  return JsonObject()
      .boolean("measured", speeds.valid())
      .number("walk_forward", s.walk_forward)
      .number("walk_side", s.walk_side)
      .number("walk_back", s.walk_back)
      .number("run_forward", s.run_forward)
      .number("run_side", s.run_side)
      .number("run_back", s.run_back);
}

// Prints (and optionally writes as JSON) what a model bundle holds.
int inspect_model(const std::string& path, const cxxopts::ParseResult& args) {
  std::string error;
  const std::shared_ptr<const Model> model = Model::load_file(path, error);
  if (model == nullptr) throw InputError(error);
  const Model& m = *model;
  std::printf("%s\n  preset       %s\n  weights      %s, %.2f MB\n  fps          %.2f\n  joints       %d: %s\n"
              "  features     %d dims, schema '%s'\n  latent       %d\n  pose         %d values (%d joints, %d contacts)\n",
              path.c_str(), m.preset().c_str(), m.half_precision() ? "f16 (gates f32)" : "f32", m.weight_bytes() / 1e6,
              m.fps(), m.skeleton().joint_count(), m.skeleton().joined_names().c_str(), m.feature_dims(),
              m.schema().name.c_str(), m.latent(), m.pose_layout().size(), m.pose_layout().joints, m.pose_layout().contacts);
  if (m.tag_count() > 0) std::printf("  tags         %s\n", m.tags().names_of(m.tags().all()).c_str());
  const std::vector<std::string> actions = names_of(m.tags(), m.action_tags());
  const std::vector<std::string> kept_out = names_of(m.tags(), m.kept_out_tags());
  if (!actions.empty()) print_actions("play_action plays them; lmm_model_action_tags", actions);
  if (!kept_out.empty()) print_actions("kept out of projections requiring no tag", kept_out);
  const JsonObject speeds = speeds_json(m.speeds(), "the bundle");
  std::vector<JsonObject> networks{network_json("decoder", m.decoder()), network_json("stepper", m.stepper()),
                                   network_json("projector", m.projector())};
  if (m.has_encoder()) networks.push_back(network_json("encoder", m.encoder()));
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .text("file", path)
                                                   .text("kind", "model")
                                                   .text("preset", m.preset())
                                                   .boolean("half", m.half_precision())
                                                   .number("weight_bytes", double(m.weight_bytes()))
                                                   .number("fps", m.fps())
                                                   .number("joints", m.skeleton().joint_count())
                                                   .number("feature_dims", m.feature_dims())
                                                   .number("latent", m.latent())
                                                   .number("pose_size", m.pose_layout().size())
                                                   .texts("tags", m.tags().names())
                                                   .texts("action_tags", actions)
                                                   .texts("kept_out_tags", kept_out)
                                                   .objects("speeds", {speeds})
                                                   .objects("networks", networks));
  }
  return 0;
}

// Prints (and optionally writes as JSON) the skeleton and animations of a glTF or FBX file.
int inspect_animation_file(const std::string& path, const cxxopts::ParseResult& args) {
  const AnimationFile file = read_animation_file(path);
  std::printf("%s\n  units        %s\n  joints       %d: %s\n", path.c_str(), file.units.c_str(),
              file.skeleton.joint_count(), file.skeleton.joined_names().c_str());
  std::vector<JsonObject> clips;
  for (const Clip& c : file.clips) {
    std::printf("  animation    %-28s %6d frames at %g Hz (%.2f s)\n", c.name.c_str(), c.frames, c.fps, (c.frames - 1) / c.fps);
    clips.push_back(JsonObject().text("name", c.name).number("frames", c.frames).number("fps", c.fps));
  }
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .text("file", path)
                                                   .text("kind", "animation")
                                                   .text("units", file.units)
                                                   .texts("joint_names", file.skeleton.names)
                                                   .objects("animations", clips));
  }
  return 0;
}

// Prints (and optionally writes as JSON) how far the databases `a` and `b` are apart.
int compare(const Database& a, const Database& b, const cxxopts::ParseResult& args) {
  const int queries = args["queries"].as<int>();
  if (queries < 1) throw InputError("--queries must be at least 1");
  const DatabaseDifference d = compare_databases(a, b, queries);
  std::printf("  compared     %d frames with %s\n  positions    %.3g mm at most (joint '%s', frame %d)\n"
              "  features     %.3g at most (normalised)\n  search       %d of %d nearest frames the same; the other's "
              "nearest costs at most %.3g more\n",
              d.frames, args["compare"].as<std::string>().c_str(), 1000.0 * d.max_position_m, d.max_position_joint.c_str(),
              d.max_position_frame, d.max_feature, d.same_nearest, d.queries, d.max_cost_gap);
  if (args.count("json")) {
    write_json(args["json"].as<std::string>(), JsonObject()
                                                   .text("compared_with", args["compare"].as<std::string>())
                                                   .number("frames", d.frames)
                                                   .number("max_position_mm", 1000.0 * d.max_position_m)
                                                   .number("max_feature_difference", d.max_feature)
                                                   .number("queries", d.queries)
                                                   .number("same_nearest", d.same_nearest)
                                                   .number("max_cost_gap", d.max_cost_gap));
  }
  return 0;
}

// Whether `path` holds a blob of kind LMMW (bytes 4..7 of the header).
bool is_model_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char header[8] = {};
  const bool model = std::fread(header, 1, 8, f) == 8 && std::equal(header + 4, header + 8, kModelKind);
  std::fclose(f);
  return model;
}

int run(int argc, char** argv) {
  cxxopts::Options options("lmm-inspect", "Print what a motion database (*.mmdb: frames, clips, duration, frame "
                                          "rate, joints, per-group feature statistics), a model bundle (*.lmmw: "
                                          "preset, skeleton, schema, networks with sizes, experts and MACs) or a "
                                          "glTF file (.gltf, .glb: units, joints, animations) holds.");
  options.add_options()
      ("file", "database (*.mmdb), model bundle (*.lmmw) or glTF file (.gltf, .glb)", cxxopts::value<std::string>())
      ("json", "also write the report as JSON to this path", cxxopts::value<std::string>())
      ("compare", "with a database FILE: compare it with this database of the same clips (joint positions, "
                  "features, nearest-neighbour results)", cxxopts::value<std::string>())
      ("queries", "nearest-neighbour queries of --compare", cxxopts::value<int>()->default_value("1000"))
      ("h,help", "show this help");
  options.parse_positional({"file"});
  options.positional_help("FILE");
  const cxxopts::ParseResult args = options.parse(argc, argv);
  if (args.count("help") || !args.count("file")) {
    std::puts(options.help().c_str());
    return args.count("help") ? 0 : 2;
  }
  const std::string path = args["file"].as<std::string>();
  if (is_model_file(path)) return inspect_model(path, args);
  if (is_animation_file_path(path)) return inspect_animation_file(path, args);
  std::string error;
  const std::shared_ptr<const Database> database = Database::load_file(path, error);
  if (database == nullptr) throw InputError(error);
  const Database& db = *database;
  if (args.count("compare")) {
    const std::shared_ptr<const Database> other = Database::load_file(args["compare"].as<std::string>(), error);
    if (other == nullptr) throw InputError(error);
    std::printf("%s\n", path.c_str());
    return compare(db, *other, args);
  }

  int mirrored = 0;
  for (const DatabaseRange& r : db.ranges()) mirrored += r.mirrored ? 1 : 0;
  const double seconds = db.frame_count() / db.fps();
  std::printf("%s\n  frames       %d\n  clips        %zu (%d mirrored)\n  duration     %.1f s\n"
              "  fps          %.2f\n  joints       %d: %s\n  features     %d dims, schema '%s'\n",
              path.c_str(), db.frame_count(), db.ranges().size(), mirrored, seconds, db.fps(),
              db.joint_count(), db.skeleton().joined_names().c_str(), db.schema().dims,
              db.schema().name.c_str());
  if (db.phase_channels() > 0) std::printf("  phases       %d channels (phase.values)\n", db.phase_channels());
  const JsonObject annotations = print_annotations(db);
  const SkeletonHeight height = print_height(db);
  const JsonObject speeds = speeds_json(db.speeds(), "the database");
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
                   .number("rest_height_m", height.rest)
                   .number("standing_height_m", height.standing)
                   .number("feature_dims", db.schema().dims)
                   .number("phase_channels", db.phase_channels())
                   .text("schema", db.schema().name)
                   .objects("groups", groups)
                   .objects("speeds", {speeds})
                   .objects("annotations", {annotations}));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli("lmm-inspect", [&] { return run(argc, argv); });
}
