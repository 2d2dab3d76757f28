// Gameplay control through the C API (issue 42, item 7): tag constraints, tags, events, one-shot
// actions, idle and game states of database characters and of a database crowd's characters,
// on the annotated synthetic walks (gameplay_script.hpp) loaded with lmm_database_load, each
// checked against a twin lmm::DatabaseCharacter fed the same input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "c_api/gameplay_script.hpp"
#include "support/allocation_counter.hpp"
#include "support/temp_files.hpp"

using namespace lmm;
using namespace lmm::test::gameplay;

namespace {

// The root position of `c` (NaN with a test failure when the call fails).
Vec3 root_of(const lmm_character* c) {
  float root[3] = {NAN, NAN, NAN};
  EXPECT_EQ(lmm_character_root_position(c, root), 1) << lmm_last_error();
  return Vec3{root[0], root[1], root[2]};
}

// Whether a and b are the same point, bit for bit.
bool same(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

class GameplayCApiTest : public testing::Test {
 protected:
  void SetUp() override {
    load_database(buffer_, db_, search_);
    ASSERT_NE(db_, nullptr);
    const std::string path = test::temp_folder("gameplay") + "/annotated.mmdb";
    ASSERT_TRUE(write_file(path, buffer_));
    cdb_ = lmm_database_load(path.c_str());
    ASSERT_NE(cdb_, nullptr) << lmm_last_error();
    character_ = lmm_character_create_database(cdb_, 0.0f, 0.0f, 0.0f);
    ASSERT_NE(character_, nullptr) << lmm_last_error();
    std::string error;
    ASSERT_TRUE(twin_.init(db_, search_, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
  }
  void TearDown() override {
    lmm_character_release(character_);
    lmm_database_release(cdb_);
  }
  // Updates the C character and its C++ twin with `g`, expecting the same root.
  void update_both(const lmm_gamepad& g) {
    ASSERT_EQ(lmm_character_update(character_, &g, kDt), 1) << lmm_last_error();
    twin_.update(to_cpp(g), kDt);
    ASSERT_TRUE(same(root_of(character_), twin_.root_position()));
  }
  // The C character's tags (0 with a test failure when the call fails).
  uint64_t tags() const {
    uint64_t t = 0;
    EXPECT_EQ(lmm_character_tags(character_, &t), 1) << lmm_last_error();
    return t;
  }
  // The C character's events of the last update, checked equal to the twin's; how many there were.
  std::vector<lmm_event> events_matching_twin() const {
    lmm_event events[64];
    CharacterEvent expected[64];
    const int count = lmm_character_events(character_, events, 64);
    EXPECT_EQ(count, twin_.events(expected, 64));
    EXPECT_EQ(lmm_character_events(character_, nullptr, 0), count);
    for (int i = 0; i < std::min(count, 64); ++i) {
      EXPECT_EQ(events[i].name, expected[i].name);
      EXPECT_EQ(events[i].frame, expected[i].frame);
      EXPECT_EQ(events[i].time, expected[i].time);
    }
    return std::vector<lmm_event>(events, events + std::clamp(count, 0, 64));
  }

  AlignedBuffer buffer_;
  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
  lmm_database* cdb_ = nullptr;
  lmm_character* character_ = nullptr;
  DatabaseCharacter twin_;
};

// A stick that wanders at update `u`.
lmm_gamepad wander(int u) {
  lmm_gamepad g{};
  g.left_x = std::sin(0.013f * float(u));
  g.left_y = std::cos(0.007f * float(u));
  return g;
}

}  // namespace

TEST_F(GameplayCApiTest, TheDatabaseNamesItsTagsAndEventsAndResolvesMasks) {
  ASSERT_EQ(lmm_database_tag_count(cdb_), 5);
  const char* names[] = {"even", "odd", "early", "act", "standing"};
  for (int t = 0; t < 5; ++t) EXPECT_STREQ(lmm_database_tag_name(cdb_, t), names[t]);
  EXPECT_EQ(lmm_database_tag_name(cdb_, 5), nullptr);
  EXPECT_NE(std::string(lmm_last_error()).find("tag 5 is outside 0..4"), std::string::npos) << lmm_last_error();
  ASSERT_EQ(lmm_database_event_name_count(cdb_), 2);
  EXPECT_STREQ(lmm_database_event_name(cdb_, kStep), "step");
  EXPECT_STREQ(lmm_database_event_name(cdb_, kMark), "mark");
  EXPECT_EQ(lmm_database_event_name(cdb_, -1), nullptr);
  uint64_t mask = 99;
  ASSERT_EQ(lmm_database_tag_mask(cdb_, " odd, early ", &mask), 1) << lmm_last_error();
  EXPECT_EQ(mask, kOdd | kEarly);
  ASSERT_EQ(lmm_database_tag_mask(cdb_, nullptr, &mask), 1);
  EXPECT_EQ(mask, 0u);
  mask = 7;
  EXPECT_EQ(lmm_database_tag_mask(cdb_, "odd,armed", &mask), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("unknown tag 'armed'"), std::string::npos) << lmm_last_error();
  EXPECT_EQ(mask, 7u) << "a failure leaves the mask as it was";
}

TEST_F(GameplayCApiTest, ConstraintsAreHonouredAndEventsMatchTheCppCharacter) {
  // Names, then masks, as the C++ twin's constraints; every update within them (the first one
  // after a change searches) with the twin's root, tags and events.
  int reported = 0;
  const TagConstraint constraints[] = {{kOdd, 0, 0}, {0, kEven | kAct, kEarly}, {kEarly | kEven, 0, 0}};
  for (int k = 0; k < 3; ++k) {
    const TagConstraint& constraint = constraints[k];
    if (k == 0) {
      ASSERT_EQ(lmm_character_set_constraint(character_, "odd", nullptr, ""), 1) << lmm_last_error();
    } else {
      ASSERT_EQ(lmm_character_set_constraint_masks(character_, constraint.require_all, constraint.require_any,
                                                   constraint.exclude),
                1);
    }
    twin_.set_constraint(constraint);
    uint64_t all = 0, any = 0, exclude = 0;
    ASSERT_EQ(lmm_character_constraint(character_, &all, &any, &exclude), 1);
    EXPECT_EQ(all, constraint.require_all);
    EXPECT_EQ(any, constraint.require_any);
    EXPECT_EQ(exclude, constraint.exclude);
    for (int u = 0; u < 600; ++u) {
      update_both(wander(600 * k + u));
      ASSERT_TRUE(constraint.allows(tags())) << "constraint " << k << " update " << u << " tags " << tags();
      EXPECT_EQ(tags(), twin_.current_tags());
      EXPECT_EQ(lmm_character_constraint_held(character_), 1);
      reported += int(events_matching_twin().size());
    }
  }
  EXPECT_GT(reported, 300) << "markers on every 7th and 11th frame: about 420 in 1800 frames";
  lmm_counters counters{};
  ASSERT_EQ(lmm_character_counters(character_, &counters), 1);
  EXPECT_EQ(counters.constraint_searches, twin_.stats().constraint_searches);
  EXPECT_GE(counters.constraint_searches, 3);
  EXPECT_EQ(counters.unsatisfied_searches, 0);
  // A constraint no frame holds: the character keeps playing and says so.
  ASSERT_EQ(lmm_character_set_constraint(character_, "even,odd", "", ""), 1);
  for (int u = 0; u < 60; ++u) {
    const lmm_gamepad g = wander(u);
    ASSERT_EQ(lmm_character_update(character_, &g, kDt), 1);
  }
  ASSERT_EQ(lmm_character_counters(character_, &counters), 1);
  EXPECT_GT(counters.unsatisfied_searches, 0);
  EXPECT_EQ(lmm_character_constraint_held(character_), 0);
}

TEST_F(GameplayCApiTest, ActionsPlayThroughAndEndWithTheEndEvent) {
  lmm_gamepad forward{};
  forward.left_y = 1.0f;
  for (int u = 0; u < 120; ++u) update_both(forward);
  EXPECT_EQ(lmm_character_action_playing(character_), 0);
  ASSERT_EQ(lmm_character_play_action(character_, "act", 0, 0), 1) << lmm_last_error();
  ASSERT_TRUE(twin_.play_action(kAct, ActionSettings{}));
  EXPECT_EQ(lmm_character_action_playing(character_), 1);
  int updates = 0, ends = 0;
  while (lmm_character_action_playing(character_) == 1 && updates < 400) {
    update_both(forward);
    ++updates;
    EXPECT_TRUE(tags() & kAct) << "update " << updates;
    for (const lmm_event& e : events_matching_twin()) ends += e.name == LMM_ACTION_END_EVENT;
  }
  EXPECT_EQ(ends, 1);
  EXPECT_GE(updates, 150) << "the run is 151 frames";
  const std::vector<lmm_event> last = events_matching_twin();
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(last.back().name, LMM_ACTION_END_EVENT);
  EXPECT_EQ(lmm_character_action_playing(character_), 0);
  // Frames of one clip, in place, cancelled: the end event comes with the next update.
  const Vec3 start = root_of(character_);
  ASSERT_EQ(lmm_character_play_action_frames(character_, 10, 400, 1, 0), 1) << lmm_last_error();
  ASSERT_TRUE(twin_.play_action(10, 400, ActionSettings{ActionRoot::InPlace, false}));
  for (int u = 0; u < 30; ++u) update_both(forward);
  EXPECT_LT(length(on_ground(root_of(character_) - start)), 0.05f) << "in place";
  ASSERT_EQ(lmm_character_cancel_action(character_), 1);
  twin_.cancel_action();
  update_both(forward);
  const std::vector<lmm_event> cancelled = events_matching_twin();
  ASSERT_FALSE(cancelled.empty());
  EXPECT_EQ(cancelled.back().name, LMM_ACTION_END_EVENT);
  EXPECT_EQ(lmm_character_action_playing(character_), 0);
}

TEST_F(GameplayCApiTest, AReleasedStickIdlesOnStandingFrames) {
  lmm_gamepad forward{};
  forward.left_y = 1.0f;
  for (int u = 0; u < 60; ++u) update_both(forward);
  EXPECT_EQ(lmm_character_idle(character_), 0);
  for (int u = 0; u < 60; ++u) update_both(lmm_gamepad{});
  EXPECT_EQ(lmm_character_idle(character_), 1);
  EXPECT_TRUE(twin_.idle());
  EXPECT_TRUE(tags() & kStanding);
  update_both(forward);
  EXPECT_EQ(lmm_character_idle(character_), 0);
}

TEST_F(GameplayCApiTest, FourStatesSwitchHonourTheirConstraintsAndGiveTheCppRootPath) {
  std::string error;
  const std::vector<Vec3> expected = cpp_root_path(db_, search_, error);
  ASSERT_EQ(int(expected.size()), kUpdates) << error;
  EXPECT_STREQ(lmm_character_state(character_), "");
  ASSERT_EQ(lmm_character_set_states(character_, kStatesConfig), 1) << lmm_last_error();
  for (int u = 0; u < kUpdates; ++u) {
    const int state = state_at(u);
    if (const char* name = state_set_before(u)) {
      ASSERT_EQ(lmm_character_set_state(character_, name), 1) << lmm_last_error();
    }
    const lmm_gamepad g = input_at(u);
    ASSERT_EQ(lmm_character_update(character_, &g, kDt), 1);
    ASSERT_TRUE(same(root_of(character_), expected[size_t(u)])) << "update " << u;
    EXPECT_STREQ(lmm_character_state(character_), kStates[state]);
    EXPECT_TRUE(kStateConstraints[state].allows(tags())) << "update " << u << " state " << kStates[state];
  }
  // The path went somewhere: four states of walking, not standing on the spot.
  EXPECT_GT(length(on_ground(expected.back() - expected.front())) + length(on_ground(expected[600] - expected[0])),
            2.0f);
}

TEST_F(GameplayCApiTest, ACrowdsCharactersTakeTheirOwnConstraints) {
  lmm_crowd* crowd = lmm_crowd_create_database(cdb_, 3);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  const TagConstraint constraints[3] = {{kEven, 0, 0}, {kOdd, 0, 0}, {0, 0, kEarly}};
  ASSERT_EQ(lmm_character_set_constraint(lmm_crowd_character(crowd, 0), "even", "", ""), 1) << lmm_last_error();
  ASSERT_EQ(lmm_character_set_constraint(lmm_crowd_character(crowd, 1), "odd", "", ""), 1);
  ASSERT_EQ(lmm_character_set_constraint_masks(lmm_crowd_character(crowd, 2), 0, 0, kEarly), 1);
  int events = 0;
  for (int u = 0; u < 600; ++u) {
    for (size_t i = 0; i < 3; ++i) {
      const lmm_gamepad g = wander(u + 200 * int(i));
      ASSERT_EQ(lmm_crowd_set_input(crowd, i, &g), 1);
    }
    ASSERT_EQ(lmm_crowd_update(crowd, 0, 3, kDt, 0, 0.0), 1) << lmm_last_error();
    for (size_t i = 0; i < 3; ++i) {
      const lmm_character* member = lmm_crowd_character(crowd, i);
      uint64_t t = 0;
      ASSERT_EQ(lmm_character_tags(member, &t), 1);
      ASSERT_TRUE(constraints[i].allows(t)) << "character " << i << " update " << u;
      EXPECT_EQ(lmm_character_constraint_held(member), 1);
      events += lmm_character_events(member, nullptr, 0);
    }
  }
  EXPECT_GT(events, 300);
  ASSERT_EQ(lmm_character_set_states(lmm_crowd_character(crowd, 1), kStatesConfig), 1) << lmm_last_error();
  ASSERT_EQ(lmm_character_set_state(lmm_crowd_character(crowd, 1), "early_odd"), 1);
  EXPECT_STREQ(lmm_character_state(lmm_crowd_character(crowd, 1)), "early_odd");
  EXPECT_STREQ(lmm_character_state(lmm_crowd_character(crowd, 0)), "");
  lmm_crowd_release(crowd);
}

TEST_F(GameplayCApiTest, ACrowdMemberRestartingItsActionGetsAnEndEventForEach) {
  lmm_crowd* crowd = lmm_crowd_create_database(cdb_, 2);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  lmm_character* member = lmm_crowd_character(crowd, 1);
  lmm_gamepad forward{};
  forward.left_y = 1.0f;
  ASSERT_EQ(lmm_crowd_set_input(crowd, 1, &forward), 1);
  int starts = 0, ends = 0;
  for (int u = 0; u < 600; ++u) {
    if (u % 50 == 0) {  // restarted before the 151-frame run ends: each start ends the one before
      ASSERT_EQ(lmm_character_play_action(member, "act", 0, 0), 1) << lmm_last_error();
      ++starts;
    }
    ASSERT_EQ(lmm_crowd_update(crowd, 0, 2, kDt, 0, 0.0), 1) << lmm_last_error();
    lmm_event events[64];
    const int count = lmm_character_events(member, events, 64);
    for (int e = 0; e < std::min(count, 64); ++e) ends += events[e].name == LMM_ACTION_END_EVENT;
  }
  ASSERT_EQ(lmm_character_cancel_action(member), 1);
  ASSERT_EQ(lmm_crowd_update(crowd, 0, 2, kDt, 0, 0.0), 1) << lmm_last_error();
  lmm_event last[64];
  const int count = lmm_character_events(member, last, 64);
  for (int e = 0; e < std::min(count, 64); ++e) ends += last[e].name == LMM_ACTION_END_EVENT;
  EXPECT_EQ(ends, starts);
  lmm_crowd_release(crowd);
}

TEST_F(GameplayCApiTest, PerFrameCallsAllocateNothing) {
  ASSERT_EQ(lmm_character_set_states(character_, kStatesConfig), 1) << lmm_last_error();
  lmm_event events[16];
  uint64_t t = 0, all = 0;
  test::start_counting_allocations();
  for (int u = 0; u < 240; ++u) {
    lmm_character_set_state(character_, kStates[(u / 60) % 4]);
    if (u % 60 == 30) lmm_character_set_constraint_masks(character_, kOdd, 0, 0);
    const lmm_gamepad g = input_at(u);
    lmm_character_update(character_, &g, kDt);
    lmm_character_events(character_, events, 16);
    lmm_character_tags(character_, &t);
    lmm_character_constraint(character_, &all, nullptr, nullptr);
    lmm_character_constraint_held(character_);
    lmm_character_idle(character_);
    lmm_character_action_playing(character_);
    lmm_character_state(character_);
  }
  lmm_character_play_action_frames(character_, 10, 100, 0, 1);
  lmm_character_cancel_action(character_);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}

TEST_F(GameplayCApiTest, APathCharacterTakesConstraintsButNotTheRest) {
  const float samples[] = {0.0f, 0.0f, 0.0f, 6.0f, 0.0f, 8.0f};  // (t, x, z): 8 m in 6 s
  lmm_character* path = lmm_character_create_path(cdb_, samples, 2, LMM_PATH_LOCAL, 1.0f, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(path, nullptr) << lmm_last_error();
  // Constraints: odd clips, then even ones, each held from the update after it was set.
  for (const char* tag : {"odd", "even"}) {
    ASSERT_EQ(lmm_character_set_constraint(path, tag, nullptr, nullptr), 1) << lmm_last_error();
    uint64_t require = 0, t = 0;
    ASSERT_EQ(lmm_character_constraint(path, &require, nullptr, nullptr), 1) << lmm_last_error();
    const uint64_t mask = std::string(tag) == "odd" ? kOdd : kEven;
    EXPECT_EQ(require, mask);
    for (int u = 0; u < 60; ++u) {
      ASSERT_EQ(lmm_character_update(path, nullptr, kDt), 1) << lmm_last_error();
      ASSERT_EQ(lmm_character_tags(path, &t), 1) << lmm_last_error();
      EXPECT_EQ(t & (kEven | kOdd), mask) << tag << ", update " << u;
      EXPECT_EQ(lmm_character_constraint_held(path), 1);
    }
  }
  EXPECT_EQ(lmm_character_set_constraint(path, "armed", nullptr, nullptr), 0);
  // Events, actions, idle and states stay the database character's.
  EXPECT_EQ(lmm_character_set_state(path, "even"), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("lmm_character_set_state is for database and learned characters; this "
                                               "is a path character"),
            std::string::npos)
      << lmm_last_error();
  EXPECT_EQ(lmm_character_events(path, nullptr, 0), -1);
  EXPECT_EQ(lmm_character_update(path, nullptr, kDt), 1) << "the path character is untouched: " << lmm_last_error();
  lmm_character_release(path);
}
