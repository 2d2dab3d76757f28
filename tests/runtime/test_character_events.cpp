// Events of a DatabaseCharacter (issue 42): the synthetic walks with a "step" marker on every 7th
// frame and a "mark" on every 11th, played at several time steps, with and without transitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "support/allocation_counter.hpp"
#include "support/annotated_walks.hpp"

using namespace lmm;

namespace {

constexpr int kStep = 0, kMark = 1;

class CharacterEventsTest : public testing::Test {
 protected:
  void SetUp() override {
    test::WalkAnnotations notes;
    notes.tag_names = "any\n";
    notes.tags = [](int, int) { return TagMask(1); };
    notes.event_names = "step\nmark\n";
    for (int f = 0; f < test::kSyntheticWalkFrames; ++f) {
      for (int name : {kStep, kMark}) {
        if (f % (name == kStep ? 7 : 11) != 0) continue;
        notes.event_frames.push_back(f);
        notes.event_name_index.push_back(name);
      }
    }
    test::load_annotated_walks(notes, buffer_, db_, search_);
  }
  // The database's events with frames in [first, last], in order.
  std::vector<DatabaseEvent> events_between(int first, int last) const {
    std::vector<DatabaseEvent> out;
    for (const DatabaseEvent& e : db_->annotations().events()) {
      if (e.frame >= first && e.frame <= last) out.push_back(e);
    }
    return out;
  }
  // The clip holding `frame`.
  const DatabaseRange& clip_of(int frame) const {
    return *std::find_if(db_->ranges().begin(), db_->ranges().end(),
                         [&](const DatabaseRange& r) { return frame >= r.start && frame < r.stop; });
  }
  // Plays `updates` updates of `dt` (a wandering stick when `wander`) and checks every update's
  // events: without a transition exactly the markers of the frames after the last update's up
  // to the new one, in order; after one (or the first update) markers of the new clip only, in
  // order, ending at the frame played, all from one start time. Returns the events reported.
  int play_and_check(DatabaseCharacter& c, int updates, float dt, bool wander) {
    int reported = 0;
    CharacterEvent events[64];
    for (int u = 0; u < updates; ++u) {
      const int before = c.current_frame(), transitions = c.stats().transitions;
      GamepadInput in;
      in.left_y = 1.0f;
      if (wander) in.left_x = std::sin(0.05f * float(u));
      c.update(in, dt);
      const int after = c.current_frame(), count = c.events(events, 64);
      EXPECT_LE(count, 64);
      reported += count;
      if (u > 0 && c.stats().transitions == transitions) {
        const std::vector<DatabaseEvent> expected = events_between(before + 1, after);
        EXPECT_EQ(count, int(expected.size())) << "update " << u << " frames " << before << " -> " << after;
        for (int i = 0; i < std::min(count, int(expected.size())); ++i) {
          EXPECT_EQ(events[i].frame, expected[size_t(i)].frame) << "update " << u;
          EXPECT_EQ(events[i].name, expected[size_t(i)].name) << "update " << u;
          EXPECT_GT(events[i].time, 0.0f);
          EXPECT_LE(events[i].time, dt * 1.0001f);
        }
        continue;
      }
      const DatabaseRange& clip = clip_of(after);
      for (int i = 0; i < count; ++i) {
        EXPECT_GE(events[i].frame, clip.start) << "update " << u;
        EXPECT_LE(events[i].frame, after) << "update " << u;
        EXPECT_GE(events[i].time, 0.0f);
        EXPECT_LE(events[i].time, dt * 1.0001f);
        if (i > 0) {
          EXPECT_LE(events[i - 1].frame, events[i].frame);
        }
        const float start = float(events[i].frame) - events[i].time * db_->fps();
        EXPECT_NEAR(start, float(events[0].frame) - events[0].time * db_->fps(), 1e-3f);
      }
    }
    return reported;
  }

  AlignedBuffer buffer_;
  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
};

}  // namespace

TEST_F(CharacterEventsTest, EveryMarkerPlayedFiresOnceInOrderAtAnyTimeStep) {
  // 1/16 s is 3.75 frames exactly: every 4th update ends on a whole frame.
  for (float dt : {1.0f / 144.0f, 1.0f / 60.0f, 1.0f / 30.0f, 0.0625f, 0.1f}) {
    CharacterSettings settings;
    settings.search.transition_cost = 1e6f;  // plays clips through: transitions only at clip ends
    DatabaseCharacter c;
    std::string error;
    ASSERT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
    const int updates = int(20.0f / dt);
    const int reported = play_and_check(c, updates, dt, false);
    // 20 s of frames at 60 Hz carry about 1200 / 7 + 1200 / 11 markers.
    EXPECT_GT(reported, 200) << "dt " << dt;
  }
}

TEST_F(CharacterEventsTest, TransitionsReportTheNewClipsMarkers) {
  for (float dt : {1.0f / 60.0f, 0.1f}) {
    DatabaseCharacter c;
    std::string error;
    ASSERT_TRUE(c.init(db_, search_, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
    play_and_check(c, int(30.0f / dt), dt, true);
    EXPECT_GT(c.stats().transitions, 5) << "dt " << dt;
  }
}

TEST_F(CharacterEventsTest, NothingIsReportedBeforeTheFirstUpdateAndNothingAllocates) {
  CharacterSettings settings;
  settings.search.transition_cost = 1e6f;  // keeps playing clip 0 from frame 0
  DatabaseCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, settings, Vec3{}, 0.0f, error)) << error;
  CharacterEvent events[8];
  EXPECT_EQ(c.events(events, 8), 0);
  c.update(GamepadInput{}, 1.0f / 60.0f);
  // Frame 0 holds a step and a mark: with room for one, the count says two.
  events[1].frame = -1;
  EXPECT_EQ(c.events(events, 1), 2);
  EXPECT_EQ(events[0].frame, 0);
  EXPECT_EQ(events[0].name, kStep);
  EXPECT_EQ(events[1].frame, -1);
  test::start_counting_allocations();
  for (int u = 0; u < 300; ++u) {
    c.update(GamepadInput{}, 1.0f / 60.0f);
    c.events(events, 8);
  }
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}
