// Crowds: a crowd's characters equal the same characters updated one by one, bit for bit
// (learned crowds batch their networks across characters, in blocks, on two threads); searches
// spread over the interval; rate divisors and deadline deferrals equal updates with the summed
// dt, and characters between updates are shown moved on by their root velocity; priorities order the updates; no allocation;
// timing sums per worker.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <thread>

#include "lmm/blob_writer.hpp"
#include "lmm/character/crowd.hpp"
#include "lmm/lmm.h"
#include "support/allocation_counter.hpp"
#include "support/crowd_assets.hpp"

using namespace lmm;
using lmm::test::AssetFiles;
using lmm::test::Assets;

namespace {

constexpr int kCharacters = LearnedCrowd::kBlock + 40;  // more than one block
constexpr int kFrames = 120;

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

// Character i's tag constraint from frame f on (bits of test::kSyntheticTags), set by
// expect_learned_crowd_equals_alone every 40 frames when it constrains: none, require, exclude.
TagConstraint constraint_of(int i, int f) {
  const TagMask calm = 1;
  switch ((i + f / 40) % 3) {
    case 1: return TagConstraint{calm, 0, 0};
    case 2: return TagConstraint{0, 0, calm};
    default: return TagConstraint{};
  }
}

// Runs `crowd` on two threads (two workers, two ranges) and `alone` one by one for kFrames
// with the same inputs (and with `constrained` the same per-character constraint_of); every pose
// equal after every frame.
void expect_learned_crowd_equals_alone(const std::shared_ptr<const Model>& model, const LearnedSettings& settings,
                                       bool constrained = false) {
  LearnedCrowd crowd;
  std::string error;
  ASSERT_TRUE(crowd.init(model, settings, kCharacters, 2, error)) << error;
  std::vector<LearnedCharacter> alone(kCharacters);
  for (int i = 0; i < kCharacters; ++i) {
    ASSERT_TRUE(alone[size_t(i)].init(model, crowd_character_settings(settings, i), start_of(i), 0.1f * i, error));
    crowd.character(i).reset(start_of(i), 0.1f * i);
  }
  const int split = 20;  // the second range spans more than one block
  for (int f = 0; f < kFrames; ++f) {
    for (int i = 0; constrained && f % 40 == 0 && i < kCharacters; ++i) {
      crowd.character(i).set_constraint(constraint_of(i, f));
      alone[size_t(i)].set_constraint(constraint_of(i, f));
    }
    for (int i = 0; i < kCharacters; ++i) crowd.set_input(i, input_of(i, f));
    std::thread second([&] { crowd.update(split, kCharacters, dt_of(f), 1); });
    crowd.update(0, split, dt_of(f), 0);
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
    expect_learned_crowd_equals_alone(assets.model, settings);
  }
}

TEST(Crowd, LearnedCrowdMembersTakeTheirOwnConstraintsInTheBatch) {
  std::string error;
  const AlignedBuffer bytes = lmm::test::aligned_copy(lmm::test::synthetic_bundle(lmm::test::tagged_model_values(4, 21, -0.03f), false, error));
  const std::shared_ptr<const Model> model = Model::load_buffer(bytes.data(), bytes.size(), error);
  ASSERT_NE(model, nullptr) << error;
  expect_learned_crowd_equals_alone(model, LearnedSettings{}, true);
  LearnedCrowd crowd;
  ASSERT_TRUE(crowd.init(model, LearnedSettings{}, 3, 1, error)) << error;
  for (int i = 0; i < 3; ++i) crowd.character(i).set_constraint(constraint_of(i, 0));
  int held = 0, constraint_searches = 0;
  for (int f = 0; f < 120; ++f) {
    crowd.update(1.0f / 60.0f);
    for (int i = 0; i < 3; ++i) held += crowd.character(i).constraint_held() ? 1 : 0;
  }
  for (int i = 0; i < 3; ++i) constraint_searches += crowd.character(i).stats().constraint_searches;
  EXPECT_EQ(held, 360);
  EXPECT_GT(constraint_searches, 2);  // the stepper lowers calm: the required one is re-projected
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

// Issue 40: a rate divisor that sums more than the largest step (kMaxDt) used to lose the rest
// (a character clamps its dt); the crowd now takes the summed dt in equal steps.
template <typename Crowd, typename Character, typename Init>
void expect_summed_dt_sub_stepped(const Init& init_both) {
  Crowd crowd;
  std::vector<Character> alone(5);
  ASSERT_NO_FATAL_FAILURE(init_both(crowd, alone));
  const float dt = 1.0f / 30.0f;
  for (int i = 0; i < 5; ++i) crowd.set_rate_divisor(i, LearnedCrowd::kMaxRateDivisor);
  std::vector<float> pending(5, 0.0f);
  GamepadInput forward;
  forward.left_y = 1.0f;
  for (int f = 0; f < 64; ++f) {
    for (int i = 0; i < 5; ++i) crowd.set_input(i, forward);
    crowd.update(dt);
    for (int i = 0; i < 5; ++i) {
      pending[size_t(i)] += dt;
      if ((i + f + 1) % LearnedCrowd::kMaxRateDivisor != 0) continue;
      const int steps = int(std::ceil(pending[size_t(i)] / kMaxDt));  // 2 or 3: 15 or 16 frames at 30 Hz
      for (int s = 0; s < steps; ++s) alone[size_t(i)].update(forward, pending[size_t(i)] / float(steps));
      pending[size_t(i)] = 0.0f;
    }
    for (int i = 0; i < 5; ++i) ASSERT_NO_FATAL_FAILURE(expect_same(crowd.character(i), alone[size_t(i)], i, f));
  }
  EXPECT_EQ(crowd.character(0).stats().updates, 3 * 4);  // 0.53 s in 3 steps, 4 times
}

TEST(Crowd, RateDivisorsTakeASummedDtOverTheLargestStepInEqualSteps) {
  const Assets assets;
  std::string error;
  expect_summed_dt_sub_stepped<LearnedCrowd, LearnedCharacter>([&](LearnedCrowd& crowd, auto& alone) {
    ASSERT_TRUE(crowd.init(assets.model, LearnedSettings{}, 5, 1, error)) << error;
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(alone[size_t(i)].init(assets.model, crowd_character_settings(LearnedSettings{}, i), Vec3{}, 0.0f, error));
    }
  });
  expect_summed_dt_sub_stepped<DatabaseCrowd, DatabaseCharacter>([&](DatabaseCrowd& crowd, auto& alone) {
    ASSERT_TRUE(crowd.init(assets.db, assets.search, CharacterSettings{}, 5, error)) << error;
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(alone[size_t(i)].init(assets.db, assets.search, crowd_character_settings(CharacterSettings{}, i),
                                        Vec3{}, 0.0f, error));
    }
  });
}

TEST(Crowd, ANonFiniteDtIsATinyStepAndKeepsTheShownMoveFinite) {
  const Assets assets;
  LearnedCrowd crowd;
  std::string error;
  ASSERT_TRUE(crowd.init(assets.model, LearnedSettings{}, 4, 1, error)) << error;
  LearnedCharacter alone;
  ASSERT_TRUE(alone.init(assets.model, crowd_character_settings(LearnedSettings{}, 0), Vec3{}, 0.0f, error));
  for (int i = 0; i < 4; ++i) crowd.set_rate_divisor(i, 2);
  for (float dt : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -1.0f, 0.1f}) {
    crowd.update(dt);
    crowd.update(dt);
    alone.update(GamepadInput{}, std::isfinite(dt) && dt > 0.0f ? 2.0f * dt : 0.0f);
    for (int i = 0; i < 4; ++i) {
      const GroundMove move = crowd.shown_move(i);
      EXPECT_TRUE(is_finite(move.from) && is_finite(move.to) && std::isfinite(move.turn.w)) << "dt " << dt;
    }
    ASSERT_NO_FATAL_FAILURE(expect_same(crowd.character(0), alone, 0, 0));
  }
}

// Issue 40: calls whose ranks overlap, or that share a learned crowd's worker, raced each other;
// now the later one is refused. Two threads call again and again until one is refused.
template <typename Update>
void expect_overlap_refused(const Update& update_a, const Update& update_b) {
  std::atomic<bool> refused{false};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const auto until_refused = [&](const Update& update) {
    while (!refused && std::chrono::steady_clock::now() < give_up) {
      if (!update()) refused = true;
    }
  };
  std::thread other([&] { until_refused(update_b); });
  until_refused(update_a);
  other.join();
  EXPECT_TRUE(refused);
}

TEST(Crowd, OverlappingRangesAndAWorkerInUseAreRefused) {
  const Assets assets;
  LearnedCrowd learned;
  DatabaseCrowd matched;
  std::string error;
  ASSERT_TRUE(learned.init(assets.model, LearnedSettings{}, kCharacters, 2, error)) << error;
  ASSERT_TRUE(matched.init(assets.db, assets.search, CharacterSettings{}, kCharacters, error)) << error;
  using Update = std::function<bool()>;
  const float dt = 1.0f / 60.0f;
  expect_overlap_refused<Update>([&] { return learned.update(0, 300, dt, 0); },
                                 [&] { return learned.update(200, kCharacters, dt, 1); });
  expect_overlap_refused<Update>([&] { return learned.update(0, 200, dt, 0); },
                                 [&] { return learned.update(200, kCharacters, dt, 0); });
  expect_overlap_refused<Update>([&] { return matched.update(0, 300, dt); },
                                 [&] { return matched.update(100, 400, dt); });
  EXPECT_TRUE(learned.update(0, 200, dt, 0));  // claims end with their calls
  EXPECT_TRUE(learned.update(100, 300, dt, 0));
  EXPECT_FALSE(learned.update(0, 10, dt, 2));  // two workers only
  for (int i = 0; i < kCharacters; ++i) EXPECT_TRUE(is_finite(learned.character(i).root_position()));
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
  EXPECT_EQ(crowd.ranked(kCharacters - 1), (kCharacters - 1) / 50 * 50);  // the last of priority 0
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

TEST(Crowd, TimingSumsEachWorkersUpdatesAndTheirNetworkCallsWhileOn) {
  const Assets assets;
  LearnedCrowd learned;
  std::string error;
  ASSERT_TRUE(learned.init(assets.model, LearnedSettings{}, kCharacters, 2, error)) << error;
  const int half = kCharacters / 2;
  auto update_both_halves = [&](int frames) {
    for (int f = 0; f < frames; ++f) {
      learned.update(0, half, dt_of(f), 0);
      learned.update(half, kCharacters, dt_of(f), 1);
    }
  };
  auto expect_sums = [&](int w, const CrowdTiming& expected) {
    const CrowdTiming t = learned.timing(w);
    EXPECT_EQ(t.character_updates, expected.character_updates) << "worker " << w;
    EXPECT_EQ(t.update_seconds, expected.update_seconds) << "worker " << w;
    EXPECT_EQ(t.network_seconds, expected.network_seconds) << "worker " << w;
  };
  update_both_halves(3);  // timing off: nothing summed
  for (int w = 0; w < 2; ++w) expect_sums(w, CrowdTiming{});
  learned.set_timing(true);
  update_both_halves(5);
  learned.set_timing(false);
  const int counts[] = {half, kCharacters - half};
  CrowdTiming on[2];
  for (int w = 0; w < 2; ++w) {
    on[w] = learned.timing(w);
    EXPECT_EQ(on[w].character_updates, 5 * counts[w]) << "worker " << w;
    EXPECT_GT(on[w].network_seconds, 0.0) << "worker " << w;
    EXPECT_LT(on[w].network_seconds, on[w].update_seconds) << "worker " << w;
  }
  update_both_halves(2);  // off again: the sums stay
  for (int w = 0; w < 2; ++w) expect_sums(w, on[w]);
  expect_sums(2, CrowdTiming{});  // no such worker
  learned.set_timing(true);  // switching on starts the sums again
  for (int w = 0; w < 2; ++w) expect_sums(w, CrowdTiming{});
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

// The C API's crowds (lmm/lmm.h), which load their assets from files.
namespace {

constexpr float kDt = 1.0f / 60.0f;

lmm_gamepad gamepad_of(const GamepadInput& in) {
  lmm_gamepad g{};
  g.left_x = in.left_x, g.left_y = in.left_y, g.gait = in.gait;
  return g;
}

// Character i of `c_crowd` has the world pose of `character`, bit for bit.
template <typename Character>
void expect_same_pose(lmm_crowd* c_crowd, int i, const Character& character, int f) {
  const size_t joints = character.global_positions().size();
  std::vector<float> positions(3 * joints), rotations(4 * joints);
  ASSERT_EQ(lmm_character_world_transforms(lmm_crowd_character(c_crowd, size_t(i)), positions.data(), rotations.data(),
                                           joints),
            1)
      << lmm_last_error();
  for (size_t j = 0; j < joints; ++j) {
    const Vec3 p = character.global_positions()[j];
    const Quat q = character.global_rotations()[j];
    ASSERT_TRUE(positions[3 * j] == p.x && positions[3 * j + 1] == p.y && positions[3 * j + 2] == p.z &&
                rotations[4 * j] == q.x && rotations[4 * j + 1] == q.y && rotations[4 * j + 2] == q.z &&
                rotations[4 * j + 3] == q.w)
        << "character " << i << " joint " << j << " frame " << f;
  }
}

// Runs `c_crowd` and `crowd` (both of `n` characters) for 60 frames with the same inputs, rate
// divisors 1-3, priorities and two ranges (two workers when learned); every pose equal.
template <typename Crowd, typename Update>
void expect_c_crowd_equals(lmm_crowd* c_crowd, Crowd& crowd, int n, int workers, const Update& update) {
  ASSERT_EQ(lmm_crowd_size(c_crowd), size_t(n));
  std::vector<float> priority(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(lmm_character_reset(lmm_crowd_character(c_crowd, size_t(i)), start_of(i).x, start_of(i).z, 0.1f * i), 1);
    crowd.character(i).reset(start_of(i), 0.1f * i);
    ASSERT_EQ(lmm_crowd_set_rate_divisor(c_crowd, size_t(i), 1 + i % 3), 1);
    crowd.set_rate_divisor(i, 1 + i % 3);
    priority[size_t(i)] = float((i * 37) % 11);
  }
  ASSERT_EQ(lmm_crowd_set_priorities(c_crowd, priority.data(), size_t(n)), 1);
  ASSERT_TRUE(crowd.set_priorities(priority.data(), n));
  const int half = n / 2 + 1;
  for (int f = 0; f < 60; ++f) {
    for (int i = 0; i < n; ++i) {
      const lmm_gamepad g = gamepad_of(input_of(i, f));
      ASSERT_EQ(lmm_crowd_set_input(c_crowd, size_t(i), &g), 1);
      crowd.set_input(i, input_of(i, f));
    }
    ASSERT_EQ(lmm_crowd_update(c_crowd, 0, size_t(half), dt_of(f), 0, 0.0), 1) << lmm_last_error();
    ASSERT_EQ(lmm_crowd_update(c_crowd, size_t(half), size_t(n), dt_of(f), workers - 1, 0.0), 1) << lmm_last_error();
    update(crowd, 0, half, dt_of(f), 0);
    update(crowd, half, n, dt_of(f), workers - 1);
    for (int i = 0; i < n; ++i) ASSERT_NO_FATAL_FAILURE(expect_same_pose(c_crowd, i, crowd.character(i), f));
  }
}

}  // namespace

TEST(CrowdCApi, CrowdsGiveTheCppCrowdsPosesBitForBit) {
  const Assets assets;
  const AssetFiles files;
  lmm_model* model = lmm_model_load(files.model.c_str());
  lmm_database* db = lmm_database_load(files.db.c_str());
  ASSERT_TRUE(model != nullptr && db != nullptr) << lmm_last_error();
  lmm_crowd* c_learned = lmm_crowd_create_learned(model, kCharacters, 2);
  lmm_crowd* c_matched = lmm_crowd_create_database(db, 40);
  ASSERT_TRUE(c_learned != nullptr && c_matched != nullptr) << lmm_last_error();
  lmm_model_release(model);  // the crowds keep their assets alive
  lmm_database_release(db);
  LearnedCrowd learned;
  DatabaseCrowd matched;
  std::string error;
  ASSERT_TRUE(learned.init(assets.model, LearnedSettings{}, kCharacters, 2, error)) << error;
  ASSERT_TRUE(matched.init(assets.db, assets.search, CharacterSettings{}, 40, error)) << error;
  expect_c_crowd_equals(c_learned, learned, kCharacters, 2,
                        [](LearnedCrowd& c, int b, int e, float dt, int w) { c.update(b, e, dt, w); });
  expect_c_crowd_equals(c_matched, matched, 40, 1,
                        [](DatabaseCrowd& c, int b, int e, float dt, int) { c.update(b, e, dt); });
  lmm_crowd_release(c_learned);
  lmm_crowd_release(c_matched);
}

TEST(CrowdCApi, ShownTransformIsTheShownMoveAndBadCallsNameTheCause) {
  const Assets assets;
  const AssetFiles files;
  lmm_model* model = lmm_model_load(files.model.c_str());
  ASSERT_NE(model, nullptr) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_create_learned(model, 0, 1), nullptr);
  EXPECT_NE(std::string(lmm_last_error()).find("not 0"), std::string::npos) << lmm_last_error();
  lmm_crowd* crowd = lmm_crowd_create_learned(model, 8, 2);
  lmm_model_release(model);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  LearnedCrowd same;
  std::string error;
  ASSERT_TRUE(same.init(assets.model, LearnedSettings{}, 8, 1, error)) << error;
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(lmm_crowd_set_rate_divisor(crowd, size_t(i), 4), 1);
    same.set_rate_divisor(i, 4);
  }
  for (int f = 0; f < 30; ++f) {
    const lmm_gamepad forward = gamepad_of(input_of(0, 0));
    for (int i = 0; i < 8; ++i) {
      lmm_crowd_set_input(crowd, size_t(i), &forward);
      same.set_input(i, input_of(0, 0));
    }
    ASSERT_EQ(lmm_crowd_update(crowd, 0, 8, kDt, 1, 0.0), 1);
    same.update(kDt);
  }
  for (int i = 0; i < 8; ++i) {  // two of the eight updated on the last frame, six are between updates
    float m[16];
    ASSERT_EQ(lmm_crowd_shown_transform(crowd, size_t(i), m), 1);
    const Vec3 root = same.character(i).root_position(), expected = same.shown_move(i).point(root);
    EXPECT_NEAR(m[0] * root.x + m[4] * root.y + m[8] * root.z + m[12], expected.x, 1e-5f) << i;
    EXPECT_NEAR(m[1] * root.x + m[5] * root.y + m[9] * root.z + m[13], expected.y, 1e-5f) << i;
    EXPECT_NEAR(m[2] * root.x + m[6] * root.y + m[10] * root.z + m[14], expected.z, 1e-5f) << i;
  }
  const auto error_has = [](const char* text) { return std::string(lmm_last_error()).find(text) != std::string::npos; };
  EXPECT_EQ(lmm_crowd_update(crowd, 0, 8, kDt, 2, 0.0), 0);
  EXPECT_TRUE(error_has("worker 2 is outside 0..1")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_update(crowd, 0, 8, kDt, 0, std::nan("")), 0);
  EXPECT_TRUE(error_has("NaN")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_character(crowd, 8), nullptr);
  EXPECT_TRUE(error_has("no character 8 in a crowd of 8")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_set_rate_divisor(crowd, 0, 17), 0);
  EXPECT_TRUE(error_has("rate divisor 17 is outside 1..16")) << lmm_last_error();
  const float priorities[8] = {1, 2, 3, std::nanf(""), 5, 6, 7, 8};
  EXPECT_EQ(lmm_crowd_set_priorities(crowd, priorities, 7), 0);
  EXPECT_TRUE(error_has("7 priorities for a crowd of 8")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_set_priorities(crowd, priorities, 8), 0);
  EXPECT_TRUE(error_has("NaN")) << lmm_last_error();
  lmm_character* member = lmm_crowd_character(crowd, 3);
  const lmm_gamepad still{};
  EXPECT_EQ(lmm_character_update(member, &still, kDt), 0);
  EXPECT_TRUE(error_has("belongs to a crowd")) << lmm_last_error();
  lmm_character_release(member);  // ignored: the crowd owns it
  EXPECT_EQ(lmm_crowd_update(crowd, 0, 8, kDt, 0, 0.001), 1);
  EXPECT_EQ(lmm_character_joint_count(member), assets.model->skeleton().joint_count());
  lmm_crowd_release(crowd);
}
