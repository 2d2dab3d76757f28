// Test helper: a shipped feature schema (configs/features/NAME.toml) resolved on a four-joint
// stand-in of the Bandai skeleton at 60 fps.
#pragma once

#include <string>

#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"

namespace lmm::test {

// configs/features/`name`.toml resolved through configs/skeletons/bandai.toml on the joints
// Simulation, Hips, Foot_L and Foot_R.
inline FeatureSchema shipped_schema(const std::string& name) {
  const std::string configs = pipeline::default_config_dir();
  const pipeline::SkeletonConfig skeleton_config = pipeline::load_skeleton_config(configs + "/skeletons/bandai.toml");
  Skeleton skeleton;
  skeleton.names = {"Simulation", "Hips", "Foot_L", "Foot_R"};
  skeleton.parents = {-1, 0, 1, 1};
  skeleton.offsets.resize(4);
  return pipeline::resolve_schema(pipeline::load_feature_config(configs + "/features/" + name + ".toml"),
                                  skeleton_config, skeleton, 60.0f);
}

}  // namespace lmm::test
