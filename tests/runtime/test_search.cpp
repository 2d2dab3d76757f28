#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "lmm/eval/search.hpp"
#include "lmm/eval/kernel_support.hpp"
#include "support/search_fixture.hpp"

using namespace lmm;
using test::SearchFixture;

namespace {

// Checks search == brute_force (frames and costs, bit for bit) on `trials` queries near random
// database frames (noise in proportion to each value), for k = 1, 3, 10 and four parameter sets; returns the comparisons made.
int expect_equals_brute_force(const FeatureSearch& search, int trials) {
  const Database& db = *search.database();
  SearchScratch scratch = search.make_scratch();
  std::mt19937 rng(5);
  std::normal_distribution<float> jitter(0.0f, 0.5f);
  std::uniform_int_distribution<int> frame(0, db.frame_count() - 1);
  const SearchParams variants[] = {SearchParams{}, SearchParams{0.5f, 20, 20}, SearchParams{0.0f, 0, 0},
                                   SearchParams{2.0f, 5, 60}};
  std::vector<float> query(size_t(search.dims()));
  int checked = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int near = frame(rng);
    for (int d = 0; d < search.dims(); ++d) {
      const float x = db.features(near)[d];
      query[size_t(d)] = x + jitter(rng) * (0.1f + std::abs(x));
    }
    const int current = trial % 3 == 0 ? -1 : frame(rng);
    const SearchParams& params = variants[trial % 4];
    for (int k : {1, 3, 10}) {
      SearchResult fast[10], slow[10];
      const int a = search.search(query.data(), current, params, fast, k, scratch);
      const int b = search.brute_force(query.data(), current, params, slow, k);
      EXPECT_EQ(a, b) << "trial " << trial << " k " << k;
      for (int i = 0; i < std::min(a, b); ++i) {
        EXPECT_EQ(fast[i].frame, slow[i].frame) << "trial " << trial << " k " << k << " rank " << i;
        EXPECT_EQ(fast[i].cost, slow[i].cost) << "trial " << trial << " k " << k << " rank " << i;
        if (i > 0) {
          EXPECT_LE(fast[i - 1].cost, fast[i].cost);
        }
      }
      ++checked;
    }
  }
  return checked;
}

// A database of 27 feature dimensions (as many as the bandai-loco schema: several terms per
// summation lane) holding random walks whose magnitudes span six decades, so sums of squares
// round in every lane: a kernel that fused, dropped or reordered an addition would disagree with
// the brute-force reference in the last bit.
std::shared_ptr<const Database> wide_database(AlignedBuffer& buffer, uint32_t seed) {
  test::SyntheticDatabase synthetic;
  std::mt19937 rng(seed);
  std::vector<int> lengths;
  for (int r = 0; r < 30; ++r) lengths.push_back(25 + int(rng() % 300));
  synthetic.randomize(lengths, seed);
  const int dims = 27, frames = synthetic.range_stop.back();
  synthetic.group_item_count = {3, 9};  // 3 bone positions (9 dims) + 9 trajectory samples (18 dims)
  synthetic.group_items = {1, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  synthetic.feature_offset.assign(dims, 0.0f);
  synthetic.feature_scale.assign(dims, 1.0f);
  synthetic.features.assign(size_t(frames) * dims, 0.0f);
  std::normal_distribution<float> step(0.0f, 0.15f);
  for (size_t r = 0; r < lengths.size(); ++r) {
    for (int d = 0; d < dims; ++d) {
      const float scale = std::pow(10.0f, float(d % 7) - 3.0f);
      float x = step(rng) * 10.0f * scale;
      for (int f = synthetic.range_start[r]; f < synthetic.range_stop[r]; ++f) {
        synthetic.features[size_t(f) * dims + size_t(d)] = x += step(rng) * scale;
      }
    }
  }
  buffer = test::aligned_copy(synthetic.build());
  std::string error;
  std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
  EXPECT_NE(db, nullptr) << error;
  return db;
}

TEST(Search, EqualsBruteForceOnRandomQueries) {
  SearchFixture fx(11);
  EXPECT_EQ(expect_equals_brute_force(fx.search, 400), 1200);
}

// With max_cost, the answers are those of the unlimited search that cost at most max_cost (the
// accelerated search and brute force alike), including a current frame; none below the first.
TEST(Search, MaxCostKeepsExactlyTheAnswersCostingNoMore) {
  SearchFixture fx(11);
  const Database& db = *fx.db;
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> frame(0, db.frame_count() - 1);
  std::vector<float> query(size_t(fx.search.dims()));
  for (int trial = 0; trial < 120; ++trial) {
    const int near = frame(rng);
    for (int d = 0; d < fx.search.dims(); ++d) query[size_t(d)] = db.features(near)[d] + 0.05f * float(d % 3);
    const int current = trial % 2 == 0 ? -1 : frame(rng);
    SearchParams params;
    SearchResult all[10];
    const int n = fx.search.search(query.data(), current, params, all, 10, fx.scratch);
    ASSERT_EQ(n, 10);
    // Limits: exactly the 4th cost (ties kept), halfway between the 7th and 8th, below the first.
    for (float limit : {all[3].cost, 0.5f * (all[6].cost + all[7].cost), 0.5f * all[0].cost}) {
      params.max_cost = limit;
      int expected = 0;
      while (expected < n && all[expected].cost <= limit) ++expected;
      SearchResult fast[10], slow[10];
      ASSERT_EQ(fx.search.search(query.data(), current, params, fast, 10, fx.scratch), expected) << trial;
      ASSERT_EQ(fx.search.brute_force(query.data(), current, params, slow, 10), expected) << trial;
      for (int i = 0; i < expected; ++i) {
        EXPECT_EQ(fast[i].frame, all[i].frame) << trial;
        EXPECT_EQ(fast[i].cost, all[i].cost) << trial;
        EXPECT_EQ(slow[i].frame, all[i].frame) << trial;
      }
    }
  }
}

// Every kernel path (portable, AVX2, AVX-512, as this build and CPU allow) returns the frames and
// costs of the portable brute force, bit for bit, on a narrow and a wide database.
TEST(Search, EveryKernelPathEqualsBruteForceBitForBit) {
  SearchFixture narrow(11);
  AlignedBuffer buffer;
  const std::shared_ptr<const Database> wide = wide_database(buffer, 4);
  ASSERT_NE(wide, nullptr);
  ASSERT_EQ(wide->schema().dims, 27);
  for (const std::shared_ptr<const Database>& db : {narrow.db, wide}) {
    for (KernelPath path : available_kernel_paths()) {
      SCOPED_TRACE(std::string(kernel_path_name(path)) + ", " + std::to_string(db->schema().dims) + " dims");
      FeatureSearch search;
      std::string error;
      ASSERT_TRUE(search.build(db, error, path)) << error;
      EXPECT_EQ(search.path(), path);
      EXPECT_EQ(expect_equals_brute_force(search, 200), 600);
    }
  }
}

// A database of `clips` clips of `length` frames whose 5 features are zero but the first, which
// is first_feature(frame, stop of its clip).
std::shared_ptr<const Database> clips_database(AlignedBuffer& buffer, int clips, int length,
                                               const std::function<float(int, int)>& first_feature) {
  test::SyntheticDatabase synthetic;
  synthetic.randomize(std::vector<int>(size_t(clips), length), 1);
  std::fill(synthetic.features.begin(), synthetic.features.end(), 0.0f);
  for (int f = 0; f < clips * length; ++f) {
    synthetic.features[size_t(f) * 5] = first_feature(f, (f / length + 1) * length);
  }
  buffer = test::aligned_copy(synthetic.build());
  std::string error;
  std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
  EXPECT_NE(db, nullptr) << error;
  return db;
}

// Every frame is v = 0 but frame `bait`, w = (1, 0, 0, 0, 0). Every box holding only v bounds
// the query's cost to v exactly: those boxes tie with the k-th cost once it is v's, and must
// still be searched (a lower frame wins the tie). w lies in a box with the last frames (the
// boxes cluster frames by features, equal features by index), whose bound is below v's cost, so
// it is searched first and fills the list with w and late frames of cost v; frames 0, 1, ...,
// in boxes (and groups and super groups: 12,000 frames make three) bounded by exactly v's cost,
// must then replace them.
TEST(Search, BoxWithBoundEqualToTheKthCostIsSearched) {
  AlignedBuffer buffer;
  const int bait = 11990;
  const std::shared_ptr<const Database> db =
      clips_database(buffer, 3, 4000, [](int f, int) { return f == bait ? 1.0f : 0.0f; });
  ASSERT_NE(db, nullptr);
  FeatureSearch search;
  std::string error;
  ASSERT_TRUE(search.build(db, error)) << error;
  SearchScratch scratch = search.make_scratch();
  const float query[5] = {1, 1, 0, 0, 0};
  const SearchParams params{0.0f, 0, 0};
  for (int k : {2, 3, 10}) {
    SearchResult fast[10], slow[10];
    const int a = search.search(query, -1, params, fast, k, scratch);
    ASSERT_EQ(a, search.brute_force(query, -1, params, slow, k));
    EXPECT_EQ(slow[0].frame, bait) << "the construction: w is the nearest";
    EXPECT_EQ(slow[1].frame, 0) << "the construction: frame 0 is the lowest frame of the next cost";
    for (int i = 0; i < a; ++i) {
      EXPECT_EQ(fast[i].frame, slow[i].frame) << "k " << k << " rank " << i;
      EXPECT_EQ(fast[i].cost, slow[i].cost) << "k " << k << " rank " << i;
    }
  }
}

// The first feature of every frame is its distance to its clip's end (1 to 200 in 100 clips),
// so the boxes cluster frames by that distance, the nearest to the end first: the first group
// of the first super group holds only excluded clip ends (ignore_range_end = 20), its later
// groups frames up to 41 from the end. A query 21 from the end must find those 21 from the end
// (cost 0, the lowest frames first), not skip the super group for its first group.
TEST(Search, SkipsExcludedClipEndsOnlyWhereNothingElseIs) {
  AlignedBuffer buffer;
  const std::shared_ptr<const Database> db =
      clips_database(buffer, 100, 200, [](int f, int stop) { return float(stop - f); });
  ASSERT_NE(db, nullptr);
  FeatureSearch search;
  std::string error;
  ASSERT_TRUE(search.build(db, error)) << error;
  SearchScratch scratch = search.make_scratch();
  const float query[5] = {21, 0, 0, 0, 0};
  const SearchParams params{0.0f, 20, 0};
  SearchResult fast[10], slow[10];
  ASSERT_EQ(search.search(query, -1, params, fast, 10, scratch), 10);
  ASSERT_EQ(search.brute_force(query, -1, params, slow, 10), 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(slow[i].frame, 200 * i + 179) << "the construction: 21 frames before each clip's end";
    EXPECT_EQ(fast[i].frame, slow[i].frame) << "rank " << i;
    EXPECT_EQ(fast[i].cost, slow[i].cost) << "rank " << i;
  }
}

// On 40,000 frames (ten super groups, in two tables) in clips of 40 to 1,000 frames, so that the
// clustered boxes mix frames of many clips and clip ends: the answers of brute force.
TEST(Search, EqualsBruteForceOnManySuperGroups) {
  test::SyntheticDatabase synthetic;
  std::mt19937 rng(12);
  std::vector<int> lengths;
  for (int frames = 0; frames < 40000; frames += lengths.back()) lengths.push_back(40 + int(rng() % 960));
  synthetic.randomize(lengths, 12);
  AlignedBuffer buffer = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_GT(db->frame_count(), 9 * 4096);
  FeatureSearch search;
  ASSERT_TRUE(search.build(db, error)) << error;
  EXPECT_EQ(expect_equals_brute_force(search, 60), 180);
}

TEST(Search, AutoPicksTheWidestKernelPath) {
  SearchFixture fx(3);
  EXPECT_EQ(fx.search.path(), available_kernel_paths().back());
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
