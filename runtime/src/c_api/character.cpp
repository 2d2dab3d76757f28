// C API: creating, updating, placing and releasing a database or learned character (lmm/lmm.h).
#include "c_api/internal.hpp"

using namespace lmm::capi;

extern "C" {

lmm_character* lmm_character_create_database(const lmm_database* database, float x, float z, float heading) {
  if (!require_live(database, Kind::Database, "database") || !require_finite_placement(x, z, heading)) return nullptr;
  return create_character([&](OwnedCharacter& c, std::string& error) {
    c.database = database->asset;
    c.played = &c.database_character;
    c.skeleton = &c.database->database->skeleton();
    return c.database_character.init(c.database->database, c.database->search, lmm::CharacterSettings{},
                                     lmm::Vec3{x, 0.0f, z}, heading, error);
  });
}

lmm_character* lmm_character_create_learned(const lmm_model* model, float x, float z, float heading) {
  if (!require_live(model, Kind::Model, "model") || !require_finite_placement(x, z, heading)) return nullptr;
  return create_character([&](OwnedCharacter& c, std::string& error) {
    c.model = model->asset;
    c.played = &c.learned_character;
    c.skeleton = &c.model->model->skeleton();
    return c.learned_character.init(c.model->model, lmm::LearnedSettings{}, lmm::Vec3{x, 0.0f, z}, heading, error);
  });
}

void lmm_character_release(lmm_character* character) {
  if (character == nullptr || !require_live(character, Kind::Character, "character")) return;
  if (character->crowd_member) {
    last_error = "character belongs to a crowd: lmm_crowd_release releases it";
    return;
  }
  if (retire(character, Kind::Character, "character")) destroy(static_cast<OwnedCharacter*>(character));
}

int lmm_character_update(lmm_character* character, const lmm_gamepad* input, float dt) {
  return require_own_character(character, "character") && advance(*character, input, dt) ? 1 : 0;
}

int lmm_characters_update(lmm_character* const* characters, const lmm_gamepad* inputs, size_t begin, size_t end,
                          float dt) {
  if (!require(characters, "characters") || !require(inputs, "inputs")) return 0;
  if (begin > end) {
    last_error = "the range [" + std::to_string(begin) + ", " + std::to_string(end) + ") is reversed";
    return 0;
  }
  for (size_t i = begin; i < end; ++i) {
    if (!require_own_character(characters[i], "a character in the range")) return 0;
  }
  for (size_t i = begin; i < end; ++i) {
    if (!advance(*characters[i], &inputs[i], dt)) return 0;
  }
  return 1;
}

int lmm_character_reset(lmm_character* character, float x, float z, float heading) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_reset");
  if (steered == nullptr || !require_finite_placement(x, z, heading)) return 0;
  steered->reset(lmm::Vec3{x, 0.0f, z}, heading);
  return 1;
}

int lmm_character_teleport(lmm_character* character, float x, float z, float heading) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_teleport");
  if (steered == nullptr || !require_finite_placement(x, z, heading)) return 0;
  steered->teleport(lmm::Vec3{x, 0.0f, z}, heading);
  return 1;
}

int lmm_character_set_foot_lock(lmm_character* character, int on, float unlock_distance, float blend_halflife) {
  if (!(unlock_distance >= 0.0f && blend_halflife >= 0.0f) || !std::isfinite(unlock_distance) ||
      !std::isfinite(blend_halflife)) {
    last_error = "lmm_character_set_foot_lock: unlock_distance and blend_halflife must be finite and >= 0 (0: the default)";
    return 0;
  }
  lmm::FootLockSettings lock;
  lock.foot_lock = on != 0;
  if (unlock_distance > 0.0f) lock.foot_unlock_distance = unlock_distance;
  if (blend_halflife > 0.0f) lock.foot_blend_halflife = blend_halflife;
  return with_any_character(character, 0, [&](auto& played) {
    played.set_foot_lock(lock);
    return 1;
  });
}

int lmm_character_set_root_owner(lmm_character* character, lmm_root_owner owner) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_set_root_owner");
  if (steered == nullptr) return 0;
  if (owner != LMM_ROOT_LIBRARY && owner != LMM_ROOT_GAME) {
    last_error = "unknown root owner " + std::to_string(int(owner)) + " (LMM_ROOT_LIBRARY or LMM_ROOT_GAME)";
    return 0;
  }
  steered->set_root_owner(owner == LMM_ROOT_GAME ? lmm::RootOwner::Game : lmm::RootOwner::Library);
  return 1;
}

int lmm_character_root_motion(const lmm_character* character, float translation_xyz[3], float turn_xyzw[4]) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const lmm::RootMotion& motion = pose_of(*character).root_motion();
  if (translation_xyz != nullptr) write_xyz(motion.translation, translation_xyz);
  if (turn_xyzw != nullptr) write_xyzw(motion.rotation, turn_xyzw);
  return 1;
}

int lmm_character_set_root(lmm_character* character, const float position_xyz[3], const float rotation_xyzw[4]) {
  lmm::CharacterBase* steered = require_steered(character, "lmm_character_set_root");
  if (steered == nullptr || !require(position_xyz, "position_xyz") || !require(rotation_xyzw, "rotation_xyzw")) {
    return 0;
  }
  const lmm::Vec3 position{position_xyz[0], position_xyz[1], position_xyz[2]};
  const lmm::Quat rotation{rotation_xyzw[3], rotation_xyzw[0], rotation_xyzw[1], rotation_xyzw[2]};
  if (!lmm::is_finite(position) || !std::isfinite(rotation.w + rotation.x + rotation.y + rotation.z) ||
      lmm::dot(rotation, rotation) < 1e-12f) {
    last_error = "the root must be a finite position and a non-zero quaternion";
    return 0;
  }
  steered->set_root(position, rotation);
  return 1;
}

}  // extern "C"
