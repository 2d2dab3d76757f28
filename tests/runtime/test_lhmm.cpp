// LHMM(k, l) (Lee, Kwon & Lee 2023 Algorithm 1) with simple hooks on random-walk databases: LHMM(1, 1) is
// the nearest neighbour, a two-level result equals the tree evaluated by hand, and the number
// of searches is 1 + k + ... + k^(l-1).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lmm/motion/lhmm.hpp"
#include "support/search_fixture.hpp"

using namespace lmm;
using test::SearchFixture;

namespace {

// Queries are the database features of the frame plus an offset that depends on the root's
// x position and on how deep the context is.
struct Hooks {
  const Database& db;
  struct Context {
    int depth = 0;
  };
  void compute_query(const RootSample& root, int frame, Context& context, int, float* query) const {
    for (int d = 0; d < db.schema().dims; ++d) query[d] = db.features(frame)[d] + 0.3f * root.position.x - 0.2f * float(context.depth);
  }
  Context update_context(const Context& context) const { return Context{context.depth + 1}; }
};

}  // namespace

TEST(Lhmm, OneLevelIsTheNearestNeighbour) {
  SearchFixture fx(4);
  Hooks hooks{*fx.db};
  LhmmSearch s;
  s.init(fx.db, fx.search, SearchParams{}, 1, 1, 10);
  std::vector<float> query(size_t(fx.db->schema().dims));
  SearchResult nearest;
  for (int frame = 0; frame < fx.db->frame_count(); frame += 97) {
    const RootSample root{Vec3{0.5f, 0, 0}, Quat{}};
    Hooks::Context context;
    int best = -1;
    const float cost = long_horizon_match(s, hooks, root, frame, context, 1, -1, best);
    hooks.compute_query(root, frame, context, 0, query.data());
    ASSERT_EQ(fx.search.search(query.data(), -1, SearchParams{}, &nearest, 1, fx.scratch), 1);
    EXPECT_EQ(best, nearest.frame);
    EXPECT_FLOAT_EQ(cost, nearest.cost);
  }
}

TEST(Lhmm, TwoLevelsPickTheCheapestBranch) {
  SearchFixture fx(9);
  Hooks hooks{*fx.db};
  const int k = 4, step = 10;
  LhmmSearch s;
  s.init(fx.db, fx.search, SearchParams{}, k, 2, step);
  std::vector<float> query(size_t(fx.db->schema().dims));
  SearchResult first[4], second;
  for (int frame = 3; frame < fx.db->frame_count(); frame += 131) {
    const RootSample root{Vec3{0.2f, 0, 0.1f}, Quat{}};
    Hooks::Context context;
    int best = -1;
    const float cost = long_horizon_match(s, hooks, root, frame, context, 2, -1, best);
    // The same tree by hand.
    hooks.compute_query(root, frame, context, 0, query.data());
    const int found = fx.search.search(query.data(), -1, SearchParams{}, first, k, fx.scratch);
    float expected = INFINITY;
    int expected_frame = -1;
    for (int i = 0; i < found; ++i) {
      const int stop = fx.db->ranges()[size_t(clip_index(*fx.db, first[i].frame))].stop;
      const int next = std::min(first[i].frame + step, stop - 1);
      Hooks::Context child{1};
      hooks.compute_query(aligned_root(*fx.db, root, first[i].frame, next), next, child, 1, query.data());
      ASSERT_EQ(fx.search.search(query.data(), -1, SearchParams{}, &second, 1, fx.scratch), 1);
      if (first[i].cost + second.cost < expected) expected = first[i].cost + second.cost, expected_frame = first[i].frame;
    }
    EXPECT_EQ(best, expected_frame);
    EXPECT_FLOAT_EQ(cost, expected);
  }
}

TEST(Lhmm, SearchesOncePerNodeOfTheTree) {
  SearchFixture fx(2);
  Hooks hooks{*fx.db};
  const int shapes[][3] = {{3, 3, 13}, {10, 3, 111}, {1, 1, 1}, {2, 4, 15}};
  for (const auto& shape : shapes) {
    LhmmSearch s;
    s.init(fx.db, fx.search, SearchParams{}, shape[0], shape[1], 10);
    s.prune = false;
    Hooks::Context context;
    int best = -1;
    long_horizon_match(s, hooks, RootSample{}, 100, context, shape[1], -1, best);
    EXPECT_EQ(s.knn_calls, shape[2]) << "k " << shape[0] << " l " << shape[1];
    EXPECT_GE(best, 0);
  }
}

TEST(Lhmm, BranchAndBoundGivesTheWholeTreesAnswerWithFewerSearches) {
  SearchFixture fx(6);
  Hooks hooks{*fx.db};
  const int shapes[][2] = {{3, 3}, {10, 3}, {2, 4}, {4, 2}};
  long long searches[2] = {0, 0};
  for (const auto& shape : shapes) {
    LhmmSearch whole, pruned;
    whole.init(fx.db, fx.search, SearchParams{}, shape[0], shape[1], 10);
    pruned.init(fx.db, fx.search, SearchParams{}, shape[0], shape[1], 10);
    whole.prune = false;
    for (int frame = 5; frame < fx.db->frame_count(); frame += 173) {
      const RootSample root{Vec3{0.01f * float(frame % 50), 0, 0}, Quat{}};
      Hooks::Context a, b;
      int whole_best = -1, pruned_best = -1;
      const float whole_cost = long_horizon_match(whole, hooks, root, frame, a, shape[1], -1, whole_best);
      const float pruned_cost = long_horizon_match(pruned, hooks, root, frame, b, shape[1], -1, pruned_best);
      ASSERT_EQ(pruned_best, whole_best) << "k " << shape[0] << " l " << shape[1] << " frame " << frame;
      ASSERT_EQ(pruned_cost, whole_cost) << "k " << shape[0] << " l " << shape[1] << " frame " << frame;
    }
    searches[0] += whole.knn_calls;
    searches[1] += pruned.knn_calls;
  }
  EXPECT_LT(searches[1], searches[0]);
}
