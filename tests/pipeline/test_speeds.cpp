// Controller speeds measured from the data: characters steer with them by default, a controller
// config overrides them per key, and a bad config names the file, key and accepted range.
#include <gtest/gtest.h>

#include "lmm/character/database_character.hpp"
#include "lmm/import/config.hpp"
#include "support/synthetic_walks.hpp"
#include "support/temp_files.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

class SpeedsTest : public test::SyntheticWalksTest {
 protected:
  // Desired forward speed of a character given `settings` after one update at full stick.
  float desired_forward_speed(const CharacterSettings& settings) {
    DatabaseCharacter c;
    std::string error;
    EXPECT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
    GamepadInput in;
    in.left_y = 1.0f;
    c.update(in, 1.0f / 60.0f);
    return length(c.desired_velocity());
  }
};

std::string config_error(const std::string& text) {
  try {
    load_controller_config(test::write_text(test::temp_folder("speeds") + "/bad.toml", text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_F(SpeedsTest, TheDatabaseMeasuresItsSpeedsAndCharactersWalkAtThem) {
  const SpeedProfile& speeds = db_->speeds();
  ASSERT_TRUE(speeds.valid());
  // The synthetic walks: three clips of equal length at 1.5 and 2.5 m/s (circles) and 1.3 m/s
  // (straight): the median is 1.5, the 90th percentile 2.5.
  EXPECT_NEAR(speeds.walk_forward, 1.5f, 0.05f);
  EXPECT_NEAR(speeds.run_forward, 2.5f, 0.05f);
  EXPECT_FLOAT_EQ(desired_forward_speed(CharacterSettings{}), speeds.walk_forward);
  CharacterSettings fixed;
  fixed.speeds_from_data = false;
  EXPECT_FLOAT_EQ(desired_forward_speed(fixed), ControllerSettings{}.walk_forward);
}

TEST_F(SpeedsTest, AControllerConfigOverridesOnlyTheKeysItGives) {
  const std::string path = test::write_text(test::temp_folder("speeds") + "/c.toml",
                                            "[speeds]\nrun_forward = 2.5\n[springs]\nrotation_halflife = 0.3\n");
  std::string origin;
  const ControllerSettings s = controller_settings(db_->speeds(), "the database", load_controller_config(path), origin);
  EXPECT_EQ(s.run_forward, 2.5f);
  EXPECT_EQ(s.rotation_halflife, 0.3f);
  EXPECT_EQ(s.walk_forward, db_->speeds().walk_forward);
  EXPECT_EQ(s.velocity_halflife, ControllerSettings{}.velocity_halflife);
  EXPECT_NE(origin.find("measured from the database"), std::string::npos) << origin;
  EXPECT_NE(origin.find("c.toml"), std::string::npos) << origin;
  std::string default_origin;
  controller_settings(SpeedProfile{}, "the bundle", ControllerConfig{}, default_origin);
  EXPECT_NE(default_origin.find("defaults (the bundle has no measured speeds)"), std::string::npos) << default_origin;
}

TEST(ControllerConfig, ErrorsNameTheFileKeyAndRange) {
  EXPECT_NE(config_error("[speed]\nwalk_forward = 1\n").find("bad.toml:1: unknown table '[speed]'"), std::string::npos);
  EXPECT_NE(config_error("[speeds]\nwalk_fwd = 1\n").find("bad.toml:2: [speeds]: unknown key 'walk_fwd'"),
            std::string::npos);
  const std::string range = config_error("# slow\n[speeds]\nrun_side = -1  # m/s\n");
  EXPECT_NE(range.find("bad.toml:3: [speeds]: 'run_side' = -1 is outside [0.01, 100] m/s"), std::string::npos) << range;
  EXPECT_NE(config_error("[springs]\nvelocity_halflife = \"fast\"\n").find("'velocity_halflife' must be a number"),
            std::string::npos);
  EXPECT_NE(config_error("walk_forward = 1\n").find("outside the [speeds], [springs] and [states.NAME] tables"), std::string::npos);
  EXPECT_NE(config_error("[speeds]\nrun_back = 2\nrun_back = 3\n").find("'run_back' is given twice"), std::string::npos);
  EXPECT_NE(config_error("[springs]\nwalk_side = 1\n").find("[springs]: unknown key 'walk_side'"), std::string::npos);
  const std::string path = test::write_text(test::temp_folder("speeds") + "/slow.toml", "[speeds]\nrun_forward = 0.5\n");
  std::string origin;
  try {
    controller_settings(SpeedProfile{}, "the database", load_controller_config(path), origin);
    FAIL() << "a walk speed above its run speed must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("walk speed exceeds its run speed"), std::string::npos) << e.what();
  }
}

TEST(ControllerConfig, TheShippedFixedSpeedsConfigHoldsLmmkitsOldDefaults) {
  const ControllerConfig config = load_controller_config(default_config_dir() + "/controllers/fixed-0.2.toml");
  std::string origin;
  SpeedProfile measured;
  measured.walk_forward = 0.5f, measured.run_forward = 0.9f;  // anything: every speed is overridden
  measured.walk_side = measured.walk_back = 0.4f, measured.run_side = measured.run_back = 0.8f;
  const ControllerSettings s = controller_settings(measured, "the database", config, origin);
  const ControllerSettings d;
  EXPECT_EQ(s.walk_forward, d.walk_forward);
  EXPECT_EQ(s.walk_side, d.walk_side);
  EXPECT_EQ(s.walk_back, d.walk_back);
  EXPECT_EQ(s.run_forward, d.run_forward);
  EXPECT_EQ(s.run_side, d.run_side);
  EXPECT_EQ(s.run_back, d.run_back);
}

}  // namespace
