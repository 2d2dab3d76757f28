// Inertialization (basic motion matching): offsets that carry the shown pose across a transition
// and decay with critically damped springs.
#pragma once

#include <vector>

#include "lmm/core/math.hpp"
#include "lmm/motion/pose_buffers.hpp"

namespace lmm {

// Inertialization offsets (basic motion matching, inertialization): joints 1.. carry position and rotation
// offsets that decay with critically damped springs; the root carries character-space
// velocity offsets instead (its position is integrated).
class Inertializer {
 public:
  // Sizes the offsets for `joints` joints and clears them (allocates).
  void resize(int joints);
  // First half of a transition: keeps the velocities of joints 1.. as shown now, the velocities
  // of `source` (the last apply()'s source, its velocities filled in) plus the offsets'.
  void keep_shown_velocities(const PoseBuffers& source);
  // Second half: starts a transition from the current output (`out`, rotations `animated`
  // before any IK, the velocities kept by keep_shown_velocities) to the new source pose
  // `source`; root offsets are the old minus the new character-space root velocities.
  void start(const PoseBuffers& out, const std::vector<Quat>& animated, const PoseBuffers& source,
             Vec3 root_velocity_offset, Vec3 root_angular_offset);
  // Decays the offsets by dt and writes the positions and rotations of joints 1.. of `out` as
  // source + offsets (their velocities are only needed by a transition, which gets them from
  // keep_shown_velocities).
  void apply(const PoseBuffers& source, float halflife, float dt, PoseBuffers& out);
  // Current root velocity offsets (character space).
  Vec3 root_velocity_offset() const { return offsets_.positions[0]; }
  Vec3 root_angular_offset() const { return offsets_.rotations_scaled[0]; }

 private:
  struct Offsets {
    std::vector<Vec3> positions, velocities, rotations_scaled, angular;
  } offsets_;
};

}  // namespace lmm
