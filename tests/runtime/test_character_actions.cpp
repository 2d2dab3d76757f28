// One-shot actions of a DatabaseCharacter (issue 42): the synthetic walks with an "act" tag on
// two runs of frames, entered from walking, played through, cancelled, interrupted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "support/allocation_counter.hpp"
#include "support/annotated_walks.hpp"

using namespace lmm;

namespace {

constexpr TagMask kAct = 1;

class CharacterActionsTest : public testing::Test {
 protected:
  void SetUp() override {
    starts_ = test::synthetic_walk_starts();
    test::WalkAnnotations notes;
    notes.tag_names = "act\n";
    notes.tags = [this](int frame, int clip) {
      const int at = frame - starts_[size_t(clip)];
      return (clip == 1 && at >= 100 && at <= 250) || (clip == 4 && at >= 50 && at <= 120) ? kAct : TagMask(0);
    };
    test::load_annotated_walks(notes, buffer_, db_, search_);
  }
  DatabaseCharacter walking_character() {
    DatabaseCharacter c;
    std::string error;
    EXPECT_TRUE(c.init(db_, search_, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
    for (int u = 0; u < 120; ++u) c.update(forward(), 1.0f / 60.0f);
    return c;
  }
  static GamepadInput forward() {
    GamepadInput in;
    in.left_y = 1.0f;
    return in;
  }
  // Updates until the action ends (at most `limit` updates) and returns the frames played, checking
  // that no search ran meanwhile and that the end event fires once, in the last update.
  std::vector<int> play_through(DatabaseCharacter& c, const GamepadInput& in, float dt, int limit) {
    std::vector<int> frames;
    const int searches = c.stats().searches;
    CharacterEvent events[32];
    for (int u = 0; u < limit && c.action_playing(); ++u) {
      c.update(in, dt);
      frames.push_back(c.current_frame());
      const int count = c.events(events, 32);
      const int ends = int(std::count_if(events, events + std::min(count, 32),
                                         [](const CharacterEvent& e) { return e.name == kActionEndEvent; }));
      EXPECT_EQ(ends, c.action_playing() ? 0 : 1) << "update " << u;
    }
    EXPECT_FALSE(c.action_playing());
    EXPECT_EQ(c.stats().searches, searches) << "searched during the action";
    return frames;
  }

  std::vector<int> starts_;
  AlignedBuffer buffer_;
  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
};

}  // namespace

TEST_F(CharacterActionsTest, PlaysATaggedRunFromItsFirstToItsLastFrameThenMatchesAgain) {
  for (float dt : {1.0f / 60.0f, 0.1f}) {
    DatabaseCharacter c = walking_character();
    const int transitions = c.stats().transitions;
    ASSERT_TRUE(c.play_action(kAct));
    EXPECT_EQ(c.stats().transitions, transitions + 1);
    const int first = c.current_frame();
    EXPECT_TRUE(c.current_tags() & kAct);
    EXPECT_FALSE(first > 0 && db_->annotations().tags(first - 1) & kAct) << "not the first frame of its run";
    const std::vector<int> frames = play_through(c, forward(), dt, 1000);
    for (size_t i = 1; i < frames.size(); ++i) EXPECT_GE(frames[i], frames[i - 1]) << "in order";
    const int last = frames.back();
    EXPECT_TRUE(last == starts_[1] + 250 || last == starts_[4] + 120 || !(db_->annotations().tags(last) & kAct))
        << "ended at " << last;
    EXPECT_GE(last, first + (first >= starts_[4] ? 70 : 150) - 1);
    // The next update searches and leaves the action's frames.
    c.update(forward(), dt);
    EXPECT_FALSE(c.current_tags() & kAct);
  }
}

TEST_F(CharacterActionsTest, InPlaceActionsKeepTheRootAndAnimatedOnesMoveIt) {
  for (ActionRoot root : {ActionRoot::InPlace, ActionRoot::Animated}) {
    DatabaseCharacter c = walking_character();
    const Vec3 start = c.root_position();
    ASSERT_TRUE(c.play_action(starts_[2] + 10, starts_[2] + 200, ActionSettings{root, false}));
    play_through(c, GamepadInput{}, 1.0f / 60.0f, 1000);
    const float moved = length(on_ground(c.root_position() - start));
    if (root == ActionRoot::InPlace) {
      EXPECT_LT(moved, 1e-4f);
    } else {
      EXPECT_GT(moved, 1.0f);  // 190 frames of a walk
    }
  }
}

TEST_F(CharacterActionsTest, CancelAndStickInterruptEndTheActionWithItsEvent) {
  DatabaseCharacter c = walking_character();
  ASSERT_TRUE(c.play_action(kAct));
  for (int u = 0; u < 10; ++u) c.update(GamepadInput{}, 1.0f / 60.0f);
  c.cancel_action();
  EXPECT_FALSE(c.action_playing());
  const int searches = c.stats().searches;
  c.update(forward(), 1.0f / 60.0f);
  CharacterEvent events[32];
  const int count = c.events(events, 32);
  ASSERT_GE(count, 1);
  EXPECT_EQ(events[count - 1].name, kActionEndEvent);
  EXPECT_EQ(c.stats().searches, searches + 1);
  // An interruptible action ends as soon as the stick asks for motion; a plain one does not.
  for (bool interruptible : {true, false}) {
    ASSERT_TRUE(c.play_action(kAct, ActionSettings{ActionRoot::Animated, interruptible}));
    c.update(GamepadInput{}, 1.0f / 60.0f);
    c.update(forward(), 1.0f / 60.0f);
    EXPECT_EQ(c.action_playing(), !interruptible);
    c.cancel_action();
  }
}

TEST_F(CharacterActionsTest, RefusesFramesOutsideOneClipAndUnknownTags) {
  DatabaseCharacter c = walking_character();
  const int frame = c.current_frame();
  EXPECT_FALSE(c.play_action(starts_[1] - 5, starts_[1] + 5));
  EXPECT_FALSE(c.play_action(-1, 3));
  EXPECT_FALSE(c.play_action(5, 4));
  EXPECT_FALSE(c.play_action(0, db_->frame_count()));
  EXPECT_FALSE(c.play_action(TagMask(2)));  // no frame has tag 1
  EXPECT_FALSE(c.play_action(TagMask(0)));
  EXPECT_FALSE(c.action_playing());
  EXPECT_EQ(c.current_frame(), frame);
  // The overloads with an error say why.
  std::string error;
  EXPECT_FALSE(c.play_action(-1, 3, ActionSettings{}, error));
  EXPECT_NE(error.find("frames -1..3 are not a run of one clip (the database has"), std::string::npos) << error;
  EXPECT_FALSE(c.play_action(TagMask(2), ActionSettings{}, error));
  EXPECT_NE(error.find("no frame holds every tag of '#1'"), std::string::npos) << error;
  EXPECT_FALSE(c.play_action(TagMask(0), ActionSettings{}, error));
  EXPECT_EQ(error, "no tag given");
  EXPECT_FALSE(c.set_state("armed", error));
  EXPECT_EQ(error, "no state named 'armed' (set_states defines none)");
  ASSERT_TRUE(c.set_states({StateConfig{"acting", {"act"}, {}, {}, 0.0f, true}, StateConfig{"free", {}, {}, {}, 0.0f, true}}, error))
      << error;
  EXPECT_FALSE(c.set_state("armed", error));
  EXPECT_EQ(error, "no state named 'armed' (the states: acting, free)");
}

namespace {

// The kActionEndEvents of `c`'s last update.
int end_events(const DatabaseCharacter& c) {
  CharacterEvent events[32];
  const int count = c.events(events, 32);
  return int(std::count_if(events, events + std::min(count, 32), [](const CharacterEvent& e) { return e.name == kActionEndEvent; }));
}

}  // namespace

TEST_F(CharacterActionsTest, EveryEndedActionHasItsOwnEndEvent) {
  DatabaseCharacter c = walking_character();
  ASSERT_TRUE(c.play_action(kAct));
  for (int u = 0; u < 10; ++u) c.update(forward(), 1.0f / 60.0f);
  ASSERT_TRUE(c.action_playing());
  ASSERT_TRUE(c.play_action(starts_[4] + 50, starts_[4] + 60));  // replaces the playing action
  c.update(forward(), 1.0f / 60.0f);
  EXPECT_EQ(end_events(c), 1) << "the replaced action's end";
  int ends = 0;
  for (int u = 0; u < 100 && c.action_playing(); ++u) {
    c.update(forward(), 1.0f / 60.0f);
    ends += end_events(c);
  }
  EXPECT_FALSE(c.action_playing());
  EXPECT_EQ(ends, 1) << "the second action's end";
  // Three actions started and two replaced or cancelled between two updates: three ends at once.
  ASSERT_TRUE(c.play_action(kAct));
  ASSERT_TRUE(c.play_action(kAct));
  ASSERT_TRUE(c.play_action(kAct));
  c.cancel_action();
  c.update(forward(), 1.0f / 60.0f);
  EXPECT_EQ(end_events(c), 3);
}

TEST_F(CharacterActionsTest, KeptOutActionsAreEnteredOnlyByPlayActionOrARequiringConstraint) {
  test::WalkAnnotations notes;
  notes.tag_names = "act\nlong\n";
  notes.kept_out_names = "act\n";
  notes.tags = [this](int frame, int clip) {  // act as in SetUp; long on clips 1 to 3
    const int at = frame - starts_[size_t(clip)];
    const TagMask act = (clip == 1 && at >= 100 && at <= 250) || (clip == 4 && at >= 50 && at <= 120) ? kAct : 0;
    return act | (clip >= 1 && clip <= 3 ? TagMask(2) : 0);
  };
  AlignedBuffer buffer;
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  test::load_annotated_walks(notes, buffer, db, search);
  ASSERT_EQ(db->annotations().kept_out_tags(), kAct);
  const auto wander = [](DatabaseCharacter& c, int updates) {
    int on_action = 0;
    for (int u = 0; u < updates; ++u) {
      GamepadInput in;
      in.left_x = std::sin(0.013f * float(u));
      in.left_y = std::cos(0.007f * float(u));
      c.update(in, 1.0f / 60.0f);
      on_action += (c.current_tags() & kAct) != 0;
    }
    return on_action;
  };
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db, search, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
  EXPECT_EQ(wander(c, 3000), 0) << "the free search entered an action's frames";
  c.set_constraint(TagConstraint{0, 0, TagMask(2)});  // excluding requires nothing: actions stay out
  EXPECT_EQ(wander(c, 1000), 0);
  c.set_constraint(TagConstraint{kAct, 0, 0});  // requiring the action's tag lets its frames in
  EXPECT_GT(wander(c, 300), 250);
  c.set_constraint(TagConstraint{});
  ASSERT_TRUE(c.play_action(kAct));
  EXPECT_TRUE(c.current_tags() & kAct);
}

TEST_F(CharacterActionsTest, SecondsLeftCountDownToTheLastFrame) {
  DatabaseCharacter c = walking_character();
  EXPECT_EQ(c.action_seconds_left(), 0.0f);
  ASSERT_TRUE(c.play_action(starts_[2] + 10, starts_[2] + 130));
  EXPECT_FLOAT_EQ(c.action_seconds_left(), 120.0f / db_->fps());
  for (int u = 0; u < 30; ++u) c.update(forward(), 1.0f / 60.0f);
  EXPECT_NEAR(c.action_seconds_left(), (120.0f - 30.0f * db_->fps() / 60.0f) / db_->fps(), 1.5f / db_->fps());
  play_through(c, forward(), 1.0f / 60.0f, 1000);
  EXPECT_EQ(c.action_seconds_left(), 0.0f);
}

TEST_F(CharacterActionsTest, ActionsAllocateNothing) {
  DatabaseCharacter c = walking_character();
  test::start_counting_allocations();
  ASSERT_TRUE(c.play_action(kAct));
  for (int u = 0; u < 400; ++u) c.update(forward(), 1.0f / 60.0f);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}
