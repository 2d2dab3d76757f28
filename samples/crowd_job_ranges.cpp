// A crowd on job ranges: 256 learned characters over one model (lmm::LearnedCrowd), updated every
// frame by several threads, each taking a disjoint range of the crowd with its own worker scratch,
// as an engine's job system would. The crowd evaluates each range's networks in batches, and every
// character ends up exactly where it would have gone updated alone. The program prints a few
// characters' roots after 10 s and the time a frame took.
// Usage: crowd_job_ranges MODEL.lmmw [THREADS]
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lmm/character/crowd.hpp"

namespace {

constexpr int kCharacters = 256;

// Where character i starts: on a grid of 16 columns, 2 m apart.
lmm::Vec3 start_of(int i) { return lmm::Vec3{float(i % 16) * 2.0f, 0.0f, float(i / 16) * 2.0f}; }

// Character i's stick: walking away from the grid's centre, each at its own angle and gait.
lmm::GamepadInput stick_of(int i) {
  const float angle = float(i) * 2.39996f;  // the golden angle: directions spread evenly
  lmm::GamepadInput input;
  input.left_x = std::sin(angle), input.left_y = std::cos(angle);
  input.gait = float(i % 3) * 0.5f;  // walk, jog, run
  return input;
}

// Updates `crowd` by dt on `threads` threads, thread k taking ranks [begin_k, end_k) with worker
// k; false when any range was refused. A game would hand these jobs to its job system instead.
bool update_on_threads(lmm::LearnedCrowd& crowd, int threads, float dt) {
  std::atomic<bool> ok{true};
  std::vector<std::thread> jobs;
  for (int k = 0; k < threads; ++k) {
    const int begin = crowd.size() * k / threads, end = crowd.size() * (k + 1) / threads;
    jobs.emplace_back([&crowd, &ok, begin, end, k, dt] {
      if (!crowd.update(begin, end, dt, /*worker=*/k)) ok = false;  // no allocation
    });
  }
  for (std::thread& job : jobs) job.join();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s MODEL.lmmw [THREADS (default 4)]\n", argv[0]);
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  if (threads < 1 || threads > kCharacters) {
    std::fprintf(stderr, "crowd_job_ranges: THREADS must be 1 to %d\n", kCharacters);
    return 2;
  }
  std::string error;
  const std::shared_ptr<const lmm::Model> model = lmm::Model::load_file(argv[1], error);
  lmm::LearnedCrowd crowd;  // one set of batch scratch ("worker") per thread updating at once
  if (model == nullptr || !crowd.init(model, lmm::LearnedSettings{}, kCharacters, threads, error)) {
    std::fprintf(stderr, "crowd_job_ranges: %s\n", error.c_str());
    return 1;
  }
  for (int i = 0; i < crowd.size(); ++i) {  // place the characters, give them their sticks
    crowd.character(i).reset(start_of(i), 0.0f);
    crowd.set_input(i, stick_of(i));
  }

  const float dt = 1.0f / 60.0f;
  const auto start = std::chrono::steady_clock::now();
  for (int frame = 0; frame < 600; ++frame) {  // 10 s at 60 Hz
    if (!update_on_threads(crowd, threads, dt)) {
      std::fprintf(stderr, "crowd_job_ranges: an update refused its range\n");
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Read the characters as single ones: roots, joints (global_positions()), counters.
  float walked = 0.0f;
  for (int i = 0; i < crowd.size(); ++i) {
    const lmm::LearnedCharacter& c = crowd.character(i);
    walked += lmm::length(lmm::on_ground(c.root_position() - start_of(i))) / float(crowd.size());
    if (i < 4) {
      std::printf("character %d: root (%.2f, %.2f), %d searches\n", i, c.root_position().x, c.root_position().z,
                  c.stats().searches);
    }
    for (const lmm::Vec3& p : c.global_positions()) {
      if (!lmm::is_finite(p)) {
        std::fprintf(stderr, "crowd_job_ranges: character %d has a joint that is not finite\n", i);
        return 1;
      }
    }
  }
  if (walked < 3.0f) {
    std::fprintf(stderr, "crowd_job_ranges: the characters moved only %.2f m on average in 10 s\n", walked);
    return 1;
  }
  std::printf("%d characters on %d threads: %.3f ms a frame, %.1f m from their start on average\n", crowd.size(),
              threads, seconds * 1000.0 / 600.0, walked);
  return 0;
}
