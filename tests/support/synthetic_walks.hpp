// A motion database imported from synthetic walks (circles of two radii and a straight line),
// for pipeline tests that need real playback and search without the Bandai data.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/eval/search.hpp"
#include "support/synthetic_bvh.hpp"

namespace lmm::test {

// Imports the walks (at 1.5, 2.5 and 1.3 m/s, times `speed_factor`) into `dir`/db.mmdb at `fps`,
// loads it into `db` and builds `search` (test failures on any error).
inline void load_synthetic_walks(const std::string& dir, std::shared_ptr<const Database>& db, FeatureSearch& search,
                                 float speed_factor = 1.0f, float fps = 60.0f) {
  pipeline::ImportOptions o;
  o.fps = fps;
  o.skeleton = pipeline::load_skeleton_config(write_text(dir + "/s.toml", biped_skeleton_toml()));
  o.features = pipeline::load_feature_config(write_text(dir + "/f.toml", biped_features_toml()));
  o.inputs = {write_text(dir + "/a.bvh", circle_walk_bvh(150.0f * speed_factor, 300.0f, 240, 30.0f)),
              write_text(dir + "/b.bvh", circle_walk_bvh(250.0f * speed_factor, 500.0f, 240, 30.0f)),
              write_text(dir + "/c.bvh", straight_walk_bvh(130.0f * speed_factor, 240, 30.0f))};
  pipeline::import_database(o, dir + "/db.mmdb");
  std::string error;
  db = Database::load_file(dir + "/db.mmdb", error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_TRUE(search.build(db, error)) << error;
}

}  // namespace lmm::test
