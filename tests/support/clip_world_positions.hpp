// World positions of a clip's joints (forward kinematics of one frame), for tests that compare
// clips read from different files.
#pragma once

#include <vector>

#include "lmm/asset/skeleton.hpp"
#include "lmm/import/motion.hpp"

namespace lmm::test {

// World positions of every joint of `clip` on `skeleton` at frame `f`.
inline std::vector<Vec3> clip_world_positions(const Skeleton& skeleton, const pipeline::Clip& clip, int f) {
  std::vector<Vec3> positions(size_t(clip.joints));
  std::vector<Quat> rotations(size_t(clip.joints));
  const size_t first = size_t(f) * size_t(clip.joints);
  forward_kinematics(skeleton.parents.data(), clip.joints, &clip.positions[first], &clip.rotations[first], positions.data(),
                     rotations.data());
  return positions;
}

}  // namespace lmm::test
