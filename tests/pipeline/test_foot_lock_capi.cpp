// Foot locking of database and path characters through the C API (issue 44, item 4), on a few
// Bandai clips (the synthetic walks have no contacts): lmm_character_set_foot_lock gives the C++
// character's foot lock bit for bit, pins contact joints in contact, and turning it off gives
// back the unlocked pose.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "lmm/eval/search.hpp"
#include "support/bandai_data.hpp"
#include "support/c_character_poses.hpp"
#include "support/temp_files.hpp"

using namespace lmm;
namespace fs = std::filesystem;

namespace {

constexpr float kDt = 1.0f / 60.0f;

// The gamepad of update u: forwards, turning slowly left and right.
lmm_gamepad input_at(int u) {
  lmm_gamepad g{};
  g.left_x = 0.6f * std::sin(0.01f * float(u));
  g.left_y = 1.0f;
  return g;
}

class FootLockBandaiTest : public testing::Test {
 protected:
  // Imports the first eight walks (straight and turning) of `data`/normal into a database file; its path.
  std::string import_clips(const std::string& data) {
    std::vector<std::string> clips;
    for (const auto& entry : fs::directory_iterator(data + "/normal")) {
      if (entry.path().filename().string().find("_walk") != std::string::npos) clips.push_back(entry.path().string());
    }
    std::sort(clips.begin(), clips.end());
    clips.resize(std::min<size_t>(clips.size(), 8));
    const std::string path = test::temp_folder("foot-lock-capi") + "/clips.mmdb";
    test::import_bandai(clips, path);
    return path;
  }
};

TEST_F(FootLockBandaiTest, ADatabaseCharacterLocksAsTheCppOneAndUnlocksToTheFreePose) {
  REQUIRE_BANDAI(data, "normal");
  const std::string path = import_clips(data);
  lmm_database* cdb = lmm_database_load(path.c_str());
  ASSERT_NE(cdb, nullptr) << lmm_last_error();
  lmm_character* locked = lmm_character_create_database(cdb, 0.0f, 0.0f, 0.0f);
  lmm_character* free = lmm_character_create_database(cdb, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(locked, nullptr) << lmm_last_error();
  ASSERT_NE(free, nullptr) << lmm_last_error();
  ASSERT_EQ(lmm_character_set_foot_lock(locked, 1, 0.0f, 0.0f), 1) << lmm_last_error();
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(path, error);
  ASSERT_NE(db, nullptr) << error;
  FeatureSearch search;
  ASSERT_TRUE(search.build(db, error)) << error;
  CharacterSettings settings;
  settings.foot_lock = true;
  DatabaseCharacter twin;
  ASSERT_TRUE(twin.init(db, search, settings, Vec3{}, 0.0f, error)) << error;
  int twin_differs = 0;
  const test::LockRun run = test::run_locked(locked, free, 600, [&](lmm_character* c, int u) {
    const lmm_gamepad g = input_at(u);
    ASSERT_EQ(lmm_character_update(c, &g, kDt), 1) << lmm_last_error();
    if (c != locked) return;
    GamepadInput in;
    in.left_x = g.left_x, in.left_y = g.left_y;
    twin.update(in, kDt);
    twin_differs += test::same_pose(test::joints_of(locked), twin.global_positions()) ? 0 : 1;
  });
  EXPECT_EQ(twin_differs, 0);
  EXPECT_GT(run.differing, 100);  // the lock changes the pose
  EXPECT_GT(run.held_contacts, 100);
  EXPECT_LT(run.largest_held_move, 1e-4f);  // a foot in contact stays where it is
  ASSERT_EQ(lmm_character_set_foot_lock(locked, 0, 0.0f, 0.0f), 1) << lmm_last_error();
  const lmm_gamepad g = input_at(600);
  ASSERT_EQ(lmm_character_update(locked, &g, kDt), 1) << lmm_last_error();
  ASSERT_EQ(lmm_character_update(free, &g, kDt), 1) << lmm_last_error();
  EXPECT_TRUE(test::same_pose(test::joints_of(locked), test::joints_of(free)));
  lmm_character_release(locked);
  lmm_character_release(free);
  lmm_database_release(cdb);
}

TEST_F(FootLockBandaiTest, APathCharacterLocksItsFeet) {
  REQUIRE_BANDAI(data, "normal");
  const std::string path = import_clips(data);
  lmm_database* cdb = lmm_database_load(path.c_str());
  ASSERT_NE(cdb, nullptr) << lmm_last_error();
  const float samples[] = {0.0f, 0.0f, 0.0f, 4.0f, 0.0f, 5.0f, 8.0f, 4.0f, 5.0f};  // (t, x, z): an L
  lmm_character* locked = lmm_character_create_path(cdb, samples, 3, LMM_PATH_LOCAL, 1.0f, 0.0f, 0.0f, 0.0f);
  lmm_character* free = lmm_character_create_path(cdb, samples, 3, LMM_PATH_LOCAL, 1.0f, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(locked, nullptr) << lmm_last_error();
  ASSERT_NE(free, nullptr) << lmm_last_error();
  ASSERT_EQ(lmm_character_set_foot_lock(locked, 1, 0.0f, 0.0f), 1) << lmm_last_error();
  const test::LockRun run = test::run_locked(locked, free, 480, [](lmm_character* c, int) {
    ASSERT_EQ(lmm_character_update(c, nullptr, kDt), 1) << lmm_last_error();
  });
  EXPECT_GT(run.differing, 100);
  EXPECT_GT(run.held_contacts, 100);
  // Feet in contact stay put but where a lock stretched beyond 0.25 m releases (the path's corner).
  EXPECT_LT(run.held_but_moved, run.held_contacts / 20) << "largest move " << run.largest_held_move << " m";
  lmm_character_release(locked);
  lmm_character_release(free);
  lmm_database_release(cdb);
}

}  // namespace
