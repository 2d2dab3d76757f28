// Tag constraints on a DatabaseCharacter (issue 42): the synthetic walks tagged by clip ("even",
// "odd") and by time ("early": each clip's first 300 frames), steered by a wandering stick.
#include <gtest/gtest.h>

#include <cmath>

#include "lmm/character/database_character.hpp"
#include "support/allocation_counter.hpp"
#include "support/annotated_walks.hpp"

using namespace lmm;

namespace {

constexpr TagMask kEven = 1, kOdd = 2, kEarly = 4;
constexpr int kEarlyFrames = 300;

class ConstrainedCharacterTest : public testing::Test {
 protected:
  void SetUp() override {
    test::WalkAnnotations notes;
    notes.tag_names = "even\nodd\nearly\n";
    notes.tags = [this](int frame, int clip) {
      return (clip % 2 ? kOdd : kEven) | (frame - db_start(clip) < kEarlyFrames ? kEarly : 0);
    };
    test::load_annotated_walks(notes, buffer_, db_, search_);
  }
  // First frame of clip `clip` of the synthetic walks.
  int db_start(int clip) {
    if (starts_.empty()) starts_ = test::synthetic_walk_starts();
    return starts_[size_t(clip)];
  }
  // A character with `constraint` from init.
  DatabaseCharacter character(const TagConstraint& constraint, float transition_cost = 0.0f) {
    CharacterSettings settings;
    settings.search.constraint = constraint;
    settings.search.transition_cost = transition_cost;
    DatabaseCharacter c;
    std::string error;
    EXPECT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
    return c;
  }
  // Updates `c` `updates` times by `dt` with a wandering stick; returns how many updates ended on
  // a frame whose tags `allowed` rejects.
  static int wander(DatabaseCharacter& c, int updates, float dt, const TagConstraint& allowed) {
    int violations = 0;
    for (int u = 0; u < updates; ++u) {
      GamepadInput in;
      in.left_x = std::sin(0.013f * float(u));
      in.left_y = std::cos(0.007f * float(u));
      c.update(in, dt);
      violations += !allowed.allows(c.current_tags());
    }
    return violations;
  }

  AlignedBuffer buffer_;
  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
  std::vector<int> starts_;
};

}  // namespace

TEST_F(ConstrainedCharacterTest, PlaysOnlyAllowedFramesAfterTheFirstUpdate) {
  for (float dt : {1.0f / 60.0f, 0.1f}) {
    for (TagConstraint constraint : {TagConstraint{kOdd, 0, 0}, TagConstraint{0, 0, kOdd}, TagConstraint{kEarly, 0, 0},
                                     TagConstraint{0, kOdd | kEarly, kEven}}) {
      DatabaseCharacter c = character(constraint);
      const int updates = int(60.0f / dt);
      EXPECT_EQ(wander(c, updates, dt, constraint), 0) << "dt " << dt << " require " << constraint.require_all;
      EXPECT_TRUE(c.constraint_held());
      EXPECT_EQ(c.stats().unsatisfied_searches, 0);
      EXPECT_GT(c.stats().transitions, 0);
    }
  }
}

TEST_F(ConstrainedCharacterTest, LeavesATagRangeBeforeItEnds) {
  // Only "early" frames (each clip's first 300), and a transition cost so high that the regular
  // searches keep playing: the character must still jump back before frame 300 of whatever clip
  // it plays, about every 5 s.
  const TagConstraint early{kEarly, 0, 0};
  DatabaseCharacter c = character(early, 1e6f);
  EXPECT_EQ(wander(c, 3600, 1.0f / 60.0f, early), 0);
  EXPECT_GE(c.stats().constraint_searches, 10);
  EXPECT_GE(c.stats().transitions, 10);
}

TEST_F(ConstrainedCharacterTest, AChangeOfConstraintTransitionsInTheNextUpdate) {
  DatabaseCharacter c = character(TagConstraint{kEven, 0, 0});
  wander(c, 120, 1.0f / 60.0f, TagConstraint{});
  ASSERT_TRUE(c.current_tags() & kEven);
  const int searches = c.stats().constraint_searches;
  c.set_constraint(TagConstraint{kOdd, 0, 0});
  c.update(GamepadInput{}, 1.0f / 60.0f);
  EXPECT_TRUE(c.current_tags() & kOdd);
  EXPECT_EQ(c.stats().constraint_searches, searches + 1);
}

TEST_F(ConstrainedCharacterTest, AnUnsatisfiableConstraintKeepsPlayingAndSaysSo) {
  DatabaseCharacter c = character(TagConstraint{kEven | kOdd, 0, 0});  // no frame has both
  const int first = c.current_frame();
  wander(c, 600, 1.0f / 60.0f, TagConstraint{});
  EXPECT_FALSE(c.constraint_held());
  EXPECT_GT(c.stats().unsatisfied_searches, 0);
  EXPECT_LE(c.stats().unsatisfied_searches, c.stats().searches);
  EXPECT_NE(c.current_frame(), first);  // kept playing
  EXPECT_TRUE(is_finite(c.root_position()));
  // Lifting the constraint ends the misses.
  c.set_constraint(TagConstraint{});
  const int misses = c.stats().unsatisfied_searches;
  wander(c, 120, 1.0f / 60.0f, TagConstraint{});
  EXPECT_EQ(c.stats().unsatisfied_searches, misses);
}

TEST_F(ConstrainedCharacterTest, ConstrainedUpdatesDoNotAllocate) {
  DatabaseCharacter c = character(TagConstraint{kEarly, 0, 0});
  wander(c, 10, 1.0f / 60.0f, TagConstraint{});
  test::start_counting_allocations();
  wander(c, 600, 1.0f / 60.0f, TagConstraint{});
  c.set_constraint(TagConstraint{0, kOdd, kEarly});
  wander(c, 600, 1.0f / 60.0f, TagConstraint{});
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}

namespace {

// The walks with "standing" on frames 100-399 of clips 2 and 5, "action" on 100-199 of clip 5
// (a standing gesture idle must avoid), "odd" on the odd clips.
class IdleCharacterTest : public ConstrainedCharacterTest {
 protected:
  static constexpr TagMask kStanding = 1, kAction = 2, kOddClip = 4;
  void SetUp() override {
    test::WalkAnnotations notes;
    notes.tag_names = "standing\naction\nodd\n";
    notes.tags = [this](int frame, int clip) {
      const int at = frame - db_start(clip);
      const TagMask standing = (clip == 2 || clip == 5) && at >= 100 && at < 400 ? kStanding : 0;
      const TagMask action = clip == 5 && at >= 100 && at < 200 ? kAction : 0;
      return standing | action | (clip % 2 ? kOddClip : 0);
    };
    test::load_annotated_walks(notes, buffer_, db_, search_);
  }
  DatabaseCharacter walking(const TagConstraint& constraint = {}) {
    DatabaseCharacter c = character(constraint);
    GamepadInput in;
    in.left_y = 1.0f;
    for (int u = 0; u < 60; ++u) c.update(in, 1.0f / 60.0f);
    return c;
  }
};

}  // namespace

TEST_F(IdleCharacterTest, AReleasedStickPlaysStandingFramesAndAPushLeavesThem) {
  DatabaseCharacter c = walking();
  EXPECT_FALSE(c.idle());
  for (int u = 0; u < 120; ++u) {
    c.update(GamepadInput{}, 1.0f / 60.0f);
    EXPECT_TRUE(c.idle());
    EXPECT_EQ(c.current_tags() & (kStanding | kAction), kStanding) << "update " << u << " frame " << c.current_frame();
  }
  GamepadInput push;
  push.left_y = 1.0f;
  c.update(push, 1.0f / 60.0f);
  EXPECT_FALSE(c.idle());
  EXPECT_FALSE(c.current_tags() & kStanding) << "still standing after the push";
}

TEST_F(IdleCharacterTest, IdleHonoursTheGamesConstraintOrYieldsToIt) {
  // Only odd clips: idle stands in clip 5's standing frames.
  DatabaseCharacter odd = walking(TagConstraint{kOddClip, 0, 0});
  for (int u = 0; u < 60; ++u) odd.update(GamepadInput{}, 1.0f / 60.0f);
  EXPECT_EQ(odd.current_tags() & (kStanding | kAction | kOddClip), kStanding | kOddClip);
  // A game constraint excluding standing contradicts idle: the game's constraint wins.
  DatabaseCharacter moving = walking(TagConstraint{0, 0, kStanding});
  for (int u = 0; u < 60; ++u) moving.update(GamepadInput{}, 1.0f / 60.0f);
  EXPECT_FALSE(moving.current_tags() & kStanding);
  EXPECT_TRUE(moving.constraint_held());
  EXPECT_EQ(moving.stats().unsatisfied_searches, 0);
}

TEST_F(IdleCharacterTest, IdleWithoutAnIdleFrameToEnterSteersAsWithoutIdle) {
  // Idle frames must be actions (clip 5 only), the game excludes odd clips: no frame holds both,
  // so a released stick steers as it does with idle off (the walks never stop: the root is pulled
  // back towards the stopping simulated root) instead of holding the walk it was playing.
  const auto released_travel = [&](const std::string& idle_require) {
    CharacterSettings settings;
    settings.idle.require = idle_require;
    settings.search.constraint = TagConstraint{0, 0, kOddClip};
    DatabaseCharacter c;
    std::string error;
    EXPECT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
    GamepadInput in;
    in.left_y = 1.0f;
    for (int u = 0; u < 90; ++u) c.update(in, 1.0f / 60.0f);
    for (int u = 0; u < 120; ++u) c.update(GamepadInput{}, 1.0f / 60.0f);
    const Vec3 from = on_ground(c.global_positions()[0]);
    for (int u = 0; u < 60; ++u) {
      c.update(GamepadInput{}, 1.0f / 60.0f);
      EXPECT_EQ(c.idle(), !idle_require.empty());
      EXPECT_FALSE(c.current_tags() & kOddClip);
    }
    return length(on_ground(c.global_positions()[0]) - from);
  };
  const float without_idle = released_travel(""), unmet_idle = released_travel("action");
  EXPECT_NEAR(unmet_idle, without_idle, 0.05f + 0.1f * without_idle);
}

TEST_F(IdleCharacterTest, IdleIsOffWithoutStandingFramesOrWhenDisabled) {
  CharacterSettings settings;
  settings.idle.require = "";
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
  for (int u = 0; u < 60; ++u) c.update(GamepadInput{}, 1.0f / 60.0f);
  EXPECT_FALSE(c.idle());
  settings.idle.require = "action";
  settings.idle.exclude = "standing";  // no frame is an action but not standing
  ASSERT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
  c.update(GamepadInput{}, 1.0f / 60.0f);
  EXPECT_FALSE(c.idle());
}

TEST_F(ConstrainedCharacterTest, StatesFromAControllerConfigSwitchByName) {
  const char* config =
      "[speeds]\nwalk_forward = 1.4\n"
      "[states.even]\nrequire = [\"even\"]\n"
      "[states.odd]\nrequire = [\"odd\"]\ntransition_cost = 0.5\n"
      "[states.early_odd]\nrequire = [\"odd\", \"early\"]\nidle = false\n"
      "[states.not_early]\nrequire_any = [\"even\", \"odd\"]\nexclude = [\"early\"]\n";
  std::vector<ControllerValue> values;
  std::vector<StateConfig> configs;
  std::string error;
  ASSERT_TRUE(parse_controller_config(config, values, error, &configs)) << error;
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[2].require, (std::vector<std::string>{"odd", "early"}));
  EXPECT_FALSE(configs[2].idle);
  EXPECT_EQ(configs[1].transition_cost, 0.5f);
  DatabaseCharacter c = character(TagConstraint{});
  ASSERT_TRUE(c.set_states(configs, error)) << error;
  EXPECT_FALSE(c.set_state("armed"));
  EXPECT_EQ(c.state(), "");
  const TagConstraint expected[] = {{kEven, 0, 0}, {kOdd, 0, 0}, {kOdd | kEarly, 0, 0}, {0, kEven | kOdd, kEarly}};
  for (int round = 0; round < 8; ++round) {
    const StateConfig& state = configs[size_t(round % 4)];
    ASSERT_TRUE(c.set_state(state.name));
    EXPECT_EQ(c.state(), state.name);
    EXPECT_EQ(wander(c, 300, 1.0f / 60.0f, expected[round % 4]), 0) << state.name;
  }
}

TEST_F(ConstrainedCharacterTest, StatesNamingUnknownTagsAreRefused) {
  DatabaseCharacter c = character(TagConstraint{});
  std::string error;
  StateConfig armed{"armed", {"armed"}, {}, {}, 0.0f, true};
  EXPECT_FALSE(c.set_states({StateConfig{"even", {"even"}, {}, {}, 0.0f, true}, armed}, error));
  EXPECT_NE(error.find("state 'armed'"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown tag 'armed'"), std::string::npos) << error;
  EXPECT_FALSE(c.set_state("even"));  // nothing was defined
}

TEST_F(ConstrainedCharacterTest, NewStatesKeepTheCurrentStateByNameOrClearItsConstraint) {
  DatabaseCharacter c = character(TagConstraint{});
  std::string error;
  ASSERT_TRUE(c.set_states({StateConfig{"odd", {"odd"}, {}, {}, 0.5f, true}}, error)) << error;
  ASSERT_TRUE(c.set_state("odd"));
  EXPECT_EQ(wander(c, 120, 1.0f / 60.0f, TagConstraint{kOdd, 0, 0}), 0);
  // Redefined under its name: the state stays, with its new constraint from the next update.
  ASSERT_TRUE(c.set_states({StateConfig{"odd", {"even"}, {}, {}, 0.0f, true}}, error)) << error;
  EXPECT_EQ(c.state(), "odd");
  EXPECT_EQ(c.constraint().require_all, kEven);
  EXPECT_EQ(wander(c, 120, 1.0f / 60.0f, TagConstraint{kEven, 0, 0}), 0);
  // Gone: no state, and no constraint left over from it.
  ASSERT_TRUE(c.set_states({StateConfig{"early", {"early"}, {}, {}, 0.0f, true}}, error)) << error;
  EXPECT_EQ(c.state(), "");
  EXPECT_TRUE(c.constraint().allows_all());
}

TEST_F(ConstrainedCharacterTest, StateNamesFollowTheNameRule) {
  DatabaseCharacter c = character(TagConstraint{});
  std::string error;
  for (const char* name : {"none", "a,b", " x", ""}) {
    EXPECT_FALSE(c.set_states({StateConfig{name, {"odd"}, {}, {}, 0.0f, true}}, error)) << name;
    EXPECT_NE(error.find("state '"), std::string::npos) << error;
  }
  EXPECT_FALSE(c.set_states({StateConfig{"a", {}, {}, {}, 0.0f, true}, StateConfig{"a", {}, {}, {}, 0.0f, true}}, error));
  EXPECT_NE(error.find("state 'a' is defined twice"), std::string::npos) << error;
}
