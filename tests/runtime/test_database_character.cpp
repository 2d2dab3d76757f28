// DatabaseCharacter (Clavet 2016 motion matching on a database) on the synthetic walks: the stick
// steers it and it searches, bad input is sanitised, variable time steps, no allocation per update,
// and mismatched schemas or search indexes are refused.
#include <gtest/gtest.h>

#include <cmath>

#include "lmm/character/database_character.hpp"
#include "support/allocation_counter.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;

namespace {

// The synthetic walks database (circles of two radii and a straight line) and its search.
class CharacterTest : public test::SyntheticWalksTest {
 protected:
  bool all_finite(const DatabaseCharacter& c) const {
    for (const Vec3& p : c.global_positions()) {
      if (!is_finite(p)) return false;
    }
    return true;
  }
};

}  // namespace

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

