// World positions of a clip's joints (forward kinematics of one frame) and the largest distance
// between two clips', for tests that compare clips read from different files.
#pragma once

#include <algorithm>
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

// The largest distance between joint j of `a` on `sa` and joint j of `b` on `sb` (the same
// hierarchy, whatever the joints are called) over the frames both clips have.
inline float largest_world_distance(const Skeleton& sa, const pipeline::Clip& a, const Skeleton& sb, const pipeline::Clip& b) {
  float worst = 0.0f;
  for (int f = 0; f < std::min(a.frames, b.frames); ++f) {
    const std::vector<Vec3> pa = clip_world_positions(sa, a, f), pb = clip_world_positions(sb, b, f);
    for (size_t j = 0; j < pa.size(); ++j) worst = std::max(worst, length(pa[j] - pb[j]));
  }
  return worst;
}

}  // namespace lmm::test
