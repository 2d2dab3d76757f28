// The C++ API twin of walk.c: the same characters, script (walk_script.h) and printed root
// positions, so that run.sh can check that the C API gives what the C++ API gives.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "lmm/character/database_character.hpp"
#include "lmm/character/learned_character.hpp"
#include "walk_script.h"

namespace {

lmm::GamepadInput to_input(const lmm_gamepad& g) {
  lmm::GamepadInput input;
  input.left_x = g.left_x, input.left_y = g.left_y, input.right_x = g.right_x, input.right_y = g.right_y;
  input.camera_azimuth = g.camera_azimuth, input.strafe = g.strafe != 0, input.gait = g.gait;
  return input;
}

// The script's steps after an update of `frame` for a character started at x = start_x.
void follow_script(lmm::CharacterBase& c, int frame, float start_x) {
  if (frame > WALK_TELEPORT_FRAME && frame <= WALK_RESET_FRAME) {  // the game's wall
    lmm::Vec3 root = c.root_position();
    root.x = std::min(root.x, start_x + WALK_TELEPORT_DX + WALK_WALL_DX);
    c.set_root(root, c.root_rotation());
  }
  if (frame == WALK_TELEPORT_FRAME) {
    c.teleport(lmm::Vec3{start_x + WALK_TELEPORT_DX, 0.0f, WALK_TELEPORT_Z}, WALK_TELEPORT_HEADING);
    c.set_root_owner(lmm::RootOwner::Game);
  }
  if (frame == WALK_RESET_FRAME) {
    c.set_root_owner(lmm::RootOwner::Library);
    c.reset(lmm::Vec3{start_x, 0.0f, 0.0f}, 0.0f);
  }
}

int fail(const std::string& error) {
  std::fprintf(stderr, "walk_cpp: %s\n", error.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DATABASE.mmdb MODEL.lmmw\n", argv[0]);
    return 2;
  }
  std::string error;
  const std::shared_ptr<const lmm::Database> database = lmm::Database::load_file(argv[1], error);
  if (!database) return fail(error);
  const std::shared_ptr<const lmm::Model> model = lmm::Model::load_file(argv[2], error);
  if (!model) return fail(error);
  lmm::FeatureSearch search;
  lmm::DatabaseCharacter database_character;
  lmm::LearnedCharacter learned_character;
  if (!search.build(database, error) ||
      !database_character.init(database, search, lmm::CharacterSettings{}, lmm::Vec3{0, 0, 0}, 0.0f, error) ||
      !learned_character.init(model, lmm::LearnedSettings{}, lmm::Vec3{2, 0, 0}, 0.0f, error)) {
    return fail(error);
  }
  for (int frame = 1; frame <= WALK_FRAMES; ++frame) {
    const lmm::GamepadInput input = to_input(walk_input(frame));
    database_character.update(input, WALK_DT);
    learned_character.update(input, WALK_DT);
    follow_script(database_character, frame, 0.0f);
    follow_script(learned_character, frame, 2.0f);
    if (frame % WALK_PRINT_EVERY != 0) continue;
    const lmm::Vec3 a = database_character.root_position(), b = learned_character.root_position();
    std::printf(WALK_LINE_FORMAT, "database", frame, double(a.x), double(a.z));
    std::printf(WALK_LINE_FORMAT, "learned", frame, double(b.x), double(b.z));
  }
  return 0;
}
