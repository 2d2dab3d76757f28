// Crowd soak (formerly `lmm-bench crowd --soak`): a learned and a database crowd over the synthetic
// crowd assets run seconds of game time at 60 Hz on two threads, each thread updating its own
// range, following lmm-sim's random input scripts (half of them with strafe requests). No pose
// may turn non-finite and no per-frame call (inputs, updates, pose reads) may allocate.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "lmm/character/crowd.hpp"
#include "lmm/engines/simulation.hpp"
#include "support/allocation_counter.hpp"
#include "support/crowd_assets.hpp"

using namespace lmm;
using lmm::pipeline::InputScript;
using lmm::test::Assets;

namespace {

constexpr int kCharacters = 64;
constexpr int kThreads = 2;
constexpr float kSeconds = 10.0f;  // of game time
constexpr float kDt = 1.0f / 60.0f;

// What a soak counted.
struct SoakCounts {
  int nonfinite_poses = 0;  // (character, frame) pairs with a non-finite joint position
  long allocations = 0;     // heap allocations while the threads ran their frames
  int transitions = 0;      // over all characters, to show that the characters did move
};

// A random input script per character (every second one with strafe requests).
std::vector<InputScript> random_scripts() {
  std::vector<InputScript> scripts;
  for (int i = 0; i < kCharacters; ++i) {
    scripts.push_back(pipeline::random_input_script(uint32_t(i), kSeconds, i % 2 == 1));
  }
  return scripts;
}

// True when every global joint position of `c` is finite.
template <typename Character>
bool pose_is_finite(const Character& c) {
  for (const Vec3& p : c.global_positions()) {
    if (!is_finite(p)) return false;
  }
  return true;
}

// One update of ranks [begin, end) with worker scratch `worker`.
void update_range(LearnedCrowd& crowd, int begin, int end, int worker) { crowd.update(begin, end, kDt, worker); }
// One update of ranks [begin, end) (database crowds need no worker).
void update_range(DatabaseCrowd& crowd, int begin, int end, int) { crowd.update(begin, end, kDt); }

// Runs thread t's range of `crowd` (ranks, which are indices: no priorities are set) for the
// whole soak, checking every pose after every frame; returns the number of non-finite poses.
template <typename Crowd>
int run_range(Crowd& crowd, const std::vector<InputScript>& scripts, int t) {
  const int begin = kCharacters * t / kThreads, end = kCharacters * (t + 1) / kThreads;
  int nonfinite = 0;
  for (int f = 0; f < int(kSeconds / kDt); ++f) {
    for (int i = begin; i < end; ++i) crowd.set_input(i, scripts[size_t(i)].at(float(f) * kDt));
    update_range(crowd, begin, end, t);
    for (int i = begin; i < end; ++i) nonfinite += pose_is_finite(crowd.character(i)) ? 0 : 1;
  }
  return nonfinite;
}

// Soaks `crowd` on kThreads threads (this one and helpers started before counting begins).
template <typename Crowd>
SoakCounts soak(Crowd& crowd, const std::vector<InputScript>& scripts) {
  std::atomic<bool> go{false};
  std::vector<int> nonfinite(size_t(kThreads), 0);
  std::vector<std::thread> helpers;
  for (int t = 1; t < kThreads; ++t) {
    helpers.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      nonfinite[size_t(t)] = run_range(crowd, scripts, t);
    });
  }
  SoakCounts counts;
  test::start_counting_allocations();
  go.store(true);
  nonfinite[0] = run_range(crowd, scripts, 0);
  for (std::thread& h : helpers) h.join();
  counts.allocations = test::stop_counting_allocations();
  for (int n : nonfinite) counts.nonfinite_poses += n;
  for (int i = 0; i < crowd.size(); ++i) counts.transitions += crowd.character(i).stats().transitions;
  return counts;
}

// Soaks `crowd` (kCharacters characters, just started) from a grid of start points 2 m apart:
// no non-finite pose, no allocation, and the characters did change motion.
template <typename Crowd>
void expect_clean_soak(Crowd& crowd) {
  for (int i = 0; i < crowd.size(); ++i) {
    crowd.character(i).reset(Vec3{2.0f * float(i % 8), 0.0f, 2.0f * float(i / 8)}, 0.1f * float(i));
  }
  const SoakCounts counts = soak(crowd, random_scripts());
  EXPECT_EQ(counts.nonfinite_poses, 0);
  EXPECT_EQ(counts.allocations, 0);
  EXPECT_GT(counts.transitions, kCharacters);
}

// Starts a learned crowd of kCharacters over the assets' bundle, one worker per thread.
bool start(LearnedCrowd& crowd, const Assets& assets, std::string& error) {
  return crowd.init(assets.model, LearnedSettings{}, kCharacters, kThreads, error);
}
// Starts a database crowd of kCharacters over the assets' database.
bool start(DatabaseCrowd& crowd, const Assets& assets, std::string& error) {
  return crowd.init(assets.db, assets.search, CharacterSettings{}, kCharacters, error);
}

// Starts a Crowd over the synthetic crowd assets and soaks it (expect_clean_soak).
template <typename Crowd>
void soak_a_new_crowd() {
  const Assets assets;
  Crowd crowd;
  std::string error;
  ASSERT_TRUE(start(crowd, assets, error)) << error;
  expect_clean_soak(crowd);
}

}  // namespace

TEST(CrowdSoak, LearnedCrowdKeepsItsPosesFiniteAndAllocatesNothing) { soak_a_new_crowd<LearnedCrowd>(); }

TEST(CrowdSoak, DatabaseCrowdKeepsItsPosesFiniteAndAllocatesNothing) { soak_a_new_crowd<DatabaseCrowd>(); }
