#include "lmm/skeleton.hpp"

namespace lmm {

int Skeleton::find(const std::string& name) const {
  for (int i = 0; i < joint_count(); ++i) {
    if (names[i] == name) return i;
  }
  return -1;
}

std::string Skeleton::joined_names() const {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

bool Skeleton::validate(std::string& error) const {
  if (names.size() != parents.size() || offsets.size() != parents.size()) {
    error = "skeleton: names, parents and offsets have different lengths";
    return false;
  }
  if (parents.empty()) {
    error = "skeleton: no joints";
    return false;
  }
  for (int i = 0; i < joint_count(); ++i) {
    if (parents[i] >= i || parents[i] < -1 || (i > 0 && parents[i] < 0)) {
      error = "skeleton: joint '" + names[i] + "' has invalid parent index " +
              std::to_string(parents[i]);
      return false;
    }
  }
  return true;
}

void forward_kinematics(const int* parents, int count, const Vec3* local_positions,
                        const Quat* local_rotations, Vec3* global_positions,
                        Quat* global_rotations) {
  for (int i = 0; i < count; ++i) {
    const int p = parents[i];
    if (p < 0) {
      global_positions[i] = local_positions[i];
      global_rotations[i] = local_rotations[i];
    } else {
      global_positions[i] = global_positions[p] + rotate(global_rotations[p], local_positions[i]);
      global_rotations[i] = global_rotations[p] * local_rotations[i];
    }
  }
}

void forward_kinematics_velocity(const int* parents, int count, const Vec3* local_positions,
                                 const Quat* local_rotations, const Vec3* local_velocities,
                                 const Vec3* local_angular_velocities, Vec3* global_positions,
                                 Quat* global_rotations, Vec3* global_velocities,
                                 Vec3* global_angular_velocities) {
  for (int i = 0; i < count; ++i) {
    const int p = parents[i];
    if (p < 0) {
      global_positions[i] = local_positions[i];
      global_rotations[i] = local_rotations[i];
      global_velocities[i] = local_velocities[i];
      global_angular_velocities[i] = local_angular_velocities[i];
      continue;
    }
    const Vec3 offset = rotate(global_rotations[p], local_positions[i]);
    global_positions[i] = global_positions[p] + offset;
    global_rotations[i] = global_rotations[p] * local_rotations[i];
    global_velocities[i] = global_velocities[p] +
                           rotate(global_rotations[p], local_velocities[i]) +
                           cross(global_angular_velocities[p], offset);
    global_angular_velocities[i] =
        global_angular_velocities[p] + rotate(global_rotations[p], local_angular_velocities[i]);
  }
}

}  // namespace lmm
