// The characters of one lmm-bench crowd measurement: a crowd, and optionally the same characters
// to update one by one, all following crowd_inputs.hpp's inputs at 60 Hz.
#pragma once

#include <chrono>
#include <vector>

#include "crowd_inputs.hpp"
#include "frame_pool.hpp"
#include "lmm/character/crowd.hpp"

namespace lmm::bench {

constexpr float kDt = 1.0f / 60.0f;

// A crowd and, in `alone`, the same characters updated one by one.
template <typename Crowd, typename Character>
struct Population {
  Crowd crowd;
  std::vector<Character> alone;
  int frame = 0;

  // Number of characters.
  int size() const { return crowd.size(); }
  // Gives every crowd character its input of the current frame.
  void set_inputs() {
    for (int i = 0; i < size(); ++i) crowd.set_input(i, input_of(i, frame));
  }
  // Updates thread t's share of the one-by-one characters with their inputs of the current frame.
  void update_alone(int t, int threads) {
    const auto [begin, end] = share(size(), t, threads);
    for (int i = begin; i < end; ++i) alone[size_t(i)].update(input_of(i, frame), kDt);
  }
};

using Deadline = std::chrono::steady_clock::time_point;

// Crowd update of thread t's share (ranks) with worker t, deferring what is left at `deadline`.
void update_share(LearnedCrowd& crowd, int t, int threads, Deadline deadline);
// Crowd update of thread t's share (ranks), deferring what is left at `deadline`.
void update_share(DatabaseCrowd& crowd, int t, int threads, Deadline deadline);

// Sets the rate divisors (characters split evenly over `divisors`, in index order).
template <typename Crowd>
void set_divisors(Crowd& crowd, const std::vector<int>& divisors) {
  const int n = crowd.size(), levels = int(divisors.size());
  for (int i = 0; i < n; ++i) crowd.set_rate_divisor(i, divisors[size_t(i * levels / n)]);
}

// Starts `p`: a crowd of n characters at their start points with the rate `divisors` (none:
// full rate), and the same n characters to update one by one. `init(p, n)` initialises the
// crowd and the p.alone characters.
template <typename Crowd, typename Character, typename Init>
void start_population(Population<Crowd, Character>& p, int n, const std::vector<int>& divisors, const Init& init) {
  p.alone.resize(size_t(n));
  init(p, n);
  for (int i = 0; i < n; ++i) p.crowd.character(i).reset(start_of(i), 0.05f * float(i));
  if (!divisors.empty()) set_divisors(p.crowd, divisors);
}

}  // namespace lmm::bench
