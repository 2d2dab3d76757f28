// lmm-sim's engine: foot locking on the synthetic walks (a seeded random script run with and
// without it) and input scripts (parsing, errors naming the line, seeded random scripts).
#include <gtest/gtest.h>

#include "lmm/common/errors.hpp"
#include "lmm/engines/simulation.hpp"
#include "support/foot_lock_runs.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

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

}  // namespace

TEST(SimulationEngine, FootLockReducesSlidingOnTheSyntheticWalks) {
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  test::load_synthetic_walks(db, search);
  const test::FootLockRuns runs = test::run_with_and_without_foot_lock(db, search, 3, 20.0f);
  const SimMetrics& a = runs.free_feet;
  const SimMetrics& b = runs.locked_feet;
  EXPECT_EQ(a.nan_frames, 0);
  EXPECT_EQ(b.nan_frames, 0);
  EXPECT_LE(b.foot_slide_cm_per_s, a.foot_slide_cm_per_s);
  EXPECT_EQ(runs.tracks.size(), 1u);
  EXPECT_EQ(runs.tracks[0].clip.frames, 1200);
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
