// Long-horizon motion matching LHMM(k, l) (Lee, Kwon & Lee 2023 Sec. IV, Algorithm 1), independent of the
// task: a task supplies compute_query and update_context hooks (path following's are Lee, Kwon & Lee 2023
// Algorithms 2 and 3). LHMM(1, 1) is basic motion matching.
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/asset/features.hpp"
#include "lmm/eval/search.hpp"

namespace lmm {

// Most nearest-neighbour searches one LHMM(k, l) match may make (1 + k + ... + k^(l-1)): a
// work limit, so that a large k and l cannot stall a frame for minutes (LHMM(3, 3) makes 13).
constexpr long long kMaxLhmmSearches = 4096;

// Nearest-neighbour searches of one LHMM(k, l) match, 1 + k + ... + k^(l-1), saturated at
// kMaxLhmmSearches + 1 (k >= 1, l >= 1).
inline long long lhmm_search_count(int k, int levels) {
  long long total = 0, level_calls = 1;
  for (int level = 0; level < levels && total <= kMaxLhmmSearches; ++level) {
    total += level_calls;
    level_calls = std::min(level_calls * k, kMaxLhmmSearches + 1);
  }
  return std::min(total, kMaxLhmmSearches + 1);
}

// The searches of one LHMM(k, l): database, index, parameters and per-level scratch.
struct LhmmSearch {
  // Scratch of one level: its query, its k best answers and, for branch and bound, the cheapest
  // total found below its node so far and the cost of the candidate above that led to it.
  struct Level {
    std::vector<float> query;
    std::vector<SearchResult> results;
    SearchScratch scratch;
    float best = 0.0f;
    float entry_cost = 0.0f;
  };
  std::shared_ptr<const Database> db;
  const FeatureSearch* search = nullptr;
  SearchParams params;
  int k = 3;
  int levels = 3;
  int step_frames = 1;  // N: database frames a candidate plays before the next level
  std::vector<Level> scratch;
  int knn_calls = 0;  // nearest-neighbour searches so far
  // Branch and bound: skip the candidates that cannot lead to a cheaper total than one found
  // already (the same answer, fewer searches); false searches the whole tree, as Lee, Kwon & Lee
  // 2023 Algorithm 1 counts its kNN calls (1 + k + ... + k^(l-1)).
  bool prune = true;

  // Holds `database` (not null, shared), refers to `index` (which must outlive this) and sizes
  // the scratch (allocates).
  void init(std::shared_ptr<const Database> database, const FeatureSearch& index, const SearchParams& search_params,
            int k_best, int level_count, int step);
};

// `root` moved on the ground by the database root motion from frame `from` to frame `to`
// (Algorithm 1's alignment of a candidate's pose N frames later to the current root).
RootSample aligned_root(const Database& db, const RootSample& root, int from, int to);

// Whether a candidate of cost x at level `depth` cannot lead to a cheaper total than found so
// far: at this level or any above, the partial sum it starts (formed as long_horizon_match forms
// totals; adding the deeper costs, never negative, cannot lower it) is not below that level's best.
inline bool cannot_improve(const LhmmSearch& s, int depth, float x) {
  for (int d = depth;; --d) {
    if (x >= s.scratch[size_t(d)].best) return true;
    if (d == 0) return false;
    x = s.scratch[size_t(d)].entry_cost + x;
  }
}

// A bound on the cost of a useful answer at level `depth`: one costing more cannot lead to a
// cheaper total at any level above (see cannot_improve), with a margin for the rounding of the
// sums, so the bound is safe to search with. Infinite while no level above has a total.
inline float useful_cost_limit(const LhmmSearch& s, int depth) {
  const float margin = 2.0f * float(s.levels + 2) * std::numeric_limits<float>::epsilon();
  float limit = std::numeric_limits<float>::infinity(), above = 0.0f;
  for (int d = depth; d > 0; --d) {
    above += s.scratch[size_t(d)].entry_cost;
    const float best = s.scratch[size_t(d) - 1].best;
    if (best < std::numeric_limits<float>::max()) limit = std::min(limit, best - above + margin * (best + above));
  }
  return limit;
}

// Lee, Kwon & Lee 2023 Algorithm 1 from the character root `root` playing database frame `frame`:
// the query's k nearest frames (1 at the last level), each continued N frames, aligned and
// searched again l - 1 levels deep. Returns the cheapest total (sum of squared feature distances)
// and its first frame in `best_frame` (-1 when nothing was found); with s.prune, branches that
// cannot beat a total found already are not searched (the same answer). `current_frame` (or -1) is the
// top level's continuing candidate. Hooks:
//   void compute_query(const RootSample& root, int frame, Context& context, int level, float* query)
//   Context update_context(const Context& context) const
// No allocation.
template <typename Hooks, typename Context>
float long_horizon_match(LhmmSearch& s, Hooks& hooks, const RootSample& root, int frame, Context& context, int levels,
                         int current_frame, int& best_frame) {
  const int depth = s.levels - levels;
  LhmmSearch::Level& level = s.scratch[size_t(depth)];
  hooks.compute_query(root, frame, context, depth, level.query.data());
  ++s.knn_calls;
  SearchParams params = s.params;
  if (s.prune) params.max_cost = std::min(params.max_cost, useful_cost_limit(s, depth));
  const int found = s.search->search(level.query.data(), current_frame, params, level.results.data(),
                                     levels == 1 ? 1 : s.k, level.scratch);
  best_frame = found > 0 ? level.results[0].frame : -1;
  if (levels == 1 || found == 0) return found > 0 ? level.results[0].cost : std::numeric_limits<float>::max();
  level.best = std::numeric_limits<float>::max();
  for (int r = 0; r < found; ++r) {
    // Deeper levels use their own scratch, so this level's results stay valid.
    const SearchResult candidate = level.results[size_t(r)];
    if (s.prune && cannot_improve(s, depth, candidate.cost)) break;  // sorted: nor can the rest
    s.scratch[size_t(depth) + 1].entry_cost = candidate.cost;
    const int stop = s.db->ranges()[size_t(clip_index(*s.db, candidate.frame))].stop;
    const int next = candidate.frame + s.step_frames < stop ? candidate.frame + s.step_frames : stop - 1;
    Context child = hooks.update_context(context);
    int ignored = -1;
    const float cost = candidate.cost + long_horizon_match(s, hooks, aligned_root(*s.db, root, candidate.frame, next),
                                                           next, child, levels - 1, -1, ignored);
    if (cost < level.best) level.best = cost, best_frame = candidate.frame;
  }
  return level.best;
}

}  // namespace lmm
