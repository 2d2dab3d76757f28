// Path runs through lmm-path's engine (Lee, Kwon & Lee 2023 path following): path files, LHMM's
// kNN call count, runs on the synthetic walks (straight, paused, fast, slow data, 1000 Hz data,
// bad settings and limits) and foot locking on the Bandai data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lmm/character/path_following.hpp"
#include "lmm/common/errors.hpp"
#include "lmm/engines/path_run.hpp"
#include "support/annotated_walks.hpp"
#include "support/bandai_data.hpp"
#include "support/path_samples.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/synthetic_walk_import.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;
using namespace lmm::pipeline;
using test::paused_walk;
using test::straight;

namespace {

// The synthetic walks database (two circles and a straight line) and its search.
class PathRunTest : public test::SyntheticWalksTest {};

// Imports the synthetic walks at `speed_factor` times their speed and `fps` into a fresh folder
// named `name`, loads them into `db` and builds `search` (test failures on any error).
void import_walks(const std::string& name, float speed_factor, float fps, std::shared_ptr<const Database>& db,
                  FeatureSearch& search) {
  std::string error;
  db = Database::load_file(test::import_synthetic_walks(test::temp_folder(name), speed_factor, fps), error);
  ASSERT_NE(db, nullptr) << error;
  ASSERT_TRUE(search.build(db, error)) << error;
}

}  // namespace

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

TEST_F(PathRunTest, LhmmMakesOneSearchPerNodeOfItsTree) {
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

TEST_F(PathRunTest, FollowsAStraightPathToItsEnd) {
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

// Issue 43 item 3: lmm-path's tag metrics on the synthetic walks tagged by clip: a run required to
// play odd clips only plays them (tag_seconds, no violations) and still follows the path; an
// untagged database writes no tag keys.
TEST(PathRunTags, AConstrainedRunPlaysOnlyAllowedFramesAndReportsTagTime) {
  const std::vector<int> starts = test::synthetic_walk_starts();
  test::WalkAnnotations notes;
  notes.tag_names = "even\nodd\n";
  notes.tags = [](int, int clip) { return TagMask(clip % 2 ? 2 : 1); };
  AlignedBuffer buffer;
  std::shared_ptr<const Database> db;
  FeatureSearch search;
  test::load_annotated_walks(notes, buffer, db, search);
  PathRunOptions o;
  o.follower.search.constraint = TagConstraint{2, 0, 0};
  CharacterTrack track;
  Path path;
  const PathMetrics m = run_path(db, search, straight(1.3f, 5.0f), o, track, path);
  EXPECT_TRUE(m.completed);
  EXPECT_LT(m.avg_distance_m, 0.2);
  EXPECT_EQ(m.constraint_violations, 0);
  EXPECT_EQ(m.unsatisfied_matches, 0);
  ASSERT_EQ(m.tag_seconds.size(), 2u);
  EXPECT_EQ(m.tag_seconds[0], std::make_pair(std::string("even"), 0.0));
  EXPECT_EQ(m.tag_seconds[1].first, "odd");
  EXPECT_NEAR(m.tag_seconds[1].second, m.seconds_to_complete, 1e-3);
  std::shared_ptr<const Database> plain;
  FeatureSearch plain_search;
  test::load_synthetic_walks(plain, plain_search);
  EXPECT_TRUE(run_path(plain, plain_search, straight(1.3f, 5.0f), PathRunOptions{}, track, path).tag_seconds.empty());
}

// Issue 40 item 2: a path that pauses (a repeated sample) never completed once the pause outlasted
// Eq. 1's window (1/3 s): every point of a pause is about as near, so the desired position stayed
// at one of them (and the character walked on) or raced through them. Now the pause is waited
// out in time, the character standing near the pause point, then followed.
TEST_F(PathRunTest, APauseIsWaitedOutStandingThenFollowed) {
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

TEST_F(PathRunTest, APathFasterThanAnyMotionStillCompletes) {
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
  import_walks("slow", 0.25f, 60.0f, db, search);
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
  import_walks("fps1000", 1.0f, 1000.0f, db, search);
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
TEST_F(PathRunTest, WorkAndDurationLimitsAreErrors) {
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

TEST_F(PathRunTest, BadRunSettingsAreRejected) {
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
