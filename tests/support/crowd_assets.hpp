// The synthetic assets of the crowd and C API tests: a random mixture-of-experts bundle over a
// random synthetic database, loaded (Assets) or written to the test temp folder (AssetFiles).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/search.hpp"
#include "support/synthetic_model.hpp"

namespace lmm::test {

// The bundle and database, loaded through the C++ API.
struct Assets {
  AlignedBuffer model_bytes = aligned_copy(bundle_bytes());
  std::shared_ptr<const Model> model;
  AlignedBuffer db_bytes = aligned_copy(database_bytes());
  std::shared_ptr<const Database> db;
  FeatureSearch search;

  Assets() {
    std::string error;
    model = Model::load_buffer(model_bytes.data(), model_bytes.size(), error);
    db = Database::load_buffer(db_bytes.data(), db_bytes.size(), error);
    if (db != nullptr) search.build(db, error);
  }
  static std::vector<uint8_t> bundle_bytes() {
    std::string error;
    return synthetic_bundle(random_model_values(4, 17), false, error);
  }
  static std::vector<uint8_t> database_bytes() {
    SyntheticDatabase synthetic;
    synthetic.randomize({90, 140, 200, 75}, 23);
    return synthetic.build();
  }
};

// Assets::bundle_bytes() and Assets::database_bytes() written to the test temp folder.
struct AssetFiles {
  std::string model = write("crowd-model.lmmw", Assets::bundle_bytes());
  std::string db = write("crowd-db.mmdb", Assets::database_bytes());

  static std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = testing::TempDir() + name;
    std::string error;
    EXPECT_TRUE(write_file_atomic(path, bytes.data(), bytes.size(), error)) << error;
    return path;
  }
};

}  // namespace lmm::test
