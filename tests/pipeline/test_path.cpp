// Path following (Lee, Kwon & Lee 2023): path checks and shaping, path files, LHMM's kNN call count, runs
// on synthetic walks (straight, fast, bad input), no allocation per update, and DirectionNet facing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lmm/common/errors.hpp"
#include "lmm/direction_builder.hpp"
#include "lmm/engines/path_run.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/character/path_following.hpp"
#include "support/allocation_counter.hpp"
#include "support/bandai_data.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

// A database imported from synthetic walks (two circles and a straight line).
class PathTest : public testing::Test {
 protected:
  void SetUp() override { test::load_synthetic_walks(test::temp_folder("path"), db_, search_); }

  std::shared_ptr<const Database> db_;
  FeatureSearch search_;
};

// A straight walk along +Z at `speed` m/s for `seconds`, sampled at 100 Hz.
std::vector<PathSample> straight(float speed, float seconds) {
  std::vector<PathSample> s;
  for (int i = 0; i <= int(std::lround(seconds * 100.0f)); ++i) {
    const float t = float(i) / 100.0f;
    s.push_back(PathSample{t, 0.0f, speed * t});
  }
  return s;
}

std::string place_error(std::vector<PathSample> samples) {
  std::string error;
  EXPECT_FALSE(place_path(samples, PathMode::Local, Vec3{}, error));
  return error;
}

// Along +Z at `speed` m/s for `walk` seconds, holding still there for `pause` seconds (a repeated
// sample), then on for `walk` seconds more.
std::vector<PathSample> paused_walk(float speed, float walk, float pause) {
  const float z = speed * walk;
  return {{0, 0, 0}, {walk, 0, z}, {walk + pause, 0, z}, {2 * walk + pause, 0, 2 * z}};
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

TEST(PathFiles, CsvAndJsonPathsAndErrorsNameTheLine) {
  const std::string dir = test::temp_folder("pathfile");
  const std::vector<PathSample> csv = load_path(test::write_text(dir + "/p.csv", "# drawn\nx,t,z\n1,0,2\n3,0.5,4\n"));
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_FLOAT_EQ(csv[1].t, 0.5f);
  EXPECT_FLOAT_EQ(csv[1].x, 3.0f);
  const std::vector<PathSample> json = load_path(test::write_text(dir + "/p.json", "{\"points\": [[0, 1, 2], [0.5, 3, 4]]}"));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_FLOAT_EQ(json[1].z, 4.0f);
  try {
    load_path(test::write_text(dir + "/bad.csv", "t,x,z\n0,0,0\n1,zero,0\n"));
    FAIL() << "a bad number was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_path(test::write_text(dir + "/h.csv", "time,x,z\n0,0,0\n")), InputError);
  try {  // found by fuzz_path: a repeated header name made rows index past their cells
    load_path(test::write_text(dir + "/d.csv", "t,x,z,t\n0,1,2\n"));
    FAIL() << "a repeated column was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("d.csv:1: column 't' appears twice"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_path(test::write_text(dir + "/j.json", "[[0, 1], [2]]")), InputError);
  try {
    load_path(test::write_text(dir + "/k.json", "[[0, 1, 2],\n [1, 2]]"));
    FAIL() << "a pair was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("k.json:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_path(dir + "/missing.csv"), InputError);
}

TEST_F(PathTest, LhmmMakesOneSearchPerNodeOfItsTree) {
  // Lee, Kwon & Lee 2023 Table 1: 13 kNN calls for LHMM(3, 3), 111 for LHMM(10, 3), 1 for BMM.
  const std::pair<int, int> shapes[] = {{3, 3}, {2, 4}, {1, 1}, {3, 2}};
  const int expected[] = {13, 15, 1, 4};
  for (size_t s = 0; s < 4; ++s) {
    PathRunOptions o;
    o.follower.k = shapes[s].first;
    o.follower.levels = shapes[s].second;
    o.follower.prune = false;
    CharacterTrack track;
    Path path;
    const PathMetrics m = run_path(db_, search_, straight(1.3f, 4.0f), o, track, path);
    EXPECT_DOUBLE_EQ(m.knn_calls_per_lhmm, expected[s]) << "k " << shapes[s].first << " l " << shapes[s].second;
    EXPECT_GT(m.matches, 20);
  }
}

TEST_F(PathTest, FollowsAStraightPathToItsEnd) {
  for (bool adjust : {true, false}) {
    PathRunOptions o;
    o.follower.adjust_to_path = adjust;
    CharacterTrack track;
    Path path;
    const PathMetrics m = run_path(db_, search_, straight(1.3f, 5.0f), o, track, path);
    EXPECT_TRUE(m.completed) << "adjust " << adjust;
    EXPECT_LT(m.avg_distance_m, 0.2) << "adjust " << adjust;
    for (const Vec3& p : track.root) ASSERT_TRUE(is_finite(p));
  }
}

// Issue 40 item 2: a path that pauses (a repeated sample) never completed once the pause outlasted
// Eq. 1's window (1/3 s): every point of a pause is about as near, so the desired position stayed
// at one of them (and the character walked on) or raced through them. Now the pause is waited
// out in time, the character standing near the pause point, then followed.
TEST_F(PathTest, APauseIsWaitedOutStandingThenFollowed) {
  for (const auto& [walk, pause] : {std::pair<float, float>{1.0f, 1.0f}, {2.0f, 1.0f}, {2.0f, 3.0f}}) {
    const std::vector<PathSample> samples = paused_walk(1.3f, walk, pause);
    CharacterTrack track;
    Path path;
    const PathMetrics m = run_path(db_, search_, samples, PathRunOptions{}, track, path);
    ASSERT_TRUE(m.completed) << "walk " << walk << " s, pause " << pause << " s";
    EXPECT_LT(m.avg_distance_m, 0.25) << "walk " << walk << " s, pause " << pause << " s";
    // Waited out: not done before the pause's end plus most of the walk after it.
    EXPECT_GT(m.seconds_to_complete, walk + pause + 0.5f * walk) << "walk " << walk << " s, pause " << pause << " s";
    // Standing near the pause point from shortly after the pause starts to shortly before it ends.
    const Vec3 stop{0.0f, 0.0f, 1.3f * walk};
    for (size_t f = size_t((walk + 0.5f) * 60.0f); f < size_t((walk + pause - 0.25f) * 60.0f); ++f) {
      ASSERT_LT(length(on_ground(track.root[f]) - stop), 0.5f)
          << "walk " << walk << " s, pause " << pause << " s: at " << float(f) / 60.0f << " s";
      ASSERT_LT(length(track.desired[f] - stop), 0.01f) << "at " << float(f) / 60.0f << " s";
    }
  }
}

// Issue 40 item 2: a completed path character kept moving (7.4 m past the end in 60 s); it now
// stands at the end: on these walks, which have no standing frames, its root stays put.
TEST_F(PathTest, ACompletedPathCharacterStandsAtTheEnd) {
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

TEST_F(PathTest, APathFasterThanAnyMotionStillCompletes) {
  // 80 m at 40 m/s: no motion is that fast. The desired position only moves ahead of the
  // character (Eq. 1's window), so the character walks the path at its own pace to the end; the
  // run limit allows for that (issue 12: it gave up after 3 x 2 s + 10 s).
  PathRunOptions o;
  o.dt = 1.0f / 30.0f;
  CharacterTrack track;
  Path path;
  const PathMetrics m = run_path(db_, search_, straight(40.0f, 2.0f), o, track, path);
  EXPECT_TRUE(m.completed);
  EXPECT_LT(m.avg_distance_m, 0.3);
  EXPECT_GT(m.seconds_to_complete, 80.0 / 2.5);  // 80 m at walking speed (about 1.3-2.5 m/s)
}

// Issue 14 item 5: the run limit scales with the data's speed. On walks a quarter as fast (the
// median moving root speed is the 1.5 m/s circle's, so 0.375 m/s), a 16 m path drawn at 4 m/s is
// walked at the data's pace; the old limit (16 m at 1 m/s + 10 s = 26 s) stopped the character
// while it was still following and reported the path as not completed.
TEST(PathSpeed, SlowDataIsGivenTimeToCompleteAPath) {
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  test::load_synthetic_walks(test::temp_folder("slow"), db, search, 0.25f);
  ASSERT_NE(db, nullptr);
  EXPECT_NEAR(typical_root_speed(*db), 0.25 * 1.5, 0.03);
  CharacterTrack track;
  Path path;
  const PathMetrics m = run_path(db, search, straight(4.0f, 4.0f), PathRunOptions{}, track, path);
  EXPECT_TRUE(m.completed);
  EXPECT_LT(m.avg_distance_m, 0.3);
  const double old_limit = std::max(3.0 * 4.0, 16.0 / 1.0) + PathRunOptions{}.extra_seconds;
  EXPECT_GT(m.seconds_to_complete, old_limit);
}

// Issue 40 item 2: on a database imported at lmm-import's highest rate (--fps 1000) a square path
// never completed: the search's frame counts (20 frames to skip around the current one and at
// clip ends) were 20 ms there, so matches stepped back a few ms at a time; they are scaled to the
// database's rate now (PathFollowerSettings::search_rate).
TEST(PathSpeed, AThousandHertzDatabaseCompletesASquare) {
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  test::load_synthetic_walks(test::temp_folder("fps1000"), db, search, 1.0f, 1000.0f);
  ASSERT_NE(db, nullptr);
  ASSERT_FLOAT_EQ(db->fps(), 1000.0f);
  const std::vector<PathSample> square{{0, 0, 0}, {3, 0, 4}, {6, 4, 4}, {9, 4, 0}, {12, 0, 0}};
  CharacterTrack track;
  Path path;
  const PathMetrics m = run_path(db, search, square, PathRunOptions{}, track, path);
  EXPECT_TRUE(m.completed) << "run limit " << m.run_limit_s << " s";
  // As at 30, 60 and 240 Hz (0.69 m: these walks turn on circles of 3 and 5 m, so they cut the
  // square's corners) and in about the same time (13.6 s).
  EXPECT_LT(m.avg_distance_m, 0.8);
  EXPECT_LT(m.seconds_to_complete, 16.0);
}

// Issue 12 item 6: work and duration limits are errors, not hangs or silent empty runs.
TEST_F(PathTest, WorkAndDurationLimitsAreErrors) {
  EXPECT_EQ(lhmm_search_count(3, 3), 13);
  EXPECT_EQ(lhmm_search_count(10, 3), 111);
  EXPECT_GT(lhmm_search_count(64, 8), kMaxLhmmSearches);
  auto run_error = [&](const PathRunOptions& o, const std::vector<PathSample>& samples) {
    CharacterTrack track;
    Path path;
    try {
      run_path(db_, search_, samples, o, track, path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  PathRunOptions wide;
  wide.follower.k = 64;
  wide.follower.levels = 8;  // 64^7 searches per match: never returned
  EXPECT_NE(run_error(wide, straight(1.3f, 2.0f)).find("searches per match"), std::string::npos);
  PathRunOptions tiny_step;
  tiny_step.dt = 1e-9f;  // ran 0 frames with exit 0
  EXPECT_NE(run_error(tiny_step, straight(1.3f, 2.0f)).find("raise the time step"), std::string::npos);
  // Three samples spanning 20,000 s ran for minutes.
  EXPECT_NE(run_error(PathRunOptions{}, {{0, 0, 0}, {10000, 0, 5}, {20000, 0, 10}}).find("at most 600 s"),
            std::string::npos);
  EXPECT_NE(run_error(PathRunOptions{}, straight(100.0f, 60.0f)).find("m long"), std::string::npos);
  EXPECT_NE(run_error(PathRunOptions{}, {{0, 0, 0}, {1, 1e6f, 0}}).find("path sample 2"), std::string::npos);
}

TEST_F(PathTest, BadRunSettingsAreRejected) {
  PathRunOptions o;
  o.follower.k = 0;
  CharacterTrack track;
  Path path;
  EXPECT_THROW(run_path(db_, search_, straight(1, 2), o, track, path), InputError);
  o = PathRunOptions{};
  EXPECT_THROW(run_path(db_, search_, {{0, 0, 0}}, o, track, path), InputError);
}

TEST(PathData, FootLockReducesSlidingWithoutMovingTheRoot) {
  REQUIRE_BANDAI(folder, "normal-extra");
  const std::string out = test::temp_folder("pathdata") + "/db.mmdb";
  test::import_bandai({folder + "/normal-extra"}, out);
  FeatureSearch search;
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(out, error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_TRUE(search.build(db, error)) << error;
  PathRunOptions o;
  CharacterTrack free_track, locked_track;
  Path path;
  const PathMetrics free = run_path(db, search, straight(1.3f, 6.0f), o, free_track, path);
  o.follower.foot_lock = true;
  const PathMetrics locked = run_path(db, search, straight(1.3f, 6.0f), o, locked_track, path);
  EXPECT_GT(free.foot_slide_cm_per_s, 1.0);
  EXPECT_LT(locked.foot_slide_cm_per_s, 0.5 * free.foot_slide_cm_per_s);
  EXPECT_DOUBLE_EQ(locked.avg_distance_m, free.avg_distance_m);  // IK bends legs; the root is untouched
}

TEST_F(PathTest, UpdateAllocatesNothing) {
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
TEST_F(PathTest, DirectionNetFacesTheQueryOncePerMatchAndReinitWithoutItUsesTheTangent) {
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
