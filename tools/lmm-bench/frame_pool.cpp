#include "frame_pool.hpp"

#include "bench_common.hpp"

namespace lmm::bench {

FramePool::FramePool(int threads) {
  for (int t = 1; t < threads; ++t) helpers_.emplace_back([this, t] { serve(t); });
}

FramePool::~FramePool() {
  stop_ = true;
  generation_.fetch_add(1);
  for (std::thread& h : helpers_) h.join();
}

void FramePool::run(const std::function<void(int)>& job) {
  job_ = &job;
  pending_.store(int(helpers_.size()));
  generation_.fetch_add(1);
  job(0);
  while (pending_.load() > 0) std::this_thread::yield();
}

void FramePool::serve(int t) {
  int seen = 0;
  for (;;) {
    while (generation_.load() == seen) std::this_thread::yield();
    seen = generation_.load();
    if (stop_) return;
    (*job_)(t);
    pending_.fetch_sub(1);
  }
}

FrameTimes time_frames(FramePool& pool, int frames, const std::function<void()>& prepare,
                       const std::function<void(int)>& step) {
  std::vector<double> cpu(size_t(pool.threads()), 0.0);  // each thread adds to its own entry
  const std::function<void(int)> timed = [&](int t) {
    const double start = thread_cpu_seconds();
    step(t);
    cpu[size_t(t)] += thread_cpu_seconds() - start;
  };
  FrameTimes total;
  for (int f = 0; f < frames; ++f) {
    prepare();
    const auto start = Clock::now();
    pool.run(timed);
    total.wall += seconds_since(start);
  }
  for (double c : cpu) total.cpu += c;
  return FrameTimes{total.wall / frames, total.cpu / frames};
}

}  // namespace lmm::bench
