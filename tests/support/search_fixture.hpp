// A database of random-walk features in clips of varied lengths with its search index, for
// search and long-horizon matching tests.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lmm/asset/database.hpp"
#include "lmm/eval/search.hpp"
#include "support/synthetic_database.hpp"

namespace lmm::test {

// A database of random-walk features in clips of varied lengths, plus its search index.
struct SearchFixture {
  AlignedBuffer buffer;
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  SearchScratch scratch;

  // `edit` (when given) changes the synthetic database before it is built (e.g. annotates it).
  explicit SearchFixture(uint32_t seed, const std::function<void(SyntheticDatabase&)>& edit = {}) {
    test::SyntheticDatabase synthetic;
    std::mt19937 rng(seed);
    std::vector<int> lengths;
    for (int r = 0; r < 40; ++r) lengths.push_back(25 + int(rng() % 300));
    synthetic.randomize(lengths, seed);
    if (edit) edit(synthetic);
    buffer = test::aligned_copy(synthetic.build());
    std::string error;
    db = Database::load_buffer(buffer.data(), buffer.size(), error);
    EXPECT_NE(db, nullptr) << error;
    EXPECT_TRUE(search.build(db, error)) << error;
    scratch = search.make_scratch();
  }
};

// Annotates every frame of `synthetic` at random: tags "t0".."t<tags - 1>" each switched on and
// off in runs of 5 to 120 frames (on about `on` of the time), no-entry runs on about 5% of the
// frames and, with `biased`, a cost bias in [-0.5, 0.5] per run of frames.
inline void annotate_randomly(SyntheticDatabase& synthetic, int tags, float on, bool biased, uint32_t seed) {
  const size_t frames = synthetic.features.size() / synthetic.feature_offset.size();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> run(5, 120);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  // Calls set(first, last, on) on consecutive runs covering every frame, on with probability p.
  const auto runs = [&](float p, const std::function<void(size_t, size_t, bool)>& set) {
    for (size_t f = 0; f < frames;) {
      const size_t last = std::min(frames, f + size_t(run(rng)));
      set(f, last, unit(rng) < p);
      f = last;
    }
  };
  synthetic.tag_names.clear();
  synthetic.tag_masks.assign(2 * frames, 0);
  for (int t = 0; t < tags; ++t) {
    synthetic.tag_names += "t" + std::to_string(t) + "\n";
    runs(on, [&](size_t first, size_t last, bool set) {
      for (size_t f = first; set && f < last; ++f) synthetic.tag_masks[2 * f + size_t(t / 32)] |= static_cast<int32_t>(1u << (t % 32));
    });
  }
  synthetic.no_entry.assign(frames, 0);
  runs(0.05f, [&](size_t first, size_t last, bool set) {
    std::fill(synthetic.no_entry.begin() + long(first), synthetic.no_entry.begin() + long(last), uint8_t(set));
  });
  synthetic.cost_bias.clear();
  if (!biased) return;
  synthetic.cost_bias.assign(frames, 0.0f);
  runs(1.0f, [&](size_t first, size_t last, bool) {
    std::fill(synthetic.cost_bias.begin() + long(first), synthetic.cost_bias.begin() + long(last), unit(rng) - 0.5f);
  });
}

}  // namespace lmm::test
