// Two motion databases of the same clips compared frame by frame: joint world positions,
// normalised features and nearest-neighbour search results (e.g. a database imported from BVH
// files against one imported from their .glb conversions).
#pragma once

#include <string>

#include "lmm/asset/database.hpp"

namespace lmm::pipeline {

// How far apart two databases of the same clips are.
struct DatabaseDifference {
  int frames = 0;
  float max_position_m = 0.0f;  // largest distance between a joint's world positions (FK of the local pose)
  int max_position_frame = 0;
  std::string max_position_joint;
  float max_feature = 0.0f;     // largest difference of a normalised feature
  int queries = 0;              // nearest-neighbour queries: the mean of two frames' features
  int same_nearest = 0;         // queries whose nearest frame is the same in both
  float max_cost_gap = 0.0f;    // largest excess cost, in `a`, of `b`'s nearest frame over `a`'s (0: ties only)
};

// Compares `a` and `b` (same frame count, joint hierarchy and feature dims, or InputError saying
// which differs; joint names may differ, as in a renamed rig) over every frame, and `queries` fixed-seed nearest-neighbour queries searched
// exhaustively in each.
DatabaseDifference compare_databases(const Database& a, const Database& b, int queries);

}  // namespace lmm::pipeline
