#include <gtest/gtest.h>

#include <random>

#include "lmm/search.hpp"
#include "support/search_fixture.hpp"

using namespace lmm;
using test::SearchFixture;

namespace {

TEST(Search, EqualsBruteForceOnRandomQueries) {
  SearchFixture fx(11);
  std::mt19937 rng(5);
  std::normal_distribution<float> jitter(0.0f, 0.5f);
  std::uniform_int_distribution<int> frame(0, fx.db->frame_count() - 1);
  const SearchParams variants[] = {SearchParams{}, SearchParams{0.5f, 20, 20}, SearchParams{0.0f, 0, 0},
                                   SearchParams{2.0f, 5, 60}};
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    float query[5];
    const int near = frame(rng);
    for (int d = 0; d < 5; ++d) query[d] = fx.db->features(near)[d] + jitter(rng);
    const int current = trial % 3 == 0 ? -1 : frame(rng);
    const SearchParams& params = variants[trial % 4];
    for (int k : {1, 3, 10}) {
      SearchResult fast[10], slow[10];
      const int a = fx.search.search(query, current, params, fast, k, fx.scratch);
      const int b = fx.search.brute_force(query, current, params, slow, k);
      ASSERT_EQ(a, b) << "trial " << trial << " k " << k;
      for (int i = 0; i < a; ++i) {
        EXPECT_EQ(fast[i].frame, slow[i].frame) << "trial " << trial << " k " << k << " rank " << i;
        EXPECT_EQ(fast[i].cost, slow[i].cost) << "trial " << trial << " k " << k << " rank " << i;
        if (i > 0) {
          EXPECT_LE(fast[i - 1].cost, fast[i].cost);
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1200);
}

TEST(Search, RespectsRangeEndsSurroundingAndTransitionCost) {
  SearchFixture fx(3);
  const SearchParams params{0.25f, 20, 20};
  // Query equal to a frame in the excluded end zone of clip 0: that frame is never returned.
  const DatabaseRange& clip = fx.db->ranges()[0];
  const int end_frame = clip.stop - 5;
  SearchResult r[3];
  ASSERT_EQ(fx.search.search(fx.db->features(end_frame), -1, params, r, 3, fx.scratch), 3);
  for (const SearchResult& x : r) EXPECT_FALSE(x.frame >= clip.stop - 20 && x.frame < clip.stop);
  // With a current frame: surrounding frames are skipped, and the current frame itself costs
  // no transition, so an exact match of the current frame is kept.
  const int current = clip.start + 10;
  ASSERT_GE(fx.search.search(fx.db->features(current), current, params, r, 3, fx.scratch), 1);
  EXPECT_EQ(r[0].frame, current);
  EXPECT_EQ(r[0].cost, 0.0f);
  for (int i = 1; i < 3; ++i) {
    EXPECT_GE(std::abs(r[i].frame - current), 20);
    EXPECT_GE(r[i].cost, 0.25f);
  }
}

TEST(Search, FindsExactFramesAndRejectsBadDatabases) {
  SearchFixture fx(8);
  for (int f : {0, 50, 400, 1000}) {
    SearchResult r;
    ASSERT_EQ(fx.search.search(fx.db->features(f), -1, SearchParams{0.0f, 0, 0}, &r, 1, fx.scratch), 1);
    EXPECT_EQ(r.cost, 0.0f);
    EXPECT_EQ(r.frame, f);
  }
  FeatureSearch unbuilt;
  SearchScratch none;
  SearchResult r;
  float q[5] = {};
  EXPECT_EQ(unbuilt.search(q, -1, SearchParams{}, &r, 1, none), 0);
  EXPECT_EQ(fx.search.search(q, -1, SearchParams{}, &r, 1, none), 0);  // scratch of another index
}

TEST(Search, HandlesEdgeParametersLikeBruteForce) {
  SearchFixture fx(21);
  float query[5];
  for (int d = 0; d < 5; ++d) query[d] = fx.db->features(300)[d] + 0.3f;
  for (const SearchParams& params : {SearchParams{0.5f, -5, 0}, SearchParams{INFINITY, 0, 0}, SearchParams{0.0f, 400, -3}}) {
    SearchResult fast[10], slow[10];
    const int a = fx.search.search(query, 300, params, fast, 10, fx.scratch);
    const int b = fx.search.brute_force(query, 300, params, slow, 10);
    ASSERT_EQ(a, b);
    int current_entries = 0;
    for (int i = 0; i < a; ++i) {
      EXPECT_EQ(fast[i].frame, slow[i].frame);
      EXPECT_EQ(fast[i].cost, slow[i].cost);
      current_entries += fast[i].frame == 300 ? 1 : 0;
    }
    EXPECT_EQ(current_entries, 1);  // the current frame is a candidate once, never twice
  }
  query[2] = NAN;
  SearchResult r;
  EXPECT_EQ(fx.search.search(query, 300, SearchParams{}, &r, 1, fx.scratch), 0);
  EXPECT_EQ(fx.search.brute_force(query, 300, SearchParams{}, &r, 1), 0);
}

}  // namespace
