// Drawn paths for path-following tests: a straight walk and a walk with a pause.
#pragma once

#include <cmath>
#include <vector>

#include "lmm/character/path_following.hpp"

namespace lmm::test {

// A straight walk along +Z at `speed` m/s for `seconds`, sampled at 100 Hz.
inline std::vector<PathSample> straight(float speed, float seconds) {
  std::vector<PathSample> s;
  for (int i = 0; i <= int(std::lround(seconds * 100.0f)); ++i) {
    const float t = float(i) / 100.0f;
    s.push_back(PathSample{t, 0.0f, speed * t});
  }
  return s;
}

// Along +Z at `speed` m/s for `walk` seconds, holding still there for `pause` seconds (a repeated
// sample), then on for `walk` seconds more.
inline std::vector<PathSample> paused_walk(float speed, float walk, float pause) {
  const float z = speed * walk;
  return {{0, 0, 0}, {walk, 0, z}, {walk + pause, 0, z}, {2 * walk + pause, 0, 2 * z}};
}

}  // namespace lmm::test
