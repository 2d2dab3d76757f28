// Crowds: a crowd's characters equal the same characters updated one by one, bit for bit
// (learned crowds batch their networks across characters, in blocks, on two threads); searches
// spread over the interval; rate divisors and deadline deferrals equal updates with the summed
// dt, and characters between updates are shown moved on by their root velocity; priorities order the updates; no allocation.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "lmm/crowd.hpp"
#include "support/allocation_counter.hpp"
#include "support/synthetic_model.hpp"

using namespace lmm;

namespace {

constexpr int kCharacters = 150;  // more than one LearnedCrowd::kBlock
constexpr int kFrames = 120;

struct Assets {
  AlignedBuffer model_bytes = test::aligned_copy(bundle_bytes());
  std::shared_ptr<const Model> model;
  AlignedBuffer db_bytes = test::aligned_copy(database_bytes());
  std::shared_ptr<const Database> db;
  FeatureSearch search;

  Assets() {
    std::string error;
    model = Model::load_buffer(model_bytes.data(), model_bytes.size(), error);
    db = Database::load_buffer(db_bytes.data(), db_bytes.size(), error);
    if (db != nullptr) search.build(db, error);
  }
  static std::vector<uint8_t> bundle_bytes() {
    std::string error;
    return test::synthetic_bundle(test::random_model_values(4, 17), false, error);
  }
  static std::vector<uint8_t> database_bytes() {
    test::SyntheticDatabase synthetic;
    synthetic.randomize({90, 140, 200, 75}, 23);
    return synthetic.build();
  }
};

// Character i's input on frame f: a stick that changes direction every 20 to 40 frames.
GamepadInput input_of(int i, int f) {
  std::mt19937 rng(uint32_t(i * 7919 + f / (20 + i % 21)));
  std::uniform_real_distribution<float> stick(-1.0f, 1.0f);
  GamepadInput in;
  in.left_x = stick(rng);
  in.left_y = stick(rng);
  in.gait = float(i % 2);
  return in;
}

// Frame f's dt: mostly 60 Hz, sometimes 30 Hz or a long hitch (several model frames at once).
float dt_of(int f) { return f % 17 == 5 ? 0.09f : (f % 5 == 0 ? 1.0f / 30.0f : 1.0f / 60.0f); }

Vec3 start_of(int i) { return Vec3{float(i % 10), 0.0f, float(i / 10)}; }

template <typename Character>
void expect_same(const Character& a, const Character& b, int i, int f) {
  ASSERT_EQ(a.global_positions().size(), b.global_positions().size());
  const size_t bytes = a.global_positions().size() * sizeof(Vec3);
  ASSERT_EQ(std::memcmp(a.global_positions().data(), b.global_positions().data(), bytes), 0)
      << "character " << i << " frame " << f;
  ASSERT_EQ(std::memcmp(a.global_rotations().data(), b.global_rotations().data(), a.global_rotations().size() * sizeof(Quat)), 0)
      << "character " << i << " frame " << f;
  ASSERT_EQ(a.stats().searches, b.stats().searches) << "character " << i;
  ASSERT_EQ(a.stats().transitions, b.stats().transitions) << "character " << i;
}

// Runs `crowd` on two threads (two workers, two ranges) and `alone` one by one for kFrames
// with the same inputs; every pose equal after every frame.
void expect_learned_crowd_equals_alone(const Assets& assets, const LearnedSettings& settings) {
  LearnedCrowd crowd;
  std::string error;
  ASSERT_TRUE(crowd.init(assets.model, settings, kCharacters, 2, error)) << error;
  std::vector<LearnedCharacter> alone(kCharacters);
  for (int i = 0; i < kCharacters; ++i) {
    ASSERT_TRUE(alone[size_t(i)].init(assets.model, crowd_character_settings(settings, i), start_of(i), 0.1f * i, error));
    crowd.character(i).reset(start_of(i), 0.1f * i);
  }
  const int half = kCharacters / 2 + 3;
  for (int f = 0; f < kFrames; ++f) {
    for (int i = 0; i < kCharacters; ++i) crowd.set_input(i, input_of(i, f));
    std::thread second([&] { crowd.update(half, kCharacters, dt_of(f), 1); });
    crowd.update(0, half, dt_of(f), 0);
    second.join();
    for (int i = 0; i < kCharacters; ++i) {
      alone[size_t(i)].update(input_of(i, f), dt_of(f));
      ASSERT_NO_FATAL_FAILURE(expect_same(crowd.character(i), alone[size_t(i)], i, f));
    }
  }
  int transitions = 0;
  for (int i = 0; i < kCharacters; ++i) transitions += crowd.character(i).stats().transitions;
  EXPECT_GT(transitions, kCharacters);  // the projections did change the playing states
}

// Number of characters of `crowd` whose search counter moved in the last update, given the
// counters before it.
int searched_now(const DatabaseCrowd& crowd, std::vector<int>& before) {
  int n = 0;
  for (int i = 0; i < crowd.size(); ++i) {
    n += crowd.character(i).stats().searches != before[size_t(i)] ? 1 : 0;
    before[size_t(i)] = crowd.character(i).stats().searches;
  }
  return n;
}

// Starts a learned and a database crowd of kCharacters with default settings (one worker).
void start_both(const Assets& assets, LearnedCrowd& learned, DatabaseCrowd& matched) {
  std::string error;
  ASSERT_TRUE(learned.init(assets.model, LearnedSettings{}, kCharacters, 1, error)) << error;
  ASSERT_TRUE(matched.init(assets.db, assets.search, CharacterSettings{}, kCharacters, error)) << error;
}

}  // namespace

TEST(Crowd, LearnedCrowdEqualsCharactersUpdatedOneByOneBitForBit) {
  const Assets assets;
  ASSERT_NE(assets.model, nullptr);
  for (LearnedTransition mode : {LearnedTransition::LatentBlend, LearnedTransition::Inertialize}) {
    LearnedSettings settings;
    settings.transition = mode;
    SCOPED_TRACE(mode == LearnedTransition::LatentBlend ? "latent blend" : "inertialize");
    expect_learned_crowd_equals_alone(assets, settings);
  }
}

TEST(Crowd, DatabaseCrowdEqualsCharactersUpdatedOneByOneBitForBit) {
  const Assets assets;
  ASSERT_NE(assets.db, nullptr);
  DatabaseCrowd crowd;
  std::string error;
  ASSERT_TRUE(crowd.init(assets.db, assets.search, CharacterSettings{}, kCharacters, error)) << error;
  std::vector<DatabaseCharacter> alone(kCharacters);
  for (int i = 0; i < kCharacters; ++i) {
    ASSERT_TRUE(alone[size_t(i)].init(assets.db, assets.search, crowd_character_settings(CharacterSettings{}, i),
                                      start_of(i), 0.1f * i, error));
    crowd.character(i).reset(start_of(i), 0.1f * i);
  }
  for (int f = 0; f < kFrames; ++f) {
    for (int i = 0; i < kCharacters; ++i) crowd.set_input(i, input_of(i, f));
    std::thread second([&] { crowd.update(kCharacters / 3, kCharacters, dt_of(f)); });
    crowd.update(0, kCharacters / 3, dt_of(f));
    second.join();
    for (int i = 0; i < kCharacters; ++i) {
      alone[size_t(i)].update(input_of(i, f), dt_of(f));
      ASSERT_NO_FATAL_FAILURE(expect_same(crowd.character(i), alone[size_t(i)], i, f));
    }
  }
}

TEST(Crowd, SearchesSpreadOverTheSearchInterval) {
  const Assets assets;
  ASSERT_NE(assets.db, nullptr);
  CharacterSettings settings;
  settings.search_interval = 0.1f;  // 6 updates at 60 Hz
  DatabaseCrowd crowd;
  std::string error;
  ASSERT_TRUE(crowd.init(assets.db, assets.search, settings, kCharacters, error)) << error;
  std::vector<int> before(kCharacters, 0);
  int most = 0, total = 0;
  for (int f = 0; f < 60; ++f) {  // a steady stick: no forced searches
    for (int i = 0; i < kCharacters; ++i) crowd.set_input(i, input_of(0, 0));
    crowd.update(1.0f / 60.0f);
    const int n = searched_now(crowd, before);
    if (f > 0) most = std::max(most, n);
    total += n;
  }
  // One search per character per 6 updates on average; every character on one frame would
  // be 150 (as with search_phase 0 for all).
  EXPECT_GE(total, 60 / 6 * kCharacters * 9 / 10);
  EXPECT_LE(most, 2 * kCharacters / 6);
}

// Character i is shown `elapsed` seconds after its last update: its root carried on along the
// ground at its root velocity and turned at its yaw rate (nothing moved when elapsed is 0).
void expect_shown_move(const LearnedCrowd& crowd, int i, float elapsed) {
  const LearnedCharacter& c = crowd.character(i);
  const GroundMove move = crowd.shown_move(i);
  const Vec3 root = c.root_position(), velocity = c.root_velocity(), ahead = move.point(root);
  EXPECT_NEAR(ahead.x, root.x + velocity.x * elapsed, 1e-5f) << "character " << i;
  EXPECT_FLOAT_EQ(ahead.y, root.y) << "character " << i;
  EXPECT_NEAR(ahead.z, root.z + velocity.z * elapsed, 1e-5f) << "character " << i;
  const Vec3 facing = rotate(move.turn, Vec3{0.0f, 0.0f, 1.0f});
  const float yaw = c.root_angular_velocity().y * elapsed;
  EXPECT_NEAR(facing.x, std::sin(yaw), 1e-5f) << "character " << i;
  EXPECT_NEAR(facing.z, std::cos(yaw), 1e-5f) << "character " << i;
}

TEST(Crowd, RateDivisorsEqualUpdatesWithTheSummedDtAndAreShownMovedOn) {
  const Assets assets;
  LearnedCrowd crowd;
  std::string error;
  ASSERT_TRUE(crowd.init(assets.model, LearnedSettings{}, 12, 1, error)) << error;
  std::vector<LearnedCharacter> alone(12);
  std::vector<float> pending(12, 0.0f);
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(alone[size_t(i)].init(assets.model, crowd_character_settings(LearnedSettings{}, i), Vec3{}, 0.0f, error));
    crowd.set_rate_divisor(i, 1 << (i % 3));  // 1, 2 and 4
  }
  std::vector<int> updates_on(12, 0);
  for (int f = 0; f < 40; ++f) {
    for (int i = 0; i < 12; ++i) crowd.set_input(i, input_of(i, f));
    crowd.update(dt_of(f));
    for (int i = 0; i < 12; ++i) {
      pending[size_t(i)] += dt_of(f);
      // Character i of divisor d updates on the frames where (i + f + 1) is a multiple of d.
      if ((i + f + 1) % crowd.rate_divisor(i) != 0) continue;
      alone[size_t(i)].update(input_of(i, f), pending[size_t(i)]);
      pending[size_t(i)] = 0.0f;
      ++updates_on[size_t(i)];
    }
    for (int i = 0; i < 12; ++i) {
      ASSERT_NO_FATAL_FAILURE(expect_same(crowd.character(i), alone[size_t(i)], i, f));
      ASSERT_NO_FATAL_FAILURE(expect_shown_move(crowd, i, pending[size_t(i)]));
    }
  }
  EXPECT_EQ(crowd.character(0).stats().updates, 40);
  EXPECT_EQ(crowd.character(1).stats().updates, 20);
  EXPECT_EQ(crowd.character(2).stats().updates, 10);
}

TEST(Crowd, PrioritiesOrderTheUpdatesAndADeadlineDefersTheRestToTheNextCall) {
  const Assets assets;
  LearnedCrowd crowd;
  DatabaseCrowd matched;
  ASSERT_NO_FATAL_FAILURE(start_both(assets, crowd, matched));
  std::string error;
  std::vector<float> priority(kCharacters);
  for (int i = 0; i < kCharacters; ++i) priority[size_t(i)] = float(i % 50);  // ties keep index order
  ASSERT_TRUE(crowd.set_priorities(priority.data(), kCharacters));
  ASSERT_TRUE(matched.set_priorities(priority.data(), kCharacters));
  EXPECT_EQ(crowd.ranked(0), 49);
  EXPECT_EQ(crowd.ranked(1), 99);
  EXPECT_EQ(crowd.ranked(kCharacters - 1), 100);
  std::vector<LearnedCharacter> alone(kCharacters);
  for (int i = 0; i < kCharacters; ++i) {
    ASSERT_TRUE(alone[size_t(i)].init(assets.model, crowd_character_settings(LearnedSettings{}, i), Vec3{}, 0.0f, error));
  }
  // A deadline already past: only the first group (by priority) updates, the rest wait.
  const float dt1 = 1.0f / 60.0f, dt2 = 1.0f / 45.0f;
  crowd.update(0, kCharacters, dt1, 0, LearnedCrowd::Clock::now());
  matched.update(0, kCharacters, dt1, DatabaseCrowd::Clock::now());
  for (int r = 0; r < kCharacters; ++r) {
    const int i = crowd.ranked(r);
    const bool first_group = r < LearnedCrowd::kDeadlineGroup;
    EXPECT_EQ(crowd.character(i).stats().updates, first_group ? 1 : 0) << "rank " << r;
    EXPECT_EQ(crowd.deferrals(i), first_group ? 0 : 1) << "rank " << r;
    EXPECT_EQ(matched.character(i).stats().updates, first_group ? 1 : 0) << "rank " << r;
    if (first_group) alone[size_t(i)].update(GamepadInput{}, dt1);
  }
  // The next call makes the deferred updates up with the summed dt.
  crowd.update(dt2);
  for (int i = 0; i < kCharacters; ++i) {
    const bool deferred = crowd.deferrals(i) > 0;
    alone[size_t(i)].update(GamepadInput{}, deferred ? 0.0f + dt1 + dt2 : dt2);
    ASSERT_NO_FATAL_FAILURE(expect_same(crowd.character(i), alone[size_t(i)], i, 1));
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  priority[3] = nan;
  EXPECT_FALSE(crowd.set_priorities(priority.data(), kCharacters));
  EXPECT_FALSE(crowd.set_priorities(priority.data(), kCharacters - 1));
  EXPECT_EQ(crowd.ranked(0), 49);  // unchanged
}

TEST(Crowd, UpdatesAllocateNothing) {
  const Assets assets;
  LearnedCrowd learned;
  DatabaseCrowd matched;
  ASSERT_NO_FATAL_FAILURE(start_both(assets, learned, matched));
  std::vector<float> priority(kCharacters);
  for (int i = 0; i < kCharacters; ++i) {
    learned.set_rate_divisor(i, 1 + i % 3);
    priority[size_t(i)] = float((i * 37) % 11);
  }
  test::start_counting_allocations();
  ASSERT_TRUE(learned.set_priorities(priority.data(), kCharacters));
  for (int f = 0; f < 60; ++f) {
    for (int i = 0; i < kCharacters; ++i) {
      learned.set_input(i, input_of(i, f));
      matched.set_input(i, input_of(i, f));
    }
    learned.update(0, kCharacters, dt_of(f), 0, f % 2 ? LearnedCrowd::Clock::now() : LearnedCrowd::kNoDeadline);
    matched.update(0, kCharacters, dt_of(f), f % 2 ? DatabaseCrowd::Clock::now() : DatabaseCrowd::kNoDeadline);
  }
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}

TEST(Crowd, RejectsEmptyCrowdsAndNamesTheCause) {
  const Assets assets;
  LearnedCrowd learned;
  std::string error;
  EXPECT_FALSE(learned.init(assets.model, LearnedSettings{}, 0, 1, error));
  EXPECT_NE(error.find("at least 1 character"), std::string::npos) << error;
  EXPECT_FALSE(learned.init(nullptr, LearnedSettings{}, 4, 1, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
}
