// tests/data/synthetic-walks.mmdb, which the runtime's tests load in every configuration, is what
// lmm-import makes of support/synthetic_bvh.hpp's walks today, byte for byte. When an importer
// change alters it on purpose, run this test with LMM_UPDATE_TEST_DATA=1 to write the fresh import
// over the committed file (then commit it with the change).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "support/synthetic_walk_import.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;

namespace {

// The bytes of the file at `path` (empty when it cannot be read).
std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether LMM_UPDATE_TEST_DATA=1 asks to write the fresh import over the committed file.
bool updating_test_data() {
  const char* update = std::getenv("LMM_UPDATE_TEST_DATA");
  return update != nullptr && std::string(update) == "1";
}

}  // namespace

TEST(SyntheticWalks, CommittedDatabaseIsAFreshImport) {
  const std::vector<uint8_t> fresh = file_bytes(test::import_synthetic_walks(test::temp_folder("walks")));
  ASSERT_FALSE(fresh.empty());
  const std::string committed = test::synthetic_walks_path();
  std::string error;
  if (updating_test_data()) {
    ASSERT_TRUE(write_file_atomic(committed, fresh.data(), fresh.size(), error)) << error;
  }
  EXPECT_TRUE(file_holds(committed, fresh.data(), fresh.size(), error))
      << error << "\nthe importer no longer makes the committed database: if that is intended, rerun with "
      << "LMM_UPDATE_TEST_DATA=1 and commit " << committed;
}
