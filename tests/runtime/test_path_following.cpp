// Path following (Lee, Kwon & Lee 2023) in the runtime: path checks and shaping, and a
// PathFollower on the synthetic walks: standing at the end, no allocation per update, DirectionNet
// facing. (Runs through lmm-path's engine are in tests/pipeline/test_path_run.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lmm/character/path_following.hpp"
#include "lmm/direction_builder.hpp"
#include "support/allocation_counter.hpp"
#include "support/annotated_walks.hpp"
#include "support/path_samples.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;
using test::paused_walk;
using test::straight;

namespace {

// The synthetic walks database (two circles and a straight line) and its search.
class PathFollowerTest : public test::SyntheticWalksTest {};

// The error place_path gives for `samples` (a test failure when it accepts them).
std::string place_error(std::vector<PathSample> samples) {
  std::string error;
  EXPECT_FALSE(place_path(samples, PathMode::Local, Vec3{}, error));
  return error;
}

// Updates `follower` at 60 Hz until it completes its path (at most `seconds`); whether it did.
bool update_until_completed(PathFollower& follower, float seconds) {
  for (int f = 0; f < int(seconds * 60.0f) && !follower.completed(); ++f) follower.update(1.0f / 60.0f);
  return follower.completed();
}

}  // namespace

TEST(PathShaping, BadSamplesAreRejectedWithTheSampleNamed) {
  EXPECT_NE(place_error({}).find("0 sample(s)"), std::string::npos);
  EXPECT_NE(place_error({{0, 0, 0}}).find("1 sample(s)"), std::string::npos);
  EXPECT_NE(place_error({{0, 0, 0}, {0, 1, 0}}).find("path sample 2: time"), std::string::npos);
  EXPECT_NE(place_error({{0, 0, 0}, {1, 1, 0}, {0.5f, 2, 0}}).find("path sample 3"), std::string::npos);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(place_error({{0, 0, 0}, {1, nan, 0}}).find("path sample 2: time or coordinate"), std::string::npos);
  Path path;
  std::string error;
  PathShaping shaping;
  shaping.speed_scale = 0.0f;
  EXPECT_FALSE(make_path(straight(1, 1), shaping, 60.0f, path, error));
  EXPECT_NE(error.find("speed scale"), std::string::npos) << error;
  shaping.speed_scale = 1e-6f;
  EXPECT_FALSE(make_path(straight(1, 100), shaping, 60.0f, path, error));
  EXPECT_NE(error.find("path points"), std::string::npos) << error;
}

// Issue 40 item 2: a path whose samples are all at one point was accepted, never completed and
// lmm-path printed "facing nan deg"; it is refused naming why. Repeated points among moving ones
// are a pause and are accepted.
TEST(PathShaping, APathThatDoesNotMoveIsRefusedAndAPauseAccepted) {
  EXPECT_NE(place_error({{0, 1, 1}, {1, 1, 1}, {2, 1, 1}}).find("the path does not move: all 3 samples are at (1.0"),
            std::string::npos);
  EXPECT_NE(place_error({{0, 0, 0}, {1, 0, 0.0001f}}).find("does not move"), std::string::npos);
  Path path;
  std::string error;
  EXPECT_FALSE(make_path({{0, 2, 0}, {5, 2, 0}}, PathShaping{}, 60.0f, path, error));
  EXPECT_NE(error.find("does not move"), std::string::npos) << error;
  // It moves only after its last resampled point (1 s at 60 fps): no point moves.
  EXPECT_FALSE(make_path({{0, 0, 0}, {1, 0, 0}, {1.001f, 0, 1}}, PathShaping{}, 60.0f, path, error));
  EXPECT_NE(error.find("does not move once resampled at 60"), std::string::npos) << error;
  std::vector<PathSample> pause = paused_walk(1.0f, 1.0f, 2.0f);
  ASSERT_TRUE(place_path(pause, PathMode::Local, Vec3{}, error)) << error;
  ASSERT_TRUE(make_path(pause, PathShaping{}, 60.0f, path, error)) << error;
  // The smoothed pause holds still (slower than kPausedPathSpeed) for most of its 2 s.
  EXPECT_FALSE(path.paused(30));
  EXPECT_TRUE(path.paused(120));
  const int first = path.until_pause(0, path.last());
  const int end = path.wait_out(first, path.last());
  EXPECT_NEAR(float(end - first) / 60.0f, 2.0f, 0.4f) << first << " to " << end;
  EXPECT_EQ(path.wait_out(first, 10), first + 10);
  EXPECT_EQ(path.wait_out(30, 10), 30);  // not paused: no waiting
}

TEST(PathShaping, ResamplingSmoothingAndSpeedScaleKeepTheLine) {
  Path path;
  std::string error;
  ASSERT_TRUE(make_path(straight(1.5f, 4.0f), PathShaping{}, 60.0f, path, error)) << error;
  EXPECT_EQ(path.size(), 4 * 60 + 1);
  // A straight line stays where it was, ends included (extrapolated before smoothing).
  for (int i = 0; i < path.size(); ++i) {
    EXPECT_NEAR(path.points[size_t(i)].x, 0.0f, 1e-5f);
    EXPECT_NEAR(path.points[size_t(i)].z, 1.5f * float(i) / 60.0f, 1e-3f) << i;
  }
  EXPECT_NEAR(length(path.tangent(10.5f) - Vec3{0, 0, 1}), 0.0f, 1e-5f);
  EXPECT_EQ(path.nearest(Vec3{0.3f, 0, 3.0f}, 0, path.last()), 120);
  EXPECT_EQ(path.nearest(Vec3{0.3f, 0, 3.0f}, 0, 100), 100);  // the window of Lee, Kwon & Lee 2023 Eq. 1
  PathShaping slow;
  slow.speed_scale = 0.2f;  // Lee, Kwon & Lee 2023 Sec. V-A: played five times slower than drawn
  ASSERT_TRUE(make_path(straight(1.5f, 4.0f), slow, 60.0f, path, error)) << error;
  EXPECT_EQ(path.size(), 20 * 60 + 1);
}

TEST(PathShaping, LocalTranslatesAndGlobalWalksToTheStart) {
  std::vector<PathSample> local = straight(2.0f, 2.0f);
  std::string error;
  ASSERT_TRUE(place_path(local, PathMode::Local, Vec3{5, 0, 1}, error)) << error;
  EXPECT_FLOAT_EQ(local[0].x, 5.0f);
  EXPECT_FLOAT_EQ(local[0].z, 1.0f);
  std::vector<PathSample> global = straight(2.0f, 2.0f);
  ASSERT_TRUE(place_path(global, PathMode::Global, Vec3{0, 0, -4}, error)) << error;
  ASSERT_EQ(global.size(), straight(2.0f, 2.0f).size() + 1);
  EXPECT_FLOAT_EQ(global[0].z, -4.0f);
  // 4 m at the first second's 2 m/s: the drawn path starts 2 s later.
  EXPECT_NEAR(global[1].t - global[0].t, 2.0f, 1e-3f);
  EXPECT_FLOAT_EQ(global[1].z, 0.0f);
}

// Issue 40 item 2: a completed path character kept moving (7.4 m past the end in 60 s); it now
// stands at the end: on these walks, which have no standing frames, its root stays put.
TEST_F(PathFollowerTest, ACompletedPathCharacterStandsAtTheEnd) {
  const std::vector<PathSample> samples = straight(1.3f, 3.0f);
  Path path;
  std::string error;
  ASSERT_TRUE(make_path(samples, PathShaping{}, db_->fps(), path, error)) << error;
  PathFollower follower;
  ASSERT_TRUE(follower.init(db_, search_, PathFollowerSettings{}, path, error)) << error;
  ASSERT_TRUE(update_until_completed(follower, 20.0f));
  const Vec3 arrived = on_ground(follower.root_position());
  EXPECT_LT(length(arrived - path.points.back()), 0.3f);
  float farthest = 0.0f;
  for (int f = 0; f < 10 * 60; ++f) {
    follower.update(1.0f / 60.0f);
    farthest = std::max(farthest, length(on_ground(follower.root_position()) - arrived));
    ASSERT_TRUE(follower.completed() && follower.standing());
  }
  EXPECT_LT(farthest, 0.5f) << "the root moved after the path was completed";
  EXPECT_GT(follower.stats().matches, 60);  // it still matches (standing, where the data can)
}

TEST_F(PathFollowerTest, UpdateAllocatesNothing) {
  Path path;
  std::string error;
  ASSERT_TRUE(make_path(straight(1.3f, 6.0f), PathShaping{}, db_->fps(), path, error)) << error;
  PathFollower follower;
  PathFollowerSettings settings;
  settings.foot_lock = true;
  ASSERT_TRUE(follower.init(db_, search_, settings, path, error)) << error;
  follower.update(1.0f / 60.0f);
  test::start_counting_allocations();
  for (int f = 0; f < 200; ++f) follower.update(f % 5 == 0 ? 0.04f : 1.0f / 60.0f);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  EXPECT_GT(follower.stats().matches, 10);
}

// Issue 16: with a DirectionNet the query's future facings are its predictions (made once per
// match); a follower initialised again without one faces along the path.
TEST_F(PathFollowerTest, DirectionNetFacesTheQueryOncePerMatchAndReinitWithoutItUsesTheTangent) {
  // Zero weights keep the GRU's state at zero, so the network always predicts its output bias:
  // +X in the present frame, i.e. 90 degrees right of the character's facing.
  DirectionValues v;
  v.hidden = 4, v.window = 8, v.present = 3, v.step_seconds = 1.0f / 30.0f;
  v.input_mean.assign(4, 0.0f), v.input_std.assign(4, 1.0f);
  v.input_weight.assign(4 * 12, 0.0f), v.input_bias.assign(12, 0.0f);
  v.hidden_weight.assign(4 * 12, 0.0f), v.hidden_bias.assign(12, 0.0f);
  v.output_weight.assign(4 * 2, 0.0f), v.output_bias = {1.0f, 0.0f};
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(build_direction_bundle(v, bytes, error)) << error;
  AlignedBuffer buffer(bytes.size());
  std::copy(bytes.begin(), bytes.end(), buffer.data());
  PathFollowerSettings settings;
  settings.query.direction = DirectionNet::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(settings.query.direction, nullptr) << error;
  std::vector<PathSample> samples = straight(1.3f, 3.0f);  // along +Z: the character starts facing +Z
  ASSERT_TRUE(place_path(samples, PathMode::Local, Vec3{}, error)) << error;
  Path path;
  ASSERT_TRUE(make_path(samples, PathShaping{}, db_->fps(), path, error)) << error;
  PathFollower follower;
  ASSERT_TRUE(follower.init(db_, search_, settings, path, error)) << error;
  follower.update(1.0f / 60.0f);  // the first update matches
  auto last_facing = [&] { return rotate(follower.revised_trajectory().back().rotation, Vec3{0.0f, 0.0f, 1.0f}); };
  EXPECT_EQ(follower.stats().direction_calls, 1);
  EXPECT_GT(last_facing().x, 0.99f) << "the prediction, +X, not the tangent";
  for (int f = 0; f < 60; ++f) follower.update(1.0f / 60.0f);
  EXPECT_EQ(follower.stats().direction_calls, follower.stats().matches);
  settings.query.direction = nullptr;
  ASSERT_TRUE(follower.init(db_, search_, settings, path, error)) << error;
  follower.update(1.0f / 60.0f);
  EXPECT_EQ(follower.stats().direction_calls, 0);
  EXPECT_GT(last_facing().z, 0.99f) << "the tangent, +Z";
}

// Issue 43: tag constraints on a path character, on the synthetic walks tagged by clip ("even",
// "odd") and by time ("early": each clip's first 300 frames).
class ConstrainedPathTest : public testing::Test {
 protected:
  static constexpr TagMask kEven = 1, kOdd = 2, kEarly = 4;
  void SetUp() override {
    const std::vector<int> starts = test::synthetic_walk_starts();
    test::WalkAnnotations notes;
    notes.tag_names = "even\nodd\nearly\n";
    notes.tags = [starts](int frame, int clip) {
      return (clip % 2 ? kOdd : kEven) | (frame - starts[size_t(clip)] < 300 ? kEarly : 0);
    };
    test::load_annotated_walks(notes, buffer_, db_, search_);
    std::string error;
    ASSERT_TRUE(make_path(straight(1.3f, 12.0f), PathShaping{}, db_->fps(), path_, error)) << error;
  }
  // Updates `follower` `updates` times at 60 Hz; how many updates played a frame `allowed` rejects.
  static int violations(PathFollower& follower, int updates, const TagConstraint& allowed) {
    int count = 0;
    for (int u = 0; u < updates; ++u) {
      follower.update(1.0f / 60.0f);
      count += !allowed.allows(follower.current_tags());
    }
    return count;
  }

  AlignedBuffer buffer_;
  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
  Path path_;
};

TEST_F(ConstrainedPathTest, PlaysOnlyAllowedFramesAndSwitchesInTheNextUpdate) {
  PathFollowerSettings settings;
  settings.search.constraint = TagConstraint{kOdd, 0, 0};
  PathFollower follower;
  std::string error;
  ASSERT_TRUE(follower.init(db_, search_, settings, path_, error)) << error;
  EXPECT_EQ(violations(follower, 120, settings.search.constraint), 0);
  const int before = follower.stats().constraint_matches;
  const TagConstraint even{kEven, 0, 0};
  follower.set_constraint(even);
  EXPECT_EQ(follower.constraint().require_all, kEven);
  EXPECT_EQ(violations(follower, 1, even), 0) << "the update after a change plays an allowed frame";
  EXPECT_EQ(follower.stats().constraint_matches, before + 1);
  EXPECT_EQ(violations(follower, 180, even), 0);
  EXPECT_TRUE(follower.constraint_held());
  EXPECT_EQ(follower.stats().unsatisfied_matches, 0);
}

TEST_F(ConstrainedPathTest, LeavesATagRangeBeforeItEndsAndStillFollowsThePath) {
  // Only "early" frames: each clip's first 300 frames, so the character must jump before they end.
  const TagConstraint early{kEarly, 0, 0};
  PathFollowerSettings settings;
  settings.search.constraint = early;
  PathFollower follower;
  std::string error;
  ASSERT_TRUE(follower.init(db_, search_, settings, path_, error)) << error;
  EXPECT_EQ(violations(follower, 600, early), 0);
  // With a transition cost no regular match leaves the clip played: the range's end makes it.
  PathFollowerSettings sticky = settings;
  sticky.search.transition_cost = 1e6f;
  PathFollower rider;
  ASSERT_TRUE(rider.init(db_, search_, sticky, path_, error)) << error;
  EXPECT_EQ(violations(rider, 600, early), 0);
  EXPECT_GT(rider.stats().constraint_matches, 0) << "no frame was about to leave the range";
  PathFollower free;
  ASSERT_TRUE(free.init(db_, search_, PathFollowerSettings{}, path_, error)) << error;
  for (int u = 0; u < 600; ++u) free.update(1.0f / 60.0f);
  // Both walk the same straight path: the constrained character is no further from its desired point.
  const auto off = [&](const PathFollower& f) {
    return length(on_ground(f.root_position()) - path_.points[size_t(f.desired_index())]);
  };
  EXPECT_LT(off(follower), off(free) + 0.2f);
  EXPECT_GT(follower.desired_index(), free.desired_index() * 9 / 10);
}

TEST_F(ConstrainedPathTest, AnUnsatisfiableConstraintKeepsPlayingAndCountsIt) {
  PathFollower follower;
  std::string error;
  ASSERT_TRUE(follower.init(db_, search_, PathFollowerSettings{}, path_, error)) << error;
  for (int u = 0; u < 30; ++u) follower.update(1.0f / 60.0f);
  follower.set_constraint(TagConstraint{kEven | kOdd, 0, 0});  // no clip is both
  for (int u = 0; u < 60; ++u) follower.update(1.0f / 60.0f);
  EXPECT_GT(follower.stats().unsatisfied_matches, 0);
  EXPECT_FALSE(follower.constraint_held());
  EXPECT_TRUE(std::isfinite(follower.root_position().x));
}
