#include <gtest/gtest.h>

#include <cmath>

#include "lmm/character/database_character.hpp"
#include "lmm/engines/simulation.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "support/allocation_counter.hpp"
#include "support/foot_lock_runs.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

// A database imported from synthetic walks (circles of two radii and a straight line).
class CharacterTest : public testing::Test {
 protected:
  void SetUp() override { test::load_synthetic_walks(test::temp_folder("db"), db_, search_); }

  bool all_finite(const DatabaseCharacter& c) const {
    for (const Vec3& p : c.global_positions()) {
      if (!is_finite(p)) return false;
    }
    return true;
  }

  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
};

TEST_F(CharacterTest, FollowsTheStickAndSearches) {
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
  GamepadInput in;
  in.left_y = 1.0f;
  for (int f = 0; f < 180; ++f) c.update(in, 1.0f / 60.0f);
  EXPECT_GT(c.root_position().z, 1.0f);  // walked forward
  EXPECT_GE(c.stats().searches, 25);     // every 0.1 s at least
  EXPECT_TRUE(all_finite(c));
  EXPECT_NEAR(c.global_positions()[1].y, 0.9f, 0.1f);  // hips at their height
}

TEST_F(CharacterTest, SanitisesNonFiniteInputAndClampsDt) {
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
  GamepadInput bad;
  bad.left_x = std::nanf("");
  bad.left_y = INFINITY;
  bad.camera_azimuth = -INFINITY;
  for (int f = 0; f < 30; ++f) c.update(bad, 1.0f / 60.0f);
  EXPECT_EQ(c.stats().sanitized_inputs, 90);
  for (float dt : {0.0f, -1.0f, 5.0f, std::nanf("")}) c.update(GamepadInput{}, dt);
  EXPECT_EQ(c.stats().clamped_dt, 4);
  EXPECT_TRUE(all_finite(c));
  EXPECT_TRUE(is_finite(c.root_position()));
}

TEST_F(CharacterTest, RunsAtVariableTimeSteps) {
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
  GamepadInput in;
  in.left_y = 1.0f;
  in.left_x = 0.4f;
  const float steps[] = {1.0f / 144.0f, 1.0f / 30.0f, 1.0f / 60.0f, 0.05f, 0.003f};
  float time = 0.0f;
  for (int f = 0; f < 400; ++f) {
    c.update(in, steps[f % 5]);
    time += steps[f % 5];
  }
  EXPECT_TRUE(all_finite(c));
  EXPECT_GT(length(c.root_position()), 0.5f * time * 0.5f);  // kept moving
}

TEST_F(CharacterTest, UpdateDoesNotAllocate) {
  CharacterSettings settings;
  settings.foot_lock = true;
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
  GamepadInput in;
  in.left_y = 1.0f;
  c.update(in, 1.0f / 60.0f);
  test::start_counting_allocations();
  for (int f = 0; f < 600; ++f) {
    in.left_x = std::sin(0.01f * f);
    c.update(in, 1.0f / 60.0f);
  }
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  EXPECT_GT(c.stats().searches, 50);
}

TEST_F(CharacterTest, RejectsMismatchedSchemasAndBadSearchIndexes) {
  CharacterSettings settings;
  settings.expected_schema = "locomotion27";
  DatabaseCharacter c;
  std::string error;
  EXPECT_FALSE(c.init(db_, search_, settings, Vec3{}, 0.0f, error));
  EXPECT_NE(error.find("'locomotion27'"), std::string::npos) << error;
  EXPECT_NE(error.find("'biped'"), std::string::npos) << error;
  FeatureSearch unbuilt;
  EXPECT_FALSE(c.init(db_, unbuilt, CharacterSettings{}, Vec3{}, 0.0f, error));
  EXPECT_NE(error.find("feature dims"), std::string::npos) << error;
}

TEST_F(CharacterTest, FootLockReducesSliding) {
  const test::FootLockRuns runs = test::run_with_and_without_foot_lock(db_, search_, 3, 20.0f);
  const SimMetrics& a = runs.free_feet;
  const SimMetrics& b = runs.locked_feet;
  EXPECT_EQ(a.nan_frames, 0);
  EXPECT_EQ(b.nan_frames, 0);
  EXPECT_LE(b.foot_slide_cm_per_s, a.foot_slide_cm_per_s);
  EXPECT_EQ(runs.tracks.size(), 1u);
  EXPECT_EQ(runs.tracks[0].clip.frames, 1200);
}

// The error of load_input_script for `csv`, or "".
std::string script_error(const std::string& csv) {
  const std::string path = test::temp_folder("script") + "/in.csv";
  try {
    load_input_script(test::write_text(path, csv));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(InputScripts, ParseKeysAndNameBadLines) {
  const std::string dir = test::temp_folder("ok");
  const InputScript s = load_input_script(test::write_text(
      dir + "/in.csv", "# walk, then run right\ngait,time,stick_x,stick_y,camera_deg,strafe\n0,0,0,1,0,0\n1,2.5,1,0,90,1\n0,4,nan,0,0,0\n"));
  ASSERT_EQ(s.keys.size(), 3u);
  EXPECT_EQ(s.at(1.0f).left_y, 1.0f);
  EXPECT_EQ(s.at(3.0f).gait, 1.0f);
  EXPECT_TRUE(s.at(3.0f).strafe);
  EXPECT_NEAR(s.at(3.0f).camera_azimuth, 1.5707963f, 1e-6f);
  EXPECT_TRUE(std::isnan(s.at(5.0f).left_x));  // passed on; the character sanitises it
  EXPECT_EQ(s.at(-1.0f).left_y, 0.0f);         // neutral before the first key

  const std::string header = "time,stick_x,stick_y,camera_deg,strafe,gait\n";
  EXPECT_NE(script_error(header + "0,0,1,0,0,0\n1,0,abc,0,0,0\n").find("in.csv:3: column 'stick_y': 'abc'"), std::string::npos);
  EXPECT_NE(script_error(header + "0,0,1,0,0\n").find("in.csv:2: expected 6 values, found 5"), std::string::npos);
  EXPECT_NE(script_error(header + "2,0,1,0,0,0\n1,0,1,0,0,0\n").find("in.csv:3: time goes backwards"), std::string::npos);
  EXPECT_NE(script_error("time,stick_x\n0,1\n").find("lacks column 'stick_y'"), std::string::npos);
  // Found by fuzz_input_script: a repeated header name made rows index past their cells.
  EXPECT_NE(script_error("time,stick_x,stick_y,camera_deg,strafe,gait,time\n0,0,1,0,0,0\n").find("in.csv:1: column 'time' appears twice"),
            std::string::npos);
  EXPECT_NE(script_error(header + "nan,0,1,0,0,0\n").find("column 'time'"), std::string::npos);
  EXPECT_NE(script_error(header).find("no input rows"), std::string::npos);
}

TEST(InputScripts, RandomScriptsAreSeeded) {
  const InputScript a = random_input_script(4, 30.0f), b = random_input_script(4, 30.0f), c = random_input_script(5, 30.0f);
  ASSERT_EQ(a.keys.size(), b.keys.size());
  EXPECT_EQ(a.at(17.0f).left_x, b.at(17.0f).left_x);
  EXPECT_NE(a.at(17.0f).left_x, c.at(17.0f).left_x);
  for (const InputKey& k : a.keys) EXPECT_FALSE(k.input.strafe);
  bool strafes = false;
  for (const InputKey& k : random_input_script(4, 300.0f, true).keys) strafes = strafes || k.input.strafe;
  EXPECT_TRUE(strafes);
}

}  // namespace
