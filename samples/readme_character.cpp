// The character of README.md "A character in your game", shown there from its first #include on
// (tests/consumer checks that README shows this file unchanged and builds it in another project):
// a learned motion-matching character steered by a gamepad. Usage: readme_character MODEL.lmmw
// README.md's layout of the code below, left alone by clang-format:
// clang-format off
#include <cstdio>

#include "lmm/character/learned_character.hpp"

int main(int argc, char** argv) {
  std::string error;
  auto model = lmm::Model::load_file(argc > 1 ? argv[1] : "walk.lmmw", error);  // immutable, shared
  lmm::LearnedCharacter character;
  if (!model || !character.init(model, lmm::LearnedSettings{}, lmm::Vec3{0, 0, 0}, 0.0f, error)) {
    std::fprintf(stderr, "lmmkit: %s\n", error.c_str());
    return 1;
  }
  const int hips = model->skeleton().find("Hips");  // look joints up by name once
  lmm::GamepadInput input;
  input.left_y = 1.0f;                               // stick forward: walk along +Z
  for (int frame = 0; frame < 600; ++frame) {        // the game loop, 60 Hz
    character.update(input, 1.0f / 60.0f);           // no allocation
    if (frame % 120 == 0 && hips >= 0) {
      const lmm::Vec3 p = character.global_positions()[size_t(hips)];  // world space, metres
      std::printf("t %.0f s: hips at (%.2f, %.2f, %.2f)\n", frame / 60.0, p.x, p.y, p.z);
    }
  }
  return 0;
}
