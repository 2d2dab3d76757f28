#include <gtest/gtest.h>

#include "lmm/training/database_tensors.hpp"
#include "lmm/training/nearest_neighbours.hpp"
#include "support/synthetic_database.hpp"

using namespace lmm;

namespace {

TEST(TrainingData, TensorsMirrorTheDatabase) {
  const test::SyntheticDatabase synthetic;
  const AlignedBuffer buffer = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> database = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(database, nullptr) << error;
  const Database& db = *database;
  const training::DatabaseTensors t = training::to_tensors(db);
  EXPECT_EQ(t.positions.sizes(), (std::vector<int64_t>{12, 3, 3}));
  EXPECT_EQ(t.rotations.sizes(), (std::vector<int64_t>{12, 3, 4}));
  EXPECT_EQ(t.features.sizes(), (std::vector<int64_t>{12, 5}));
  EXPECT_EQ(t.contacts.sizes(), (std::vector<int64_t>{12, 1}));
  EXPECT_FLOAT_EQ(t.positions[7][1][0].item<float>(), db.positions(7)[1].x);
  EXPECT_FLOAT_EQ(t.features[10][1].item<float>(), db.features(10)[1]);
  EXPECT_FLOAT_EQ(t.contacts[5][0].item<float>(), 1.0f);
  EXPECT_EQ(t.range_stops[1].item<int64_t>(), 12);
}

TEST(TrainingData, FaissNearestEqualsBruteForce) {
  torch::manual_seed(5);
  const torch::Tensor database = torch::randn({2000, 27});
  const torch::Tensor queries = torch::randn({300, 27});
  const torch::Tensor labels = training::exact_nearest(database, queries, 128);
  const torch::Tensor brute = torch::cdist(queries, database).argmin(1);
  EXPECT_TRUE(torch::equal(labels, brute));
  EXPECT_THROW(training::exact_nearest(database, torch::randn({3, 5})), c10::Error);
}

}  // namespace
