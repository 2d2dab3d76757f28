// The tools' configuration files: skeleton maps and feature schemas (TOML) of the import pipeline,
// controller configs (lmm-sim, lmm-eval, lmm-path) and lmm-eval's metric thresholds (TOML).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmm/motion/controller.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/import/motion.hpp"
#include "lmm/import/tags.hpp"
#include "lmm/asset/skeleton.hpp"

namespace lmm::pipeline {

// Accepted ranges of config values (docs/hardening.md, "Configs"); a value outside its range is
// an InputError naming the file, section and key. Feature weights and schema dims use the
// runtime's limits (lmm::kMinFeatureWeight, kMaxFeatureWeight, kMaxFeatureDims). Names (roles,
// joints, groups) must be non-empty and hold no control character and no '='.
constexpr double kMinUnitScale = 1e-4, kMaxUnitScale = 1e4;  // file units -> metres
constexpr double kMaxSmoothingSeconds = 10.0;    // [simulation] *_smoothing, from 0
constexpr double kMaxContactVelocity = 100.0;    // m/s, from 0
constexpr double kMaxContactHeight = 10.0;       // m, either side of the ground
constexpr double kMaxContactFilterSeconds = 1.0; // from 0
constexpr double kMaxOffsetSeconds = 10.0;       // |trajectory offset| in seconds
constexpr double kMaxSkeletonHeight = 1000.0;    // m, [checks] height_range bounds, from 0

// A contact joint's resting height for [contacts] height_above_rest: this fraction of its
// heights over the imported frames lie below it (its height when planted).
constexpr float kRestingHeightPercentile = 0.05f;

// How to read one family of BVH files (configs/skeletons/*.toml).
struct SkeletonConfig {
  std::string source;  // file the config came from, for messages
  std::string name;
  float unit_scale = 1.0f;                  // file units -> metres
  UpAxis up_axis = UpAxis::Y;               // the files' up axis, turned to Y-up on import
  std::vector<std::string> collapse;        // joints removed on import when present
  std::vector<std::pair<std::string, std::string>> roles;  // role -> joint name
  std::vector<std::pair<std::string, std::string>> mirror_patterns;  // (left, right)
  std::vector<std::string> facing_left, facing_right;  // roles or joints of the lateral axis
  float position_smoothing = 0.0f;   // seconds
  float direction_smoothing = 0.0f;  // seconds
  std::vector<std::string> contact_joints;
  float contact_velocity = 0.15f;  // m/s
  float contact_height = 0.1f;     // m above the ground (absolute form)
  std::optional<float> contact_height_above_rest;  // m above each joint's resting height (relative form)
  float contact_filter = 0.05f;    // seconds
  float min_height = 1.0f, max_height = 2.5f;  // [checks] height_range: expected skeleton height, m
  TagConfig tags;  // [tags] and [events]: declared and derived tags, foot-plant events

  // Joint index of `name` (a role or a joint name) in `skeleton`. Throws InputError naming
  // `needed_by` (the config entry that uses `name`), `name`, this config and the available
  // joints (without the importer's simulation bone) when it is unknown.
  int resolve(const Skeleton& skeleton, const std::string& name, const std::string& needed_by) const;
};

// One group of a feature schema file, before joint names are resolved.
struct FeatureGroupConfig {
  std::string name;
  FeatureKind kind = FeatureKind::BonePosition;
  std::vector<std::string> bones;  // bone kinds
  std::vector<double> seconds;     // trajectory kinds (negative = past)
  int channels = 0;                // phase kind: channels of the phase embedding, 1 to kMaxPhaseChannels
  float weight = 1.0f;
};

// A feature schema file (configs/features/*.toml).
struct FeatureSchemaConfig {
  std::string source;
  std::string name;
  std::vector<FeatureGroupConfig> groups;
};

// Parses a skeleton config; throws InputError naming the file, line or key at fault.
SkeletonConfig load_skeleton_config(const std::string& path);
// Parses a feature schema; throws InputError naming the file, line, group or key at fault.
FeatureSchemaConfig load_feature_config(const std::string& path);
// The runtime schema for `skeleton` at `fps` (seconds rounded to frame offsets).
FeatureSchema resolve_schema(const FeatureSchemaConfig& config, const SkeletonConfig& skeleton_config,
                             const Skeleton& skeleton, float fps);

// Directory of the shipped configs: $LMM_CONFIG_DIR, else the source tree's configs/.
std::string default_config_dir();

// A controller config (--controller FILE of lmm-sim, lmm-eval and lmm-path; docs/configs.md):
// values of the gamepad controller's tunables. Speeds left out are measured from the data.
struct ControllerConfig {
  std::string source;
  std::vector<ControllerValue> values;  // [speeds] and [springs] keys as given
  std::vector<StateConfig> states;      // [states.NAME] tables (database characters' game states)
};

// Reads a controller config with the runtime's parse_controller_config; throws InputError
// "PATH:LINE: ..." naming the table, key and accepted range.
ControllerConfig load_controller_config(const std::string& path);
// Largest controller config file load_controller_config reads.
constexpr uint64_t kMaxControllerConfigBytes = uint64_t(1) << 20;  // 1 MiB

// The controller tunables for data whose measured speeds are `data` (`data_name`, e.g. "the
// database"): defaults, then the measured speeds (when valid), then the config's values; a walk
// speed above its run speed is an InputError. `origin` receives one line: the speeds and where
// they came from.
ControllerSettings controller_settings(const SpeedProfile& data, const std::string& data_name,
                                       const ControllerConfig& config, std::string& origin);
// One line: the speeds `data` gives the controller (defaults when not valid) and where they came from.
std::string describe_speeds(const SpeedProfile& data, const std::string& data_name);
// What a user should know about the speeds `data` gives ("" when all were measured): that the
// data cannot follow a stick at all (no forward locomotion), or which directions kept the
// default ratio to forward, with the --controller override.
std::string speeds_warning(const SpeedProfile& data, const std::string& data_name);
// controller_settings with the config at `config_path` ("" = none), logging the speeds used.
ControllerSettings resolve_controller(const std::string& config_path, const SpeedProfile& data,
                                      const std::string& data_name);

// One gate on a metric of lmm-eval (--thresholds FILE): metric <= limit (max) or metric >= limit (min).
struct Threshold {
  std::string metric;
  bool is_max = true;
  double limit = 0.0;
};

// Reads [max] and [min] tables of metric = number from a TOML file; throws InputError naming
// the file and key at fault.
std::vector<Threshold> load_thresholds(const std::string& path);

}  // namespace lmm::pipeline
