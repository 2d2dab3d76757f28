// The C API's path characters (lmm_character_create_path: Lee, Kwon & Lee 2023 LHMM path following)
// and the per-character queries a demo panel draws from (trajectory, contacts, counters, frame and
// clip, decoder experts), on the synthetic walks database and a synthetic mixture-of-experts bundle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/character/learned_character.hpp"
#include "lmm/lmm.h"
#include "support/allocation_counter.hpp"
#include "support/temp_files.hpp"
#include "support/synthetic_model.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;

namespace {

constexpr float kDt = 1.0f / 60.0f;

// The synthetic walks database as a C API handle.
class PathCharacterTest : public testing::Test {
 protected:
  void SetUp() override {
    FeatureSearch search;
    test::load_synthetic_walks(database_, search);
    db_ = lmm_database_load(test::synthetic_walks_path().c_str());
    ASSERT_NE(db_, nullptr) << lmm_last_error();
  }
  void TearDown() override { lmm_database_release(db_); }

  std::shared_ptr<const Database> database_;  // the same file through the C++ API
  lmm_database* db_ = nullptr;
};

// Samples (t, x, z) of a path drawn at `speed` m/s from (x0, z0): `first` metres along +Z, then a
// turn to the right (-X) on a quarter circle of `radius` (0: a sharp corner) and on to `second`
// metres along -X from the corner, one sample per 10 ms.
std::vector<float> l_path(float x0, float z0, float first, float second, float speed, float radius = 0.0f) {
  const float arc = 0.5f * 3.14159265f * radius, straight = first - radius, total = straight + arc + second - radius;
  std::vector<float> s;
  for (int i = 0;; ++i) {
    const float d = std::min(total, float(i) * 0.01f * speed);
    float x = x0, z = z0 + d;
    if (d > straight + arc) {
      x = x0 - radius - (d - straight - arc), z = z0 + first;
    } else if (d > straight) {
      const float a = (d - straight) / std::max(radius, 1e-6f);
      x = x0 - radius + radius * std::cos(a), z = z0 + straight + radius * std::sin(a);
    }
    s.insert(s.end(), {float(i) * 0.01f, x, z});
    if (d >= total) return s;
  }
}

// Horizontal distance from `p` to the polyline through `points` (3 floats each).
float distance_to_polyline(const float* p, const std::vector<float>& points) {
  float best = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i + 3 < points.size(); i += 3) {
    const float ax = points[i], az = points[i + 2], dx = points[i + 3] - ax, dz = points[i + 5] - az;
    const float length2 = dx * dx + dz * dz;
    const float t = length2 > 0.0f ? std::clamp(((p[0] - ax) * dx + (p[2] - az) * dz) / length2, 0.0f, 1.0f) : 0.0f;
    best = std::min(best, std::hypot(p[0] - ax - t * dx, p[2] - az - t * dz));
  }
  return best;
}

std::vector<float> path_points(const lmm_character* c) {
  int count = 0;
  EXPECT_EQ(lmm_character_path_progress(c, nullptr, &count, nullptr), 1) << lmm_last_error();
  std::vector<float> points(3 * size_t(count));
  EXPECT_EQ(lmm_character_path_points(c, points.data(), size_t(count)), 1) << lmm_last_error();
  return points;
}

// The message of a failed lmm_character_create_path over `samples`.
std::string create_error(const lmm_database* db, const std::vector<float>& samples, int mode = LMM_PATH_LOCAL) {
  lmm_character* c = lmm_character_create_path(db, samples.data(), samples.size() / 3, mode, 1.0f, 0, 0, 0);
  EXPECT_EQ(c, nullptr);
  lmm_character_release(c);
  return lmm_last_error();
}

}  // namespace

TEST_F(PathCharacterTest, FollowsAnLPathToItsEndCloseToThePath) {
  // 4 m then 3 m to the right around a corner of 2 m radius (the synthetic walks turn on circles of
  // 3 and 5 m: a sharp corner is beyond them), drawn at 1.3 m/s (their pace), from a character at
  // (2, 1) facing +Z; local mode moves the path's start (drawn at the origin) to the character.
  const std::vector<float> samples = l_path(0.0f, 0.0f, 4.0f, 3.0f, 1.3f, 2.0f);
  const float drawn_seconds = samples[samples.size() - 3];
  lmm_character* c = lmm_character_create_path(db_, samples.data(), samples.size() / 3, LMM_PATH_LOCAL, 1.0f, 2.0f, 1.0f, 0.0f);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  const std::vector<float> points = path_points(c);
  EXPECT_NEAR(points[0], 2.0f, 1e-4f);
  EXPECT_NEAR(points[2], 1.0f, 1e-4f);
  const float end[3] = {2.0f - 3.0f, 0.0f, 1.0f + 4.0f};
  EXPECT_LT(std::hypot(points[points.size() - 3] - end[0], points[points.size() - 1] - end[2]), 0.05f);
  double distance_sum = 0.0;
  int frames = 0, completed = 0;
  float root[3] = {};
  for (; frames < 30 * 60 && !completed; ++frames) {
    ASSERT_EQ(lmm_character_update(c, nullptr, kDt), 1) << lmm_last_error();
    ASSERT_EQ(lmm_character_root_position(c, root), 1);
    distance_sum += distance_to_polyline(root, points);
    ASSERT_EQ(lmm_character_path_progress(c, nullptr, nullptr, &completed), 1);
  }
  ASSERT_TRUE(completed) << "not completed in " << frames << " updates";
  const double mean = distance_sum / frames;
  EXPECT_LT(mean, 0.2) << "mean distance to the path over " << frames << " updates";
  EXPECT_LT(std::hypot(root[0] - end[0], root[2] - end[2]), 0.5f) << root[0] << ", " << root[2];
  // Played at the drawing's pace (speed scale 1): the character may lag, not skip ahead.
  EXPECT_GT(float(frames) * kDt, drawn_seconds - 0.5f);
  std::printf("L path: mean distance %.3f m over %.2f s\n", mean, frames * kDt);
  lmm_counters counters{};
  ASSERT_EQ(lmm_character_counters(c, &counters), 1);
  EXPECT_EQ(counters.updates, frames);
  EXPECT_GE(counters.searches, int(frames * kDt * 6.0f) - 1);  // a match every 1/6 s at least
  EXPECT_GT(counters.transitions, 0);
  lmm_character_release(c);
}

// Issue 40 item 2: at speed scale 0.25, an L path pausing 0.3 s at its corner (1.2 s of playback)
// never completed; the pause is waited out at the corner, then the path followed to its end,
// where the character stays.
TEST_F(PathCharacterTest, APauseAtACornerIsWaitedOutThenThePathCompleted) {
  std::vector<float> samples = l_path(0.0f, 0.0f, 3.0f, 3.0f, 4 * 1.3f);  // drawn 4x as fast as played
  const float corner_time = 3.0f / (4 * 1.3f), pause = 0.3f;
  size_t corner = 0;  // the first sample past the corner
  while (samples[corner] <= corner_time) corner += 3;
  for (size_t i = corner; i < samples.size(); i += 3) samples[i] += pause;
  const float held[6] = {corner_time, 0.0f, 3.0f, corner_time + pause, 0.0f, 3.0f};  // at the corner for 0.3 s
  samples.insert(samples.begin() + long(corner), held, held + 6);
  lmm_character* c = lmm_character_create_path(db_, samples.data(), samples.size() / 3, LMM_PATH_LOCAL, 0.25f, 0, 0, 0);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  const float played_corner = corner_time / 0.25f, played_pause = pause / 0.25f;
  int frames = 0, completed = 0;
  float root[3] = {}, off_corner = 0.0f;  // the farthest from the corner while the pause lasts
  for (; frames < 30 * 60 && !completed; ++frames) {
    ASSERT_EQ(lmm_character_update(c, nullptr, kDt), 1) << lmm_last_error();
    ASSERT_EQ(lmm_character_root_position(c, root), 1);
    const float t = float(frames + 1) * kDt;
    if (t > played_corner + 0.5f && t < played_corner + played_pause - 0.25f) {
      off_corner = std::max(off_corner, std::hypot(root[0], root[2] - 3.0f));
    }
    ASSERT_EQ(lmm_character_path_progress(c, nullptr, nullptr, &completed), 1);
  }
  ASSERT_TRUE(completed) << "not completed in " << frames << " updates";
  EXPECT_LT(off_corner, 0.5f) << "not waiting at the corner";
  EXPECT_GT(float(frames) * kDt, played_corner + played_pause + 0.5f * 3.0f / 1.3f);  // waited, then walked on
  const float end[2] = {root[0], root[2]};
  for (int f = 0; f < 5 * 60; ++f) ASSERT_EQ(lmm_character_update(c, nullptr, kDt), 1);
  ASSERT_EQ(lmm_character_root_position(c, root), 1);
  EXPECT_LT(std::hypot(root[0] - end[0], root[2] - end[1]), 0.5f) << "moved on after completing the path";
  lmm_character_release(c);
}

TEST_F(PathCharacterTest, GlobalModeKeepsThePathAndWalksToItsStart) {
  const std::vector<float> samples = l_path(0.0f, 3.0f, 2.0f, 1.0f, 1.3f);
  const float heading = 2.0f;  // the character starts facing where it was asked to, not along the path
  lmm_character* c = lmm_character_create_path(db_, samples.data(), samples.size() / 3, LMM_PATH_GLOBAL, 1.0f, 0.0f, 0.0f, heading);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  float q[4] = {};
  ASSERT_EQ(lmm_character_root_rotation(c, q), 1);
  EXPECT_NEAR(std::atan2(2 * (q[0] * q[2] + q[3] * q[1]), 1 - 2 * (q[0] * q[0] + q[1] * q[1])), heading, 1e-4f);
  const std::vector<float> points = path_points(c);
  EXPECT_NEAR(points[0], 0.0f, 1e-3f);  // from the character ...
  EXPECT_NEAR(points[2], 0.0f, 0.05f);
  EXPECT_NEAR(points[points.size() - 3], -1.0f, 0.05f);  // ... to the path's end where it was drawn
  EXPECT_NEAR(points[points.size() - 1], 5.0f, 0.05f);
  lmm_character_release(c);
}

TEST_F(PathCharacterTest, BadPathsFailNamingTheSample) {
  const std::vector<float> good = l_path(0.0f, 0.0f, 1.0f, 1.0f, 1.3f);
  EXPECT_EQ(lmm_character_create_path(nullptr, good.data(), good.size() / 3, LMM_PATH_LOCAL, 1.0f, 0, 0, 0), nullptr);
  EXPECT_NE(std::string(lmm_last_error()).find("database is NULL"), std::string::npos) << lmm_last_error();
  EXPECT_EQ(lmm_character_create_path(db_, nullptr, 4, LMM_PATH_LOCAL, 1.0f, 0, 0, 0), nullptr);
  EXPECT_NE(std::string(lmm_last_error()).find("samples_txz is NULL"), std::string::npos) << lmm_last_error();
  EXPECT_NE(create_error(db_, {0, 0, 0}).find("1 sample(s)"), std::string::npos) << lmm_last_error();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(create_error(db_, {0, 0, 0, 0.5f, nan, 1}).find("path sample 2"), std::string::npos) << lmm_last_error();
  EXPECT_NE(create_error(db_, {0, 0, 0, 0.5f, 0, 1, 0.5f, 0, 2}).find("path sample 3"), std::string::npos)
      << lmm_last_error();
  EXPECT_NE(create_error(db_, good, 7).find("unknown path mode 7"), std::string::npos) << lmm_last_error();
  // Issue 40 item 2: a path that never moves was accepted and never completed.
  EXPECT_NE(create_error(db_, {0, 1, 1, 1, 1, 1, 2, 1, 1}).find("the path does not move"), std::string::npos)
      << lmm_last_error();
  EXPECT_NE(create_error(db_, {0, 1, 1, 1, 1, 1}, LMM_PATH_GLOBAL).find("does not move"), std::string::npos)
      << lmm_last_error();
  EXPECT_EQ(lmm_character_create_path(db_, good.data(), good.size() / 3, LMM_PATH_LOCAL, 0.0f, 0, 0, 0), nullptr);
  EXPECT_NE(std::string(lmm_last_error()).find("speed scale"), std::string::npos) << lmm_last_error();
  EXPECT_EQ(lmm_character_create_path(db_, good.data(), good.size() / 3, LMM_PATH_LOCAL, 1.0f, nan, 0, 0), nullptr);
  EXPECT_NE(std::string(lmm_last_error()).find("must be finite"), std::string::npos) << lmm_last_error();
}

TEST_F(PathCharacterTest, GamepadCallsFailOnAPathCharacterAndPathCallsOnOthers) {
  const std::vector<float> samples = l_path(0.0f, 0.0f, 1.0f, 1.0f, 1.3f);
  lmm_character* path = lmm_character_create_path(db_, samples.data(), samples.size() / 3, LMM_PATH_LOCAL, 1.0f, 0, 0, 0);
  lmm_character* steered = lmm_character_create_database(db_, 0, 0, 0);
  ASSERT_TRUE(path != nullptr && steered != nullptr) << lmm_last_error();
  const float position[3] = {0, 0, 0}, rotation[4] = {0, 0, 0, 1};
  EXPECT_EQ(lmm_character_reset(path, 0, 0, 0), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("lmm_character_reset is for gamepad characters"), std::string::npos);
  EXPECT_EQ(lmm_character_teleport(path, 0, 0, 0), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("lmm_character_teleport"), std::string::npos);
  EXPECT_EQ(lmm_character_set_root_owner(path, LMM_ROOT_GAME), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("lmm_character_set_root_owner"), std::string::npos);
  EXPECT_EQ(lmm_character_set_root(path, position, rotation), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("lmm_character_set_root"), std::string::npos);
  EXPECT_EQ(lmm_character_update(steered, nullptr, kDt), 0);  // only a path character ignores its input
  EXPECT_NE(std::string(lmm_last_error()).find("input is NULL"), std::string::npos) << lmm_last_error();
  int count = 0;
  EXPECT_EQ(lmm_character_path_progress(steered, nullptr, &count, nullptr), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("follows no path"), std::string::npos) << lmm_last_error();
  std::vector<float> points(3 * 1000);
  ASSERT_EQ(lmm_character_path_progress(path, nullptr, &count, nullptr), 1);
  EXPECT_EQ(lmm_character_path_points(path, points.data(), size_t(count) - 1), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("the path has " + std::to_string(count)), std::string::npos)
      << lmm_last_error();
  // Both kinds update through one job range (the path character's input is ignored).
  lmm_character* both[] = {path, steered};
  const lmm_gamepad inputs[2] = {};
  EXPECT_EQ(lmm_characters_update(both, inputs, 0, 2, kDt), 1) << lmm_last_error();
  lmm_character_release(path);
  lmm_character_release(steered);
}

TEST_F(PathCharacterTest, PanelQueriesReportTheTrajectoryContactsAndClipWithoutAllocating) {
  const std::vector<float> samples = l_path(0.0f, 0.0f, 6.0f, 0.0f, 1.3f);  // straight: no corner revision
  lmm_character* path = lmm_character_create_path(db_, samples.data(), samples.size() / 3, LMM_PATH_LOCAL, 1.0f, 0, 0, 0);
  lmm_character* steered = lmm_character_create_database(db_, 0, 0, 0);
  ASSERT_TRUE(path != nullptr && steered != nullptr) << lmm_last_error();
  const int samples_count = lmm_character_trajectory_count(steered);
  ASSERT_GT(samples_count, 0);
  EXPECT_EQ(lmm_character_trajectory_count(path), samples_count);
  const int contacts = lmm_character_contact_count(path);
  ASSERT_GT(contacts, 0);
  const size_t n = static_cast<size_t>(samples_count);
  std::vector<float> times(n), positions(3 * n), rotations(4 * n);
  float root[3] = {};
  lmm_gamepad forward{};
  forward.left_y = 1.0f;
  const std::vector<float> points = path_points(path);
  test::start_counting_allocations();
  for (int f = 0; f < 120; ++f) {
    ASSERT_EQ(lmm_character_update(path, nullptr, kDt), 1);
    ASSERT_EQ(lmm_character_update(steered, &forward, kDt), 1);
  }
  int frame = -1, clip = -1, joint = -1, in_contact = -1, desired = -1, completed = -1;
  lmm_counters counters{};
  for (lmm_character* c : {path, steered}) {
    EXPECT_EQ(lmm_character_trajectory(c, times.data(), positions.data(), rotations.data(), size_t(samples_count)), 1);
    EXPECT_EQ(lmm_character_frame(c, &frame, &clip), 1);
    EXPECT_EQ(lmm_character_contact(c, contacts - 1, &joint, &in_contact), 1);
    EXPECT_EQ(lmm_character_counters(c, &counters), 1);
  }
  EXPECT_EQ(lmm_character_path_progress(path, &desired, nullptr, &completed), 1);
  EXPECT_EQ(lmm_character_root_position(path, root), 1);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  // The steered character walks +Z: its predicted future lies ahead of it, its past behind.
  ASSERT_EQ(lmm_character_root_position(steered, root), 1);
  for (int m = 0; m < samples_count; ++m) {
    const float ahead = positions[3 * size_t(m) + 2] - root[2];
    EXPECT_TRUE(times[size_t(m)] > 0 ? ahead > 0.0f : ahead <= 0.05f) << "sample " << m << " at " << times[size_t(m)] << " s";
  }
  EXPECT_EQ(counters.updates, 120);
  EXPECT_GT(counters.searches, 0);
  // The path character's revised trajectory lies on the path ahead of its desired point.
  ASSERT_EQ(lmm_character_trajectory(path, times.data(), positions.data(), nullptr, size_t(samples_count)), 1);
  for (int m = 0; m < samples_count; ++m) {
    if (times[size_t(m)] > 0) {
      EXPECT_LT(distance_to_polyline(&positions[3 * size_t(m)], points), 0.05f) << "sample " << m;
    }
  }
  EXPECT_GT(desired, 0);
  EXPECT_EQ(completed, 0);
  // Frame and clip: the frame lies in the named clip; contacts name a joint of the skeleton.
  ASSERT_EQ(lmm_character_frame(path, &frame, &clip), 1);
  const char* name = lmm_character_clip_name(path, clip);
  ASSERT_NE(name, nullptr);
  EXPECT_NE(std::string(name), "");
  EXPECT_EQ(lmm_character_clip_name(path, -1), nullptr);
  EXPECT_GE(joint, 1);
  EXPECT_LT(joint, lmm_character_joint_count(path));
  EXPECT_TRUE(in_contact == 0 || in_contact == 1);
  EXPECT_EQ(lmm_character_contact(path, contacts, &joint, &in_contact), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("contact " + std::to_string(contacts) + " is outside"), std::string::npos);
  EXPECT_EQ(lmm_character_trajectory(path, times.data(), nullptr, nullptr, size_t(samples_count) - 1), 0);
  EXPECT_EQ(lmm_character_decoder_experts(path, nullptr, nullptr, 2), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("only a learned character"), std::string::npos) << lmm_last_error();
  lmm_character_release(path);
  lmm_character_release(steered);
  // A crowd's characters answer the same queries.
  lmm_crowd* crowd = lmm_crowd_create_database(db_, 2);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  ASSERT_EQ(lmm_crowd_update(crowd, 0, 2, kDt, 0, 0.0), 1) << lmm_last_error();
  const lmm_character* member = lmm_crowd_character(crowd, 1);
  EXPECT_EQ(lmm_character_trajectory_count(member), samples_count);
  EXPECT_EQ(lmm_character_trajectory(member, times.data(), positions.data(), nullptr, n), 1);
  EXPECT_EQ(lmm_character_contact(member, 0, &joint, &in_contact), 1);
  EXPECT_EQ(lmm_character_frame(member, &frame, &clip), 1);
  EXPECT_NE(lmm_character_clip_name(member, clip), nullptr);
  EXPECT_EQ(lmm_character_counters(member, &counters), 1);
  EXPECT_EQ(counters.updates, 1);
  lmm_crowd_release(crowd);
}

// The played trajectory of a database character is where its played clip's own root goes: the
// simulation bone of frames f + offset seen from frame f's root, placed at the character's root.
TEST_F(PathCharacterTest, PlayedTrajectoryIsTheClipsOwnFutureRootFromTheCharacter) {
  const std::vector<float> samples = l_path(0.0f, 0.0f, 6.0f, 3.0f, 1.3f, 1.0f);
  lmm_character* path = lmm_character_create_path(db_, samples.data(), samples.size() / 3, LMM_PATH_LOCAL, 1.0f, 0, 0, 0);
  lmm_character* steered = lmm_character_create_database(db_, 0, 0, 0);
  ASSERT_TRUE(path != nullptr && steered != nullptr) << lmm_last_error();
  const size_t n = size_t(lmm_character_trajectory_count(steered));
  ASSERT_GT(n, 0u);
  std::vector<float> times(n), positions(3 * n), directions(3 * n);
  lmm_gamepad turning{};
  int checked = 0;
  for (int f = 0; f < 240; ++f) {
    turning.left_x = std::sin(0.02f * float(f));
    turning.left_y = 1.0f;
    ASSERT_EQ(lmm_character_update(path, nullptr, kDt), 1);
    ASSERT_EQ(lmm_character_update(steered, &turning, kDt), 1);
    if (f % 40 != 39) continue;
    for (lmm_character* c : {path, steered}) {
      test::start_counting_allocations();
      ASSERT_EQ(lmm_character_played_trajectory(c, times.data(), positions.data(), directions.data(), n), 1)
          << lmm_last_error();
      EXPECT_EQ(test::stop_counting_allocations(), 0);
      int frame = -1, clip = -1;
      float root_p[3], root_q[4];
      ASSERT_EQ(lmm_character_frame(c, &frame, &clip), 1);
      ASSERT_EQ(lmm_character_root_position(c, root_p), 1);
      ASSERT_EQ(lmm_character_root_rotation(c, root_q), 1);
      const Quat character{root_q[3], root_q[0], root_q[1], root_q[2]};
      const DatabaseRange& range = database_->ranges()[size_t(clip)];
      const Vec3 here = database_->positions(frame)[0];
      const Quat facing = database_->rotations(frame)[0];
      for (size_t m = 0; m < n; ++m) {
        const int offset = database_->schema().trajectory_offsets[m];
        EXPECT_NEAR(times[m], float(offset) / database_->fps(), 1e-6f);
        if (frame + offset < range.start || frame + offset >= range.stop) continue;  // beyond the clip
        const Vec3 there = database_->positions(frame + offset)[0];
        const Vec3 ahead = rotate(character, inverse_rotate(facing, there - here));
        const Vec3 heading = rotate(character, inverse_rotate(facing, rotate(database_->rotations(frame + offset)[0], Vec3{0, 0, 1})));
        EXPECT_NEAR(positions[3 * m] - root_p[0], ahead.x, 2e-3f) << "sample " << m << ", frame " << frame;
        EXPECT_NEAR(positions[3 * m + 2] - root_p[2], ahead.z, 2e-3f) << "sample " << m << ", frame " << frame;
        EXPECT_NEAR(directions[3 * m] * heading.x + directions[3 * m + 2] * heading.z, 1.0f, 1e-4f) << "sample " << m;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(lmm_character_played_trajectory(steered, times.data(), nullptr, nullptr, n - 1), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("trajectory samples"), std::string::npos) << lmm_last_error();
  EXPECT_EQ(lmm_character_played_trajectory(nullptr, nullptr, nullptr, nullptr, n), 0);
  lmm_character_release(path);
  lmm_character_release(steered);
}

// The decoder experts of a learned character are those its gate routes the shown state to (the
// reference: a full softmax in double precision), through the C++ API and the C API alike.
TEST(LearnedCharacterCApi, DecoderExpertsAreTheGatesTopKForTheShownState) {
  const ModelValues values = test::random_model_values(4, 17);
  std::string error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(values, false, error);
  ASSERT_TRUE(error.empty()) << error;
  const std::string file = test::temp_folder("bundle") + "/model.lmmw";
  ASSERT_TRUE(write_file_atomic(file, bytes.data(), bytes.size(), error)) << error;
  lmm_model* model = lmm_model_load(file.c_str());
  ASSERT_NE(model, nullptr) << lmm_last_error();
  lmm_character* c = lmm_character_create_learned(model, 0, 0, 0);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  std::shared_ptr<const Model> loaded = Model::load_file(file, error);
  ASSERT_NE(loaded, nullptr) << error;
  LearnedCharacter twin;
  ASSERT_TRUE(twin.init(loaded, LearnedSettings{}, Vec3{}, 0.0f, error)) << error;
  lmm_gamepad pad{};
  GamepadInput input;
  int changes = 0, previous = -1;
  for (int f = 0; f < 90; ++f) {
    pad.left_x = input.left_x = std::sin(0.1f * float(f));
    pad.left_y = input.left_y = std::cos(0.07f * float(f));
    ASSERT_EQ(lmm_character_update(c, &pad, kDt), 1);
    twin.update(input, kDt);
    int experts[4] = {-1, -1, -1, -1};
    float weights[4] = {};
    ASSERT_EQ(lmm_character_decoder_experts(c, experts, weights, 4), values.decoder.top_k) << lmm_last_error();
    const std::vector<float>& state = twin.network_state();
    const std::vector<double> logits = test::reference_dense(values.decoder.gate, 0, {state.begin(), state.end()}, false);
    std::vector<int> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[size_t(a)] > logits[size_t(b)]; });
    const double kept = 1.0 + std::exp(logits[size_t(order[1])] - logits[size_t(order[0])]);
    EXPECT_EQ(experts[0], order[0]) << "update " << f;
    EXPECT_EQ(experts[1], order[1]) << "update " << f;
    EXPECT_NEAR(weights[0], 1.0 / kept, 1e-4) << "update " << f;
    EXPECT_NEAR(weights[0] + weights[1], 1.0f, 1e-5f);
    changes += previous >= 0 && experts[0] != previous ? 1 : 0;
    previous = experts[0];
  }
  EXPECT_GT(changes, 0) << "the routing never changed over 90 updates";
  int one = -1;
  EXPECT_EQ(lmm_character_decoder_experts(c, &one, nullptr, 1), 1);  // capacity caps the count
  EXPECT_EQ(lmm_character_decoder_experts(c, &one, nullptr, 0), 0);
  // Its played trajectory is the shown state's: features recomputed from it give the state's
  // trajectory positions back, and its directions point along the state's.
  const Model& m = *loaded;
  const size_t n = m.schema().trajectory_offsets.size();
  std::vector<float> times(n), positions(3 * n), directions(3 * n);
  ASSERT_EQ(lmm_character_played_trajectory(c, times.data(), positions.data(), directions.data(), n), 1) << lmm_last_error();
  std::vector<RootSample> future(n);
  for (size_t k = 0; k < n; ++k) {
    future[k].position = Vec3{positions[3 * k], positions[3 * k + 1], positions[3 * k + 2]};
    const Vec3 d{directions[3 * k], 0.0f, directions[3 * k + 2]};
    future[k].rotation = quat_from_angle_axis(std::atan2(d.x, d.z), Vec3{0, 1, 0});
  }
  std::vector<float> again(size_t(m.schema().dims), 0.0f);
  compute_trajectory_features(m.schema(), RootSample{twin.root_position(), twin.root_rotation()}, future.data(),
                              m.feature_offset(), m.feature_scale(), again.data());
  const float* state = twin.network_state().data() + m.latent();
  int compared = 0;
  for (const FeatureGroup& g : m.schema().groups) {
    if (!is_trajectory_kind(g.kind)) continue;
    for (int d = g.first_dim; d < g.first_dim + feature_group_dims(g); d += 2) {
      const float sx = state[d] * m.feature_scale()[d] + m.feature_offset()[d];
      const float sz = state[d + 1] * m.feature_scale()[d + 1] + m.feature_offset()[d + 1];
      const float ax = again[size_t(d)] * m.feature_scale()[d] + m.feature_offset()[d];
      const float az = again[size_t(d) + 1] * m.feature_scale()[d + 1] + m.feature_offset()[d + 1];
      if (g.kind == FeatureKind::TrajectoryPosition) {
        EXPECT_NEAR(ax, sx, 1e-4f) << g.name;
        EXPECT_NEAR(az, sz, 1e-4f) << g.name;
      } else {
        EXPECT_NEAR(ax * sz - az * sx, 0.0f, 1e-3f * std::hypot(sx, sz)) << g.name << ": not parallel";
        EXPECT_GT(ax * sx + az * sz, 0.0f) << g.name << ": opposite";
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
  EXPECT_EQ(lmm_character_frame(c, nullptr, nullptr), 0);
  EXPECT_NE(std::string(lmm_last_error()).find("learned character plays no database frame"), std::string::npos);
  EXPECT_EQ(lmm_character_clip_name(c, 0), nullptr);
  lmm_character_release(c);
  lmm_model_release(model);
}
