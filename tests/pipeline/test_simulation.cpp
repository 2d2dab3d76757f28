// lmm-sim's engine: foot locking on the synthetic walks (a seeded random script run with and
// without it), input scripts (parsing, errors naming the line, seeded random scripts) and their
// gameplay commands on annotated walks (issue 42).
#include <cmath>

#include <gtest/gtest.h>

#include "lmm/common/errors.hpp"
#include "lmm/core/springs.hpp"
#include "lmm/engines/simulation.hpp"
#include "support/annotated_walks.hpp"
#include "support/foot_lock_runs.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/synthetic_model.hpp"
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

namespace {

// The synthetic walks with "first" on clip 0 and its mirror (3), "act" on frames 100-250 of clip
// 1, and a "step" event on every 10th frame.
class GameplaySimulation : public testing::Test {
 protected:
  void SetUp() override {
    const std::vector<int> starts = test::synthetic_walk_starts();
    test::WalkAnnotations notes;
    notes.tag_names = "first\nact\n";
    notes.tags = [starts](int frame, int clip) {
      const int at = frame - starts[size_t(clip)];
      return TagMask(clip % 3 == 0 ? 1 : 0) | TagMask(clip == 1 && at >= 100 && at <= 250 ? 2 : 0);
    };
    notes.event_names = "step\n";
    for (int f = 0; f < test::kSyntheticWalkFrames; f += 10) {
      notes.event_frames.push_back(f);
      notes.event_name_index.push_back(0);
    }
    test::load_annotated_walks(notes, buffer_, db_, search_);
  }
  SimMetrics run(const std::string& csv, float seconds, const std::vector<StateConfig>& states = {}) {
    const std::string path = test::write_text(test::temp_folder("gameplay") + "/in.csv", csv);
    std::vector<CharacterTrack> tracks;
    return run_simulation(db_, search_, CharacterSettings{}, {load_input_script(path)}, seconds, 1.0f / 60.0f, tracks,
                          states);
  }

  AlignedBuffer buffer_;
  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
};

}  // namespace

TEST_F(GameplaySimulation, ScriptColumnsSetConstraintsStatesAndActions) {
  const SimMetrics m = run("time,stick_x,stick_y,camera_deg,strafe,gait,require,exclude,state,action\n"
                           "0,0,1,0,0,0,first,,,\n"
                           "5,0,1,0,0,0,none,first,,\n"
                           "10,0.5,1,0,0,0,,,,act\n"
                           "16,0,1,0,0,0,,,only_first,\n",
                           22.0f, {StateConfig{"only_first", {"first"}, {}, {}, 0.0f, true}});
  const GameplayMetrics& g = m.gameplay;
  ASSERT_TRUE(g.measured);
  EXPECT_EQ(g.constraint_violations, 0);
  EXPECT_EQ(g.forbidden_entries, 0);
  EXPECT_EQ(g.event_mismatches, 0);
  // "first" was required for 5 s and from 16 s (after the action), excluded from 5 s to 10 s.
  ASSERT_EQ(g.tag_seconds.size(), 2u);
  EXPECT_EQ(g.tag_seconds[0].first, "first");
  EXPECT_GT(g.tag_seconds[0].second, 9.5);
  EXPECT_LT(g.tag_seconds[0].second, 16.5);
  ASSERT_EQ(g.actions.size(), 1u);
  EXPECT_EQ(g.actions[0].tags, "act");
  EXPECT_TRUE(g.actions[0].in_order);
  EXPECT_TRUE(g.actions[0].ended);
  EXPECT_EQ(g.actions[0].last, g.actions[0].run_last);
  // Entered from walking: the pose-jump bound covers the fastest joint while it played.
  const ActionRecord& a = g.actions[0];
  EXPECT_GT(a.before_joint_speed_m_s, 0.5);
  EXPECT_GT(a.clip_joint_speed_m_s, 0.5);
  EXPECT_GT(a.entered_joint_speed_m_s, 0.0);
  EXPECT_NEAR(a.jump_bound_m_s,
              a.before_joint_speed_m_s + 2.0 * a.clip_joint_speed_m_s + spring_y(CharacterSettings{}.inertialization_halflife) * a.pose_offset_m / std::exp(1.0),
              1e-3);
  EXPECT_LE(a.entered_joint_speed_m_s, a.jump_bound_m_s);
  EXPECT_EQ(g.action_ends, 1);
  ASSERT_EQ(g.events.size(), 1u);
  // Steps fired (each update's are checked against the markers played: event_mismatches).
  EXPECT_GT(g.events[0].second, 20);
}

TEST_F(GameplaySimulation, RandomConstraintsAreNeverBrokenAndUntaggedDatabasesMeasureNothing) {
  InputScript script = random_input_script(3, 60.0f);
  add_random_constraints(script, db_->annotations().tag_set(), tags_present(*db_), 3);
  std::vector<CharacterTrack> tracks;
  const SimMetrics m = run_simulation(db_, search_, CharacterSettings{}, {script}, 60.0f, 1.0f / 60.0f, tracks);
  EXPECT_TRUE(m.gameplay.measured);
  EXPECT_EQ(m.gameplay.constraint_violations, 0);
  EXPECT_EQ(m.gameplay.forbidden_entries, 0);
  EXPECT_GT(m.gameplay.constraint_searches, 5);

  std::shared_ptr<const Database> plain;
  FeatureSearch search;
  test::load_synthetic_walks(plain, search);
  const SimMetrics untagged = run_simulation(plain, search, CharacterSettings{}, {random_input_script(3, 5.0f)}, 5.0f,
                                             1.0f / 60.0f, tracks);
  EXPECT_FALSE(untagged.gameplay.measured);
}

TEST_F(GameplaySimulation, BadGameplayCellsNameTheLine) {
  EXPECT_NE(script_error("time,stick_x,stick_y,camera_deg,strafe,gait,action_in_place\n0,0,1,0,0,0,2\n")
                .find("in.csv:2: column 'action_in_place': '2' is not 0 or 1"),
            std::string::npos);
  const auto error = [&](const std::string& csv) {
    try {
      run(csv, 1.0f);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string header = "time,stick_x,stick_y,camera_deg,strafe,gait,require,state,action\n";
  EXPECT_NE(error(header + "0,0,1,0,0,0,walk,,\n").find("input script line 2: unknown tag 'walk'"), std::string::npos);
  EXPECT_NE(error(header + "0,0,1,0,0,0,,armed,\n").find("input script line 2: unknown state 'armed'"),
            std::string::npos);
  EXPECT_NE(error(header + "0,0,1,0,0,0,,,first|act\n").find("no frame holds every tag of action 'first,act'"),
            std::string::npos);
}

TEST(LearnedGameplaySimulation, ScriptCommandsReachTheLearnedCharacterAndAreMeasured) {
  std::string error;
  const AlignedBuffer bytes = test::aligned_copy(test::synthetic_bundle(test::tagged_model_values(4, 9), false, error));
  const std::shared_ptr<const Model> model = Model::load_buffer(bytes.data(), bytes.size(), error);
  ASSERT_NE(model, nullptr) << error;
  const InputScript script = load_input_script(test::write_text(
      testing::TempDir() + "learned-gameplay.csv",
      "time,stick_x,stick_y,camera_deg,strafe,gait,require,exclude,action,state\n"
      "0,0,1,0,0,0,calm,,,\n"
      "1,0,1,0,0,0,,,calm,\n"
      "3,0,1,0,0,0,none,calm,,\n"
      "4,0,1,0,0,0,,,,quiet\n"));
  const std::vector<StateConfig> states{StateConfig{"quiet", {}, {}, {"calm"}, 0.0f, true}};
  std::vector<CharacterTrack> tracks;
  const SimMetrics m = run_simulation(model, LearnedSettings{}, {script}, 6.0f, 1.0f / 60.0f, tracks, states);
  const GameplayMetrics& g = m.gameplay;
  ASSERT_TRUE(g.measured);
  EXPECT_EQ(g.constraint_violations, 0);
  EXPECT_GE(g.constraint_searches, 3);  // the constraint, the action and the state each projected
  ASSERT_EQ(g.actions.size(), 1u);
  EXPECT_TRUE(g.actions[0].ended);
  EXPECT_NEAR(g.actions[0].seconds, test::kSyntheticCalmSeconds, 2.0 / 60.0);
  EXPECT_EQ(g.action_ends, 1);
  ASSERT_EQ(g.tag_seconds.size(), 2u);
  EXPECT_EQ(g.tag_seconds[0].first, "calm");
  EXPECT_GT(g.tag_seconds[0].second, 2.0);  // required for 3 s
  EXPECT_LT(g.tag_seconds[0].second, 3.2);  // excluded from 3 s on
  const auto named = [&](const std::string& name) {
    for (const auto& [event, count] : g.events) if (event == name) return count;
    return -1L;
  };
  EXPECT_GE(named("enter_calm"), 1);
  EXPECT_GE(named("leave_calm"), 1);
  // An action of no action tag, or a tag of no model, names the script line.
  const InputScript loud = load_input_script(test::write_text(
      testing::TempDir() + "learned-loud.csv", "time,stick_x,stick_y,camera_deg,strafe,gait,action\n0,0,1,0,0,0,loud\n"));
  try {
    run_simulation(model, LearnedSettings{}, {loud}, 1.0f, 1.0f / 60.0f, tracks);
    ADD_FAILURE() << "an action of no action tag ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("input script line 2: action 'loud' holds no action tag of the model (its "
                                         "action tags: calm)"),
              std::string::npos)
        << e.what();
  }
}
