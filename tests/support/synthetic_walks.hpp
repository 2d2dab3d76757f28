// The synthetic walks database (tests/data/synthetic-walks.mmdb): circles of two radii and a
// straight line, as lmm-import makes them from support/synthetic_bvh.hpp's walks (the pipeline
// test SyntheticWalks.CommittedDatabaseIsAFreshImport keeps it so). For tests that need real
// playback and search without the Bandai data, in every configuration.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "lmm/asset/database.hpp"
#include "lmm/eval/search.hpp"

namespace lmm::test {

// The committed database's path (LMM_TEST_SOURCE_DIR: the tests folder).
inline std::string synthetic_walks_path() { return std::string(LMM_TEST_SOURCE_DIR) + "/data/synthetic-walks.mmdb"; }

// Loads the synthetic walks into `db` and builds `search` (test failures on any error).
inline void load_synthetic_walks(std::shared_ptr<const Database>& db, FeatureSearch& search) {
  std::string error;
  db = Database::load_file(synthetic_walks_path(), error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_TRUE(search.build(db, error)) << error;
}

// A fixture holding the synthetic walks and their search.
class SyntheticWalksTest : public testing::Test {
 protected:
  void SetUp() override { load_synthetic_walks(db_, search_); }

  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
};

}  // namespace lmm::test
