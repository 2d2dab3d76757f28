#include "crowd_inputs.hpp"

#include <cstdint>

namespace lmm::bench {
namespace {

// A uniform value in [-1, 1) from `key` (splitmix64's finaliser; cheap next to an update).
float hashed_unit(uint64_t key) {
  key += 0x9E3779B97F4A7C15ull;
  key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
  key ^= key >> 31;
  return float(key >> 40) / float(1 << 23) - 1.0f;
}

}  // namespace

GamepadInput input_of(int i, int f) {
  const uint64_t key = (uint64_t(i) << 32 | uint64_t(f / (60 + i % 61))) * 4;
  GamepadInput in;
  in.left_x = hashed_unit(key);
  in.left_y = hashed_unit(key + 1);
  in.gait = hashed_unit(key + 2) > 0.3f ? 1.0f : 0.0f;
  return in;
}

Vec3 start_of(int i) { return Vec3{2.0f * float(i % 32), 0.0f, 2.0f * float(i / 32)}; }

}  // namespace lmm::bench
