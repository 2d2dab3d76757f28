// Temporary folders and files for tests, under GoogleTest's temp dir.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace lmm::test {

// A fresh empty folder under the test temp dir, unique per test.
inline std::string temp_folder(const std::string& name) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "lmmkit_tests" /
                                    (std::string(info->test_suite_name()) + "." + info->name()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Writes `text` to `path` and returns the path.
inline std::string write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace lmm::test
