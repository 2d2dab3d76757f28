// Foot locking of a learned character through the C API (issue 44, item 4):
// lmm_character_set_foot_lock gives the C++ character's foot lock, bit for bit against a twin
// with LearnedSettings::foot_lock, and refuses bad distances. The database and path characters,
// which need contacts the synthetic walks lack, are tested on the Bandai data
// (pipeline/test_foot_lock_capi.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/character/learned_character.hpp"
#include "support/c_character_poses.hpp"
#include "support/synthetic_model.hpp"
#include "support/temp_files.hpp"

using namespace lmm;

namespace {

// The synthetic skeleton has no legs to bend, so the lock changes no pose here: this checks the
// call reaches the character (training/test_export.cpp checks the effect on a trained Bandai bundle).
TEST(FootLockCApi, ALearnedCharacterLocksAsTheCppOne) {
  ModelValues values = test::random_model_values(4, 17);
  for (int k = 1; k <= 2; ++k) values.pose_mean[values.pose_mean.size() - size_t(k)] = 5.0f;  // contacts: always
  std::string error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(values, false, error);
  ASSERT_TRUE(error.empty()) << error;
  const std::string file = test::temp_folder("foot-lock") + "/model.lmmw";
  ASSERT_TRUE(write_file_atomic(file, bytes.data(), bytes.size(), error)) << error;
  const test::LockRun run = test::learned_foot_lock_against_cpp(file);
  EXPECT_GT(run.held_contacts, 100);
}

TEST(FootLockCApi, BadDistancesAreRefusedNamingThem) {
  std::string error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(test::random_model_values(4, 17), false, error);
  const std::string file = test::temp_folder("foot-lock") + "/model.lmmw";
  ASSERT_TRUE(write_file_atomic(file, bytes.data(), bytes.size(), error)) << error;
  lmm_model* model = lmm_model_load(file.c_str());
  ASSERT_NE(model, nullptr) << lmm_last_error();
  lmm_character* c = lmm_character_create_learned(model, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_foot_lock(c, 1, NAN, 0.0f), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("unlock_distance"), std::string::npos) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_foot_lock(c, 1, 0.0f, -0.1f), 0);
  EXPECT_EQ(lmm_character_set_foot_lock(nullptr, 1, 0.0f, 0.0f), 0);
  lmm_character_release(c);
  lmm_model_release(model);
}

}  // namespace
