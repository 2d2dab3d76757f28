// Level of detail's cost in quality (lmm-bench crowd --lod): how far characters updated at a
// divided rate drift from the same characters updated every frame.
#pragma once

#include <algorithm>
#include <vector>

#include "crowd_population.hpp"

namespace lmm::bench {

// Differences between two characters: the mean distance (m) of their joints in root space
// (pose error, wherever each root is) and the distance of their roots.
// With a level-of-detail character, also its world joints' distance as held and as shown
// (moved by the crowd's shown_move), the shown root's distance, and the root's stutter: how far
// its step of the frame, held or shown, is from the full-rate character's step.
struct PoseDifference {
  double joints = 0.0, root = 0.0, world = 0.0, shown_world = 0.0, shown_root = 0.0, step = 0.0, shown_step = 0.0;

  // Adds `d` to every sum.
  void add(const PoseDifference& d) {
    joints += d.joints, root += d.root, world += d.world, shown_world += d.shown_world, shown_root += d.shown_root;
    step += d.step, shown_step += d.shown_step;
  }
  // Divides every sum by `n`.
  void divide(double n) {
    joints /= n, root /= n, world /= n, shown_world /= n, shown_root /= n, step /= n, shown_step /= n;
  }
};

// Where a character's root is drawn this frame: held (its last update) and shown (moved), and
// at full rate.
struct DrawnRoots {
  Vec3 held, shown, full;
};

// The PoseDifference of `a` (a crowd character shown moved by `shown`) from `b` (full rate),
// without the root steps.
template <typename Character>
PoseDifference difference(const Character& a, const Character& b, const GroundMove& shown) {
  const auto& pa = a.global_positions();
  const auto& pb = b.global_positions();
  PoseDifference d;
  for (size_t j = 0; j < pa.size(); ++j) {
    const Vec3 la = inverse_rotate(a.root_rotation(), pa[j] - a.root_position());
    const Vec3 lb = inverse_rotate(b.root_rotation(), pb[j] - b.root_position());
    d.joints += length(la - lb);
    d.world += length(pa[j] - pb[j]);
    d.shown_world += length(shown.point(pa[j]) - pb[j]);
  }
  d.joints /= double(pa.size());
  d.world /= double(pa.size());
  d.shown_world /= double(pa.size());
  d.root = length(a.root_position() - b.root_position());
  d.shown_root = length(shown.point(a.root_position()) - b.root_position());
  return d;
}

// Mean differences of each divisor's characters from the same characters at full rate
// (updated individually, same inputs) over `frames` frames.
template <typename Crowd, typename Character>
std::vector<PoseDifference> lod_errors(Population<Crowd, Character>& p, const std::vector<int>& divisors, int frames) {
  const int n = p.size(), levels = int(divisors.size());
  std::vector<PoseDifference> sum(static_cast<size_t>(levels));
  std::vector<int> count(static_cast<size_t>(levels), 0);
  std::vector<DrawnRoots> last(static_cast<size_t>(n));
  for (int f = 0; f < frames; ++f) {
    ++p.frame;
    p.set_inputs();
    p.crowd.update(kDt);
    p.update_alone(0, 1);
    for (int i = 0; i < n; ++i) {
      const size_t level = size_t(i * levels / n);
      const GroundMove shown = p.crowd.shown_move(i);
      const Vec3 held_root = p.crowd.character(i).root_position();
      const DrawnRoots now{held_root, shown.point(held_root), p.alone[size_t(i)].root_position()};
      PoseDifference d = difference(p.crowd.character(i), p.alone[size_t(i)], shown);
      const DrawnRoots& before = last[size_t(i)];
      d.step = length(on_ground((now.held - before.held) - (now.full - before.full)));
      d.shown_step = length(on_ground((now.shown - before.shown) - (now.full - before.full)));
      last[size_t(i)] = now;
      if (f == 0) continue;  // no step yet
      sum[level].add(d);
      ++count[level];
    }
  }
  for (int l = 0; l < levels; ++l) sum[size_t(l)].divide(std::max(1, count[size_t(l)]));
  return sum;
}

}  // namespace lmm::bench
