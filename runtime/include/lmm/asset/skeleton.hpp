// Skeleton description and forward kinematics (positions, rotations and their velocities).
#pragma once

#include <string>
#include <vector>

#include "lmm/core/math.hpp"

namespace lmm {

// Joint hierarchy: names, parent indices (-1 for the root, parents precede children) and rest
// offsets in metres. In a motion database joint 0 is the simulation (root) bone.
struct Skeleton {
  std::vector<std::string> names;
  std::vector<int> parents;
  std::vector<Vec3> offsets;

  // Number of joints.
  int joint_count() const { return static_cast<int>(parents.size()); }
  // Index of the joint called `name`, or -1.
  int find(const std::string& name) const;
  // Comma-separated list of all joint names, for error messages.
  std::string joined_names() const;
  // True when sizes agree and every parent precedes its child; otherwise fills `error`.
  bool validate(std::string& error) const;
};

// Global positions and rotations from local ones (parent-relative). Arrays hold `count` joints.
void forward_kinematics(const int* parents, int count, const Vec3* local_positions, const Quat* local_rotations,
                        Vec3* global_positions, Quat* global_rotations);

// Global transforms and their linear / angular velocities from local ones. Local velocities
// are expressed in the parent's frame, as the database stores them.
void forward_kinematics_velocity(const int* parents, int count, const Vec3* local_positions,
                                 const Quat* local_rotations, const Vec3* local_velocities,
                                 const Vec3* local_angular_velocities, Vec3* global_positions, Quat* global_rotations,
                                 Vec3* global_velocities, Vec3* global_angular_velocities);

}  // namespace lmm
