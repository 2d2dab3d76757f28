// Access to the Bandai locomotion data for tests: the folder comes from $LMM_DATA, else the
// LMM_TEST_DATA_DEFAULT build setting. Without it, tests fail in CI (CI set) and skip elsewhere.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"

namespace lmm::test {

// The bandai-loco folder if it holds `subfolder`, else "".
inline std::string bandai_folder(const std::string& subfolder) {
  const char* env = std::getenv("LMM_DATA");
  const std::string folder = env != nullptr && env[0] != '\0' ? env : LMM_TEST_DATA_DEFAULT;
  return !folder.empty() && std::filesystem::is_directory(folder + "/" + subfolder) ? folder : "";
}

// Imports `inputs` with the shipped Bandai skeleton map and the 27-dim schema into `out`.
inline pipeline::ImportSummary import_bandai(const std::vector<std::string>& inputs, const std::string& out) {
  pipeline::ImportOptions o;
  o.inputs = inputs;
  o.skeleton = pipeline::load_skeleton_config(pipeline::default_config_dir() + "/skeletons/bandai.toml");
  o.features = pipeline::load_feature_config(pipeline::default_config_dir() + "/features/locomotion27.toml");
  return pipeline::import_database(o, out);
}

}  // namespace lmm::test

// Declares `folder` = the bandai-loco folder holding `subfolder`, or fails (CI) / skips the test.
#define REQUIRE_BANDAI(folder, subfolder)                                                      \
  const std::string folder = lmm::test::bandai_folder(subfolder);                              \
  if (folder.empty()) {                                                                        \
    if (std::getenv("CI") != nullptr) FAIL() << "LMM_DATA does not point at bandai-loco data"; \
    GTEST_SKIP() << "set LMM_DATA to the bandai-loco folder to run this test";                 \
  }
