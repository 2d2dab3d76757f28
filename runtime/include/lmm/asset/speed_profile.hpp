// The locomotion speeds of motion data, measured from its root velocities; a database and a model
// bundle carry them, and a character's controller takes them (SteeringSettings::speeds_from_data).
#pragma once

#include <vector>

#include "lmm/core/math.hpp"

namespace lmm {

// Walk and run speeds per direction of travel. The defaults fit the Bandai locomotion data (walks
// average 1.1-1.3 m/s, runs 2.7-2.8 m/s).
struct LocomotionSpeeds {
  float walk_forward = 1.2f, walk_side = 1.0f, walk_back = 0.9f;  // m/s
  float run_forward = 2.8f, run_side = 2.2f, run_back = 1.8f;     // m/s
};

// Locomotion speeds of motion data, per direction of travel in character space, measured from
// the root (simulation bone) velocities of its frames. Frames slower than kMovingSpeed are left
// out; forward is within 45 degrees of the facing, back within 45 degrees of its opposite, side
// in between. Walk speed = the median speed of a direction, run speed = its 90th percentile. A
// direction with fewer than kMinDirectionFrames moving frames (or 1% of them) keeps the default
// LocomotionSpeeds ratio to forward (side / forward, back / forward) and is marked unmeasured;
// its walk speed is then clamped to its run speed (the ratios cross when forward run / walk is
// under 1.17, e.g. data of one run clip), so that walk <= run holds in every direction.
struct SpeedProfile {
  float walk_forward = 0.0f, walk_side = 0.0f, walk_back = 0.0f;  // m/s
  float run_forward = 0.0f, run_side = 0.0f, run_back = 0.0f;     // m/s
  int frames = 0, moving_frames = 0, forward_frames = 0, side_frames = 0, back_frames = 0;
  bool side_measured = false, back_measured = false;

  // Whether speeds are known (enough forward motion was measured, or a bundle stored them).
  bool valid() const { return walk_forward > 0.0f; }
  // The six speeds in the order walk forward, side, back, run forward, side, back.
  std::vector<float> values() const;
  // Writes the six speeds into `settings` (when valid(); otherwise leaves it unchanged), each
  // walk speed clamped to its run speed (as measure_speeds makes them; bundles exported before
  // that may hold crossed speeds).
  void apply(LocomotionSpeeds& settings) const;
};

constexpr float kMovingSpeed = 0.3f;     // m/s: slower root motion is standing or shuffling
constexpr float kMaxSpeed = 100.0f;      // m/s: a stored speed beyond this is corrupt
constexpr int kMinDirectionFrames = 30;  // moving frames a direction needs to be measured

// Measures the speed profile of `count` root velocities, each seen in the root's own frame
// (character space: x left, z forward). Allocates (a copy of the speeds); no limit on count.
SpeedProfile measure_speeds(const Vec3* local_root_velocities, int count);

}  // namespace lmm
