// C API: a character's skeleton and output pose (lmm/lmm.h).
#include "c_api/internal.hpp"

using namespace lmm::capi;

extern "C" {

int lmm_character_joint_count(const lmm_character* character) {
  return require_live(character, Kind::Character, "character") ? character->skeleton->joint_count() : 0;
}

int lmm_character_joint_index(const lmm_character* character, const char* name) {
  if (!require_live(character, Kind::Character, "character") || !require(name, "name")) return -1;
  return character->skeleton->find(name);
}

// false with a message when `character` is not live or has no joint `joint`.
static bool require_joint(const lmm_character* character, int joint) {
  if (!require_live(character, Kind::Character, "character")) return false;
  if (joint >= 0 && joint < character->skeleton->joint_count()) return true;
  last_error =
      "joint " + std::to_string(joint) + " is outside 0.." + std::to_string(character->skeleton->joint_count() - 1);
  return false;
}

const char* lmm_character_joint_name(const lmm_character* character, int joint) {
  return require_joint(character, joint) ? character->skeleton->names[size_t(joint)].c_str() : nullptr;
}

int lmm_character_joint_parent(const lmm_character* character, int joint) {
  return require_joint(character, joint) ? character->skeleton->parents[size_t(joint)] : -2;
}

int lmm_character_root_position(const lmm_character* character, float out_xyz[3]) {
  if (!require_live(character, Kind::Character, "character") || !require(out_xyz, "out_xyz")) return 0;
  write_xyz(pose_of(*character).root_position(), out_xyz);
  return 1;
}

int lmm_character_root_rotation(const lmm_character* character, float out_xyzw[4]) {
  if (!require_live(character, Kind::Character, "character") || !require(out_xyzw, "out_xyzw")) return 0;
  write_xyzw(pose_of(*character).root_rotation(), out_xyzw);
  return 1;
}

// false with a message when a buffer of `capacity` joints cannot hold the character's pose.
static bool fits(const lmm_character* character, size_t capacity) {
  if (!require_live(character, Kind::Character, "character")) return false;
  if (capacity >= size_t(character->skeleton->joint_count())) return true;
  last_error = "the buffers hold " + std::to_string(capacity) + " joints; the character has " +
               std::to_string(character->skeleton->joint_count());
  return false;
}

int lmm_character_world_transforms(const lmm_character* character, float* positions_xyz, float* rotations_xyzw,
                                   size_t joint_capacity) {
  if (!fits(character, joint_capacity)) return 0;
  const auto& positions = pose_of(*character).global_positions();
  const auto& rotations = pose_of(*character).global_rotations();
  for (size_t j = 0; j < positions.size(); ++j) {
    if (positions_xyz != nullptr) write_xyz(positions[j], positions_xyz + 3 * j);
    if (rotations_xyzw != nullptr) write_xyzw(rotations[j], rotations_xyzw + 4 * j);
  }
  return 1;
}

int lmm_character_world_matrices(const lmm_character* character, float* matrices, size_t joint_capacity) {
  if (!fits(character, joint_capacity) || !require(matrices, "matrices")) return 0;
  const auto& positions = pose_of(*character).global_positions();
  const auto& rotations = pose_of(*character).global_rotations();
  for (size_t j = 0; j < positions.size(); ++j) write_matrix(positions[j], rotations[j], matrices + 16 * j);
  return 1;
}

}  // extern "C"
