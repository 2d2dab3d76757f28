// A database motion-matching character (lmm::DatabaseCharacter): it plays the motion database that
// lmm-import made from BVH files, and every 0.1 s searches it for the frame that best continues the
// pose towards where the gamepad steers. Here a scripted gamepad walks it forward, turns it right at a
// jog and runs it back; the program prints its root and the clip it plays once a second.
// Usage: database_character DATABASE.mmdb
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "lmm/character/database_character.hpp"

namespace {

// The stick a player holds at `t` seconds: forward, then right at a jog, then back and left at a run.
lmm::GamepadInput player_input(float t) {
  lmm::GamepadInput input;  // sticks in [-1, 1]: x right, y forward (of a camera looking along +Z)
  if (t < 3.0f) {
    input.left_y = 1.0f;
  } else if (t < 6.0f) {
    input.left_x = 1.0f;
    input.gait = 0.5f;  // 0 walks, 1 runs
  } else {
    input.left_x = -0.7f;
    input.left_y = -0.7f;
    input.gait = 1.0f;
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATABASE.mmdb (made by lmm-import)\n", argv[0]);
    return 2;
  }
  // Load the database once: it is immutable and shared, and characters keep it alive. Its search
  // index is built once too, and may serve any number of characters on any threads.
  std::string error;
  const std::shared_ptr<const lmm::Database> db = lmm::Database::load_file(argv[1], error);
  lmm::FeatureSearch search;
  lmm::DatabaseCharacter character;
  if (db == nullptr || !search.build(db, error) ||
      !character.init(db, search, lmm::CharacterSettings{}, lmm::Vec3{0, 0, 0}, 0.0f, error)) {
    std::fprintf(stderr, "database_character: %s\n", error.c_str());
    return 1;
  }
  const int left_foot = db->role("left_foot");  // joints by role (or skeleton().find(name)), once
  std::printf("%d frames in %zu clips, %zu joints\n", db->frame_count(), db->ranges().size(),
              db->skeleton().parents.size());

  const float dt = 1.0f / 60.0f;
  float walked = 0.0f;                          // metres along the ground
  for (int frame = 1; frame <= 540; ++frame) {  // the game loop: 9 s at 60 Hz
    const lmm::Vec3 before = character.root_position();
    character.update(player_input(frame * dt), dt);  // no allocation
    walked += lmm::length(lmm::on_ground(character.root_position() - before));
    if (frame % 60 != 0) continue;
    const lmm::Vec3 root = character.root_position();  // joint 0: on the ground under the character
    const lmm::Vec3 facing = lmm::rotate(character.root_rotation(), lmm::Vec3{0, 0, 1});
    const std::string& clip = db->ranges()[size_t(lmm::clip_index(*db, character.current_frame()))].name;
    std::printf("t %d s: root (%.2f, %.2f) facing (%.2f, %.2f), clip '%s'", frame / 60, root.x, root.z, facing.x,
                facing.z, clip.c_str());
    if (left_foot >= 0) std::printf(", left foot %.2f m up", character.global_positions()[size_t(left_foot)].y);
    std::printf("\n");
  }
  // A character that stood still, or a pose that is not finite, means something went wrong.
  for (const lmm::Vec3& p : character.global_positions()) {
    if (!lmm::is_finite(p)) {
      std::fprintf(stderr, "database_character: a joint position is not finite\n");
      return 1;
    }
  }
  if (walked < 5.0f) {
    std::fprintf(stderr, "database_character: the character moved only %.2f m in 9 s\n", walked);
    return 1;
  }
  std::printf("walked %.1f m in 9 s: %d searches, %d transitions\n", walked, character.stats().searches,
              character.stats().transitions);
  return 0;
}
