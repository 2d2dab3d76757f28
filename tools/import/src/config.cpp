#include "lmm/import/config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include "lmm/common/errors.hpp"
#include "lmm/common/report.hpp"
#include "lmm/import/motion.hpp"

#include "tag_config.hpp"
#include "toml_reading.hpp"

namespace lmm::pipeline {
namespace {

// Feature dims of a group once resolved (feature_group_dims of its items).
int group_dims(const FeatureGroupConfig& config) {
  FeatureGroup group;
  group.kind = config.kind;
  group.items.resize(config.bones.size() + config.seconds.size() + size_t(config.channels));
  return feature_group_dims(group);
}

// The 'channels' of a phase group: an integer in [1, kMaxPhaseChannels]; throws naming the key.
int phase_channels(const toml::table& table, const std::string& where) {
  const toml::node* node = table.get("channels");
  const std::string accepted = "an integer in " + range_text(1, kMaxPhaseChannels);
  if (node == nullptr) throw InputError(where + ": kind 'phase' needs 'channels' (" + accepted + ")");
  const auto value = node->value_exact<int64_t>();
  if (!value) throw InputError(where + ": 'channels' must be " + accepted);
  if (*value < 1 || *value > kMaxPhaseChannels) {
    throw InputError(where + ": 'channels' = " + std::to_string(*value) + " is outside " +
                     range_text(1, kMaxPhaseChannels));
  }
  return int(*value);
}

FeatureGroupConfig parse_group(const toml::table& table, const std::string& where) {
  check_keys(table, {"name", "kind", "bones", "seconds", "channels", "weight"}, where);
  FeatureGroupConfig g;
  g.name = text(table, "name", where);
  check_name(g.name, where + ": 'name'");
  const std::string group_where = where + " ('" + g.name + "')";
  const std::string kind = text(table, "kind", group_where);
  if (!parse_feature_kind(kind, g.kind)) {
    throw InputError(group_where + ": unknown kind '" + kind +
                     "' (bone_position, bone_velocity, trajectory_position, trajectory_direction, phase)");
  }
  g.weight = number(table, "weight", 1.0f, Range{kMinFeatureWeight, kMaxFeatureWeight, ""}, group_where);
  g.bones = strings(table, "bones", group_where);
  if (const toml::array* seconds = table["seconds"].as_array()) {
    for (const toml::node& s : *seconds) {
      const auto v = s.value<double>();
      if (!v || !(std::fabs(*v) <= kMaxOffsetSeconds)) {
        throw InputError(group_where + ": 'seconds' must be numbers in " +
                         range_text(-kMaxOffsetSeconds, kMaxOffsetSeconds) + " s" +
                         (v ? ", found " + format_number(*v) : std::string()));
      }
      g.seconds.push_back(*v);
    }
  }
  if (g.kind == FeatureKind::Phase) {
    if (!g.bones.empty() || !g.seconds.empty()) {
      throw InputError(group_where + ": kind 'phase' needs 'channels' (and no 'bones' or 'seconds')");
    }
    g.channels = phase_channels(table, group_where);
    return g;
  }
  if (table.contains("channels")) {
    throw InputError(group_where + ": 'channels' belongs to kind 'phase' only, not '" + kind + "'");
  }
  const bool bone_kind = !is_trajectory_kind(g.kind);
  if ((bone_kind && (g.bones.empty() || !g.seconds.empty())) ||
      (!bone_kind && (g.seconds.empty() || !g.bones.empty()))) {
    throw InputError(group_where + ": kind '" + kind + "' needs " +
                     (bone_kind ? "'bones' (and no 'seconds')" : "'seconds' (and no 'bones')"));
  }
  return g;
}

// The joint names of `skeleton` separated by ", ", without the simulation bone the importer adds.
std::string file_joint_names(const Skeleton& skeleton) {
  std::string names;
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    if (j == 0 && skeleton.names[0] == kSimulationBoneName) continue;
    names += (names.empty() ? "" : ", ") + skeleton.names[size_t(j)];
  }
  return names;
}

// The [checks] height_range of `table` ([min, max] metres) into `config`.
void parse_height_range(const toml::table& table, const std::string& where, SkeletonConfig& config) {
  const toml::node* node = table.get("height_range");
  if (node == nullptr) return;
  const toml::array* range = node->as_array();
  const auto min = range != nullptr && range->size() == 2 ? (*range)[0].value<double>() : std::nullopt;
  const auto max = range != nullptr && range->size() == 2 ? (*range)[1].value<double>() : std::nullopt;
  if (!min || !max || !(*min >= 0.0 && *min < *max && *max <= kMaxSkeletonHeight)) {
    throw InputError(where + ": 'height_range' must be [min, max] metres with 0 <= min < max <= " +
                     format_number(kMaxSkeletonHeight));
  }
  config.min_height = float(*min);
  config.max_height = float(*max);
}

}  // namespace

int SkeletonConfig::resolve(const Skeleton& skeleton, const std::string& name, const std::string& needed_by) const {
  std::string joint = name;
  bool is_role = false;
  for (const auto& role : roles) {
    if (role.first == name) {
      joint = role.second;
      is_role = true;
    }
  }
  const int index = skeleton.find(joint);
  if (index < 0) {
    const std::string what =
        is_role ? "role '" + name + "', but its joint '" + joint + "' in " + source + " [roles] is not in the skeleton"
                : "'" + name + "', which is neither a role in " + source + " [roles] nor a joint of the skeleton";
    throw InputError(needed_by + " needs " + what + "; available joints: " + file_joint_names(skeleton));
  }
  return index;
}

SkeletonConfig load_skeleton_config(const std::string& path) {
  const toml::table root = parse_toml(path);
  check_keys(root, {"name", "unit_scale", "up_axis", "collapse", "roles", "mirror", "simulation", "contacts", "checks",
                    "tags", "events"},
             path);
  SkeletonConfig c;
  c.source = path;
  c.name = root["name"].value_or(std::string("skeleton"));
  c.unit_scale = number(root, "unit_scale", 1.0f, Range{kMinUnitScale, kMaxUnitScale, ""}, path);
  if (root.contains("up_axis")) {
    const std::string axis = text(root, "up_axis", path);
    if (!parse_up_axis(axis, c.up_axis)) {
      throw InputError(path + ": 'up_axis' = \"" + printable(axis) + "\" is not \"y\" or \"z\"");
    }
  }
  c.collapse = strings(root, "collapse", path);
  for (const auto& [key, value] : subtable(root, "roles", path)) {
    const auto joint = value.value<std::string>();
    const std::string role(key.str());
    if (!joint) throw InputError(path + ": [roles] '" + printable(role) + "' must be a joint name");
    check_name(role, path + ": [roles] role");
    check_name(*joint, path + ": [roles] '" + role + "': joint");
    c.roles.emplace_back(role, *joint);
  }
  const toml::table& mirror = subtable(root, "mirror", path);
  check_keys(mirror, {"patterns"}, path + " [mirror]");
  if (const toml::array* patterns = mirror["patterns"].as_array()) {
    for (const toml::node& p : *patterns) {
      const toml::array* pair = p.as_array();
      if (pair == nullptr || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string()) {
        throw InputError(path + " [mirror]: each pattern must be a [left, right] pair of strings");
      }
      c.mirror_patterns.emplace_back(*(*pair)[0].value<std::string>(), *(*pair)[1].value<std::string>());
    }
  }
  const std::string sim_where = path + " [simulation]";
  const toml::table& sim = subtable(root, "simulation", path);
  check_keys(sim, {"facing_left", "facing_right", "position_smoothing", "direction_smoothing"}, sim_where);
  c.facing_left = strings(sim, "facing_left", sim_where);
  c.facing_right = strings(sim, "facing_right", sim_where);
  const Range smoothing{0.0, kMaxSmoothingSeconds, " s"};
  c.position_smoothing = number(sim, "position_smoothing", 0.0833f, smoothing, sim_where);
  c.direction_smoothing = number(sim, "direction_smoothing", 0.1667f, smoothing, sim_where);
  if (c.facing_left.empty() || c.facing_right.empty()) {
    throw InputError(sim_where + ": 'facing_left' and 'facing_right' are required");
  }
  const std::string contact_where = path + " [contacts]";
  const toml::table& contacts = subtable(root, "contacts", path);
  check_keys(contacts, {"joints", "velocity_threshold", "height_threshold", "height_above_rest", "filter"},
             contact_where);
  c.contact_joints = strings(contacts, "joints", contact_where);
  c.contact_velocity = number(contacts, "velocity_threshold", c.contact_velocity,
                              Range{0.0, kMaxContactVelocity, " m/s"}, contact_where);
  const Range contact_height{-kMaxContactHeight, kMaxContactHeight, " m"};
  c.contact_height = number(contacts, "height_threshold", c.contact_height, contact_height, contact_where);
  if (contacts.contains("height_above_rest")) {
    if (contacts.contains("height_threshold")) {
      throw InputError(contact_where + ": give either 'height_threshold' (metres above the ground) or "
                       "'height_above_rest' (metres above each contact joint's resting height), not both");
    }
    c.contact_height_above_rest = number(contacts, "height_above_rest", 0.0f, contact_height, contact_where);
  }
  c.contact_filter = number(contacts, "filter", c.contact_filter, Range{0.0, kMaxContactFilterSeconds, " s"},
                            contact_where);
  const toml::table& checks = subtable(root, "checks", path);
  check_keys(checks, {"height_range"}, path + " [checks]");
  parse_height_range(checks, path + " [checks]", c);
  c.tags = read_tag_config(root, path, c.contact_joints.size());
  return c;
}

FeatureSchemaConfig load_feature_config(const std::string& path) {
  const toml::table root = parse_toml(path);
  check_keys(root, {"name", "group"}, path);
  FeatureSchemaConfig c;
  c.source = path;
  c.name = root["name"].value_or(std::string("features"));
  check_name(c.name, path + ": 'name'");
  const toml::array* groups = root["group"].as_array();
  if (groups == nullptr || groups->empty()) throw InputError(path + ": no [[group]] entries");
  int dims = 0;
  for (size_t i = 0; i < groups->size(); ++i) {
    const toml::table* g = (*groups)[i].as_table();
    const std::string where = path + ": group " + std::to_string(i + 1);
    if (g == nullptr) throw InputError(where + " must be a table");
    c.groups.push_back(parse_group(*g, where));
    dims += group_dims(c.groups.back());
  }
  if (dims > kMaxFeatureDims) {
    throw InputError(path + ": the schema has " + std::to_string(dims) + " dims, more than " +
                     std::to_string(kMaxFeatureDims));
  }
  return c;
}

FeatureSchema resolve_schema(const FeatureSchemaConfig& config, const SkeletonConfig& skeleton_config,
                             const Skeleton& skeleton, float fps) {
  FeatureSchema schema;
  schema.name = config.name;
  for (const FeatureGroupConfig& gc : config.groups) {
    FeatureGroup g;
    g.name = gc.name;
    g.kind = gc.kind;
    g.weight = gc.weight;
    for (const std::string& bone : gc.bones) {
      g.items.push_back(skeleton_config.resolve(skeleton, bone, config.source + " group '" + gc.name + "'"));
    }
    for (double s : gc.seconds) {
      const double frames = std::round(s * fps);
      if (!(std::fabs(frames) <= kMaxTrajectoryOffsetFrames)) {
        throw InputError(config.source + ": group '" + gc.name + "': " + format_number(s) + " s at " +
                         format_number(fps) + " Hz is " + format_number(frames) + " frames, outside " +
                         range_text(-kMaxTrajectoryOffsetFrames, kMaxTrajectoryOffsetFrames));
      }
      g.items.push_back(static_cast<int>(frames));
    }
    for (int channel = 0; channel < gc.channels; ++channel) g.items.push_back(channel);
    schema.groups.push_back(std::move(g));
  }
  std::string error;
  if (!schema.finalize(skeleton.joint_count(), error)) throw InputError(config.source + ": " + error);
  return schema;
}

std::string default_config_dir() {
  const char* env = std::getenv("LMM_CONFIG_DIR");
  return env != nullptr && env[0] != '\0' ? std::string(env) : std::string(LMM_SOURCE_CONFIG_DIR);
}

std::vector<Threshold> load_thresholds(const std::string& path) {
  const toml::table table = parse_toml(path);
  check_keys(table, {"max", "min"}, path);
  std::vector<Threshold> thresholds;
  for (const char* side : {"max", "min"}) {
    const toml::table* limits = table[side].as_table();
    if (limits == nullptr) continue;
    for (const auto& [key, node] : *limits) {
      const auto value = node.value<double>();
      const std::string name(key.str());
      if (!value || !std::isfinite(*value)) throw InputError(path + ": [" + side + "] " + name + " must be a number");
      thresholds.push_back(Threshold{name, std::string(side) == "max", *value});
    }
  }
  if (thresholds.empty()) throw InputError(path + ": no thresholds (expected [max] and / or [min] tables)");
  return thresholds;
}

namespace {

std::string speeds_text(const ControllerSettings& s) {
  char text[160];
  std::snprintf(text, sizeof text, "walk %.2f / %.2f / %.2f, run %.2f / %.2f / %.2f m/s (forward / side / back)",
                s.walk_forward, s.walk_side, s.walk_back, s.run_forward, s.run_side, s.run_back);
  return text;
}

// The directions whose speeds kept the default ratio to forward ("" when none or unknown: bundles
// store no counts).
std::string unmeasured_directions(const SpeedProfile& data) {
  if (!data.valid() || data.frames == 0 || (data.side_measured && data.back_measured)) return "";
  return !data.side_measured && !data.back_measured ? "side and back" : !data.side_measured ? "side" : "back";
}

// Where measured speeds came from, naming directions that kept the default ratio to forward.
std::string measured_origin(const SpeedProfile& data, const std::string& data_name) {
  if (!data.valid()) return "lmmkit's defaults (" + data_name + " has no measured speeds)";
  const std::string origin = "measured from " + data_name, unmeasured = unmeasured_directions(data);
  if (unmeasured.empty()) return origin;
  return origin + " (" + unmeasured + ": too few frames, default ratio to forward, walk at most run)";
}

}  // namespace

std::string speeds_warning(const SpeedProfile& data, const std::string& data_name) {
  if (!data.valid() && data.frames > 0) {
    return data_name + " cannot follow a stick: " + std::to_string(data.forward_frames) + " of its " +
           std::to_string(data.frames) + " frames move forward faster than " + fmt::format("{}", kMovingSpeed) +
           " m/s (at least " + std::to_string(kMinDirectionFrames) +
           " are needed), so a character stands wherever a stick points; import walking or running clips with it";
  }
  if (!data.valid()) {
    return data_name + " holds no measured speeds (its database had too little forward motion): a stick may not "
           "move its characters";
  }
  const std::string unmeasured = unmeasured_directions(data);
  if (unmeasured.empty()) return "";
  return data_name + " has too few " + unmeasured + " frames to measure their speeds: they are forward's times " +
         "lmmkit's default ratios, walk at most run; set them with --controller FILE ([speeds] walk_side, " +
         "run_side, walk_back, run_back; docs/configs.md)";
}

ControllerConfig load_controller_config(const std::string& path) {
  const std::string text = read_text_file(path, kMaxControllerConfigBytes, "controller config");
  ControllerConfig config;
  config.source = path;
  std::string error;
  if (!parse_controller_config(text, config.values, error, &config.states)) throw InputError(path + ":" + error);
  return config;
}

ControllerSettings controller_settings(const SpeedProfile& data, const std::string& data_name,
                                       const ControllerConfig& config, std::string& origin) {
  ControllerSettings settings;
  data.apply(settings);
  origin = measured_origin(data, data_name);
  apply_controller_values(config.values, settings);
  if (!config.values.empty()) origin += ", with the values of " + config.source;
  const std::pair<float, float> walk_run[] = {{settings.walk_forward, settings.run_forward},
                                              {settings.walk_side, settings.run_side},
                                              {settings.walk_back, settings.run_back}};
  for (const auto& [walk, run] : walk_run) {
    if (walk > run) throw InputError("controller speeds: a walk speed exceeds its run speed (" + speeds_text(settings) + ")");
  }
  origin = speeds_text(settings) + ", " + origin;
  return settings;
}

std::string describe_speeds(const SpeedProfile& data, const std::string& data_name) {
  std::string origin;
  controller_settings(data, data_name, ControllerConfig{}, origin);
  return origin;
}

ControllerSettings resolve_controller(const std::string& config_path, const SpeedProfile& data,
                                      const std::string& data_name) {
  const ControllerConfig config = config_path.empty() ? ControllerConfig{} : load_controller_config(config_path);
  std::string origin;
  const ControllerSettings settings = controller_settings(data, data_name, config, origin);
  spdlog::info("controller speeds: {}", origin);
  const std::string warning = speeds_warning(data, data_name);
  if (!warning.empty() && config.values.empty()) spdlog::warn("{}", warning);
  return settings;
}

}  // namespace lmm::pipeline
