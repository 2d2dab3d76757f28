// A database of random-walk features in clips of varied lengths with its search index, for
// search and long-horizon matching tests.
#pragma once

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

  explicit SearchFixture(uint32_t seed) {
    test::SyntheticDatabase synthetic;
    std::mt19937 rng(seed);
    std::vector<int> lengths;
    for (int r = 0; r < 40; ++r) lengths.push_back(25 + int(rng() % 300));
    synthetic.randomize(lengths, seed);
    buffer = test::aligned_copy(synthetic.build());
    std::string error;
    db = Database::load_buffer(buffer.data(), buffer.size(), error);
    EXPECT_NE(db, nullptr) << error;
    EXPECT_TRUE(search.build(db, error)) << error;
    scratch = search.make_scratch();
  }
};

}  // namespace lmm::test
