// Frames of work on a fixed set of threads, and their timing (lmm-bench crowd).
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace lmm::bench {

// Runs one job per thread, the caller being thread 0, and waits for all; the helper threads
// spin (with yields) between frames so a frame's start costs no thread creation.
class FramePool {
 public:
  // Starts `threads` - 1 helper threads.
  explicit FramePool(int threads);
  // Stops and joins the helpers.
  ~FramePool();
  // Number of threads, the caller included.
  int threads() const { return int(helpers_.size()) + 1; }
  // Runs job(t) on every thread t and returns when all are done.
  void run(const std::function<void(int)>& job);

 private:
  void serve(int t);
  std::vector<std::thread> helpers_;
  std::atomic<int> generation_{0}, pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* job_ = nullptr;
};

// Thread t's share [begin, end) of n items split over `threads` threads.
inline std::pair<int, int> share(int n, int t, int threads) { return {n * t / threads, n * (t + 1) / threads}; }

// Per frame: wall seconds, and CPU seconds summed over the threads.
struct FrameTimes {
  double wall = 0.0, cpu = 0.0;
};

// FrameTimes of `frames` frames of `step(thread)` on the pool, each after `prepare()`.
FrameTimes time_frames(FramePool& pool, int frames, const std::function<void()>& prepare,
                       const std::function<void(int)>& step);

}  // namespace lmm::bench
