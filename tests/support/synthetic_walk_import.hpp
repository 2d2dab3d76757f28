// Imports synthetic walks with lmm-import's library (pipeline tests): the walks behind
// tests/data/synthetic-walks.mmdb, and variants at other speeds and rates.
#pragma once

#include <string>

#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "support/synthetic_bvh.hpp"

namespace lmm::test {

// Imports the walks (circles at 1.5 and 2.5 m/s, a straight line at 1.3 m/s, each times
// `speed_factor`) into `dir`/db.mmdb at `fps` and returns that path (throws InputError).
inline std::string import_synthetic_walks(const std::string& dir, float speed_factor = 1.0f, float fps = 60.0f) {
  pipeline::ImportOptions o;
  o.fps = fps;
  o.skeleton = pipeline::load_skeleton_config(write_text(dir + "/s.toml", biped_skeleton_toml()));
  o.features = pipeline::load_feature_config(write_text(dir + "/f.toml", biped_features_toml()));
  o.inputs = {write_text(dir + "/a.bvh", circle_walk_bvh(150.0f * speed_factor, 300.0f, 240, 30.0f)),
              write_text(dir + "/b.bvh", circle_walk_bvh(250.0f * speed_factor, 500.0f, 240, 30.0f)),
              write_text(dir + "/c.bvh", straight_walk_bvh(130.0f * speed_factor, 240, 30.0f))};
  pipeline::import_database(o, dir + "/db.mmdb");
  return dir + "/db.mmdb";
}

}  // namespace lmm::test
