#include "lmm/asset/speed_profile.hpp"

#include <algorithm>
#include <vector>

namespace lmm {
namespace {

constexpr float kForwardCone = 0.70710678f;  // cos 45 degrees

// The q-quantile (0..1) of `values` by nearest rank (reorders them); 0 when empty.
float quantile(std::vector<float>& values, float q) {
  if (values.empty()) return 0.0f;
  const size_t k = std::min(values.size() - 1, size_t(q * float(values.size() - 1) + 0.5f));
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k), values.end());
  return values[k];
}

// Walk (median) and run (90th percentile) speeds of one direction; false when too few frames.
bool measure_direction(std::vector<float>& speeds, int moving, float& walk, float& run) {
  if (int(speeds.size()) < std::max(kMinDirectionFrames, moving / 100)) return false;
  walk = quantile(speeds, 0.5f);
  run = quantile(speeds, 0.90f);
  return true;
}

}  // namespace

void SpeedProfile::apply(LocomotionSpeeds& s) const {
  if (!valid()) return;
  s.walk_forward = std::min(walk_forward, run_forward), s.walk_side = std::min(walk_side, run_side);
  s.walk_back = std::min(walk_back, run_back);
  s.run_forward = run_forward, s.run_side = run_side, s.run_back = run_back;
}

std::vector<float> SpeedProfile::values() const {
  return {walk_forward, walk_side, walk_back, run_forward, run_side, run_back};
}

SpeedProfile measure_speeds(const Vec3* local_root_velocities, int count) {
  SpeedProfile p;
  p.frames = std::max(0, count);
  std::vector<float> forward, side, back;
  for (int f = 0; f < count; ++f) {
    const Vec3 v = on_ground(local_root_velocities[f]);
    const float speed = length(v);
    if (!(speed >= kMovingSpeed)) continue;  // also drops NaN
    ++p.moving_frames;
    const float along = v.z / speed;
    (along >= kForwardCone ? forward : along <= -kForwardCone ? back : side).push_back(speed);
  }
  p.forward_frames = int(forward.size()), p.side_frames = int(side.size()), p.back_frames = int(back.size());
  if (!measure_direction(forward, p.moving_frames, p.walk_forward, p.run_forward)) {
    p.forward_frames = 0;
    return p;
  }
  // Unmeasured directions keep the default settings' ratio to forward.
  const LocomotionSpeeds d;
  p.side_measured = measure_direction(side, p.moving_frames, p.walk_side, p.run_side);
  if (!p.side_measured) {
    p.run_side = p.run_forward * d.run_side / d.run_forward;
    p.walk_side = std::min(p.walk_forward * d.walk_side / d.walk_forward, p.run_side);
  }
  p.back_measured = measure_direction(back, p.moving_frames, p.walk_back, p.run_back);
  if (!p.back_measured) {
    p.run_back = p.run_forward * d.run_back / d.run_forward;
    p.walk_back = std::min(p.walk_forward * d.walk_back / d.walk_forward, p.run_back);
  }
  return p;
}

}  // namespace lmm
