#include "lmm/motion/lhmm.hpp"

namespace lmm {

void LhmmSearch::init(std::shared_ptr<const Database> database, const FeatureSearch& index,
                      const SearchParams& search_params, int k_best, int level_count, int step) {
  db = std::move(database);
  search = &index;
  params = search_params;
  k = k_best;
  levels = level_count;
  step_frames = step;
  knn_calls = 0;
  scratch.assign(size_t(level_count), Level{});
  for (Level& level : scratch) {
    level.query.assign(size_t(db->schema().dims), 0.0f);
    level.results.assign(size_t(k_best), SearchResult{});
    level.scratch = index.make_scratch();
  }
}

RootSample aligned_root(const Database& db, const RootSample& root, int from, int to) {
  const Vec3 from_position = db.positions(from)[0], to_position = db.positions(to)[0];
  const Quat from_rotation = db.rotations(from)[0], to_rotation = db.rotations(to)[0];
  const Vec3 local = inverse_rotate(from_rotation, to_position - from_position);
  const Vec3 moved = root.position + rotate(root.rotation, local);
  return RootSample{Vec3{moved.x, 0.0f, moved.z}, normalize(root.rotation * (inverse(from_rotation) * to_rotation))};
}

}  // namespace lmm
