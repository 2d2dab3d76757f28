// libFuzzer target: the TOML configs the tools read. Each input is loaded as a skeleton map and
// as a feature schema (load_skeleton_config / load_feature_config), whatever loads resolved like
// an import does, against the shipped counterpart (configs/skeletons/bandai.toml,
// configs/features/locomotion27.toml) and a skeleton holding the role joints; and as a
// controller config (the runtime's parse_controller_config), applied to the default settings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/import/config.hpp"

namespace {

using namespace lmm::pipeline;

constexpr float kFps = 60.0f;

// A skeleton whose joints are a root plus the joints the config's roles name (as a BVH of
// that family would have them).
lmm::Skeleton skeleton_of_roles(const SkeletonConfig& config) {
  lmm::Skeleton skeleton;
  skeleton.names.push_back("Simulation");
  skeleton.parents.push_back(-1);
  for (const auto& role : config.roles) {
    if (skeleton.find(role.second) >= 0) continue;
    skeleton.names.push_back(role.second);
    skeleton.parents.push_back(0);
  }
  skeleton.offsets.resize(skeleton.names.size());
  return skeleton;
}

struct Shipped {
  SkeletonConfig skeleton = load_skeleton_config(default_config_dir() + "/skeletons/bandai.toml");
  FeatureSchemaConfig features = load_feature_config(default_config_dir() + "/features/locomotion27.toml");
};

const Shipped& shipped() {
  static const Shipped configs;
  return configs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Shipped& configs = shipped();  // outside the try blocks: a shipped config must load
  const std::string& path = lmm::fuzz::scratch_file(data, size);
  try {
    const SkeletonConfig skeleton = load_skeleton_config(path);
    resolve_schema(configs.features, skeleton, skeleton_of_roles(skeleton), kFps);
  } catch (const InputError&) {
  }
  try {
    const FeatureSchemaConfig features = load_feature_config(path);
    resolve_schema(features, configs.skeleton, skeleton_of_roles(configs.skeleton), kFps);
  } catch (const InputError&) {
  }
  std::vector<lmm::ControllerValue> values;
  std::string error;
  if (lmm::parse_controller_config(std::string(reinterpret_cast<const char*>(data), size), values, error)) {
    lmm::ControllerSettings settings;
    lmm::apply_controller_values(values, settings);
  }
  return 0;
}
