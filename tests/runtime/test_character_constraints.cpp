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
  // First frame of clip `clip` of the synthetic walks (read from the plain database).
  int db_start(int clip) {
    if (starts_.empty()) {
      std::shared_ptr<const Database> plain;
      FeatureSearch unused;
      test::load_synthetic_walks(plain, unused);
      for (const DatabaseRange& r : plain->ranges()) starts_.push_back(r.start);
    }
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
