// Checks of the contract every gamepad character (CharacterBase) keeps, shared by the database
// and learned character tests: reset() equals a fresh init, teleport() moves the character
// rigidly, and a game-owned root (RootOwner::Game) moves only as the game says.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "lmm/motion/steering.hpp"
#include "support/allocation_counter.hpp"

namespace lmm::test {

// Input of frame f of a scripted run: forward with a weave, turning every 1.5 s.
inline GamepadInput contract_input(int f) {
  GamepadInput in;
  in.left_x = float((f / 90) % 3 - 1) * 0.7f;
  in.left_y = 0.8f;
  return in;
}

// Runs `frames` scripted updates from frame `first`.
inline void run_script(CharacterBase& c, int first, int frames) {
  for (int f = first; f < first + frames; ++f) c.update(contract_input(f), 1.0f / 60.0f);
}

inline float distance(Vec3 a, Vec3 b) { return length(a - b); }

// `used` (initialised at any place) walks, is reset to (`position`, `heading`) without allocating
// and from then on matches `fresh`, initialised there with the same settings, update for update.
inline void expect_reset_matches_fresh(CharacterBase& used, CharacterBase& fresh, Vec3 position, float heading) {
  run_script(used, 0, 150);
  start_counting_allocations();
  used.reset(position, heading);
  EXPECT_EQ(stop_counting_allocations(), 0) << "reset allocated";
  EXPECT_EQ(used.stats().updates, 0);
  for (int step = 0; step < 2; ++step) {
    ASSERT_EQ(used.global_positions().size(), fresh.global_positions().size());
    for (size_t j = 0; j < used.global_positions().size(); ++j) {
      ASSERT_LT(distance(used.global_positions()[j], fresh.global_positions()[j]), 1e-5f) << "joint " << j;
    }
    EXPECT_EQ(used.stats().searches, fresh.stats().searches);
    EXPECT_EQ(used.stats().transitions, fresh.stats().transitions);
    run_script(used, 0, 120);
    run_script(fresh, 0, 120);
  }
}

// After walking, teleport() puts the root at `position` facing `heading`, keeps the local pose and
// moves the predicted trajectory with the root; the next update continues from there.
inline void expect_teleport_moves_rigidly(CharacterBase& c, Vec3 position, float heading) {
  run_script(c, 0, 150);
  const Quat before = c.root_rotation();
  const Vec3 root_before = c.root_position();
  std::vector<Vec3> relative;  // trajectory in the root's frame
  for (const RootSample& s : c.predicted_trajectory()) relative.push_back(inverse_rotate(before, s.position - root_before));
  const std::vector<Quat> local = c.local_rotations();
  start_counting_allocations();
  c.teleport(position, heading);
  EXPECT_EQ(stop_counting_allocations(), 0) << "teleport allocated";
  EXPECT_LT(distance(on_ground(c.root_position()), on_ground(position)), 1e-5f);
  const Vec3 forward = rotate(c.root_rotation(), Vec3{0, 0, 1});
  EXPECT_NEAR(std::atan2(forward.x, forward.z), heading, 1e-4f);
  for (size_t j = 1; j < local.size(); ++j) EXPECT_LT(length(to_scaled_angle_axis(local[j] * inverse(c.local_rotations()[j]))), 1e-5f);
  for (size_t s = 0; s < relative.size(); ++s) {
    const Vec3 now = inverse_rotate(c.root_rotation(), c.predicted_trajectory()[s].position - c.root_position());
    EXPECT_LT(distance(on_ground(now), on_ground(relative[s])), 2e-3f) << "trajectory sample " << s;
  }
  EXPECT_LT(distance(on_ground(c.simulation().position), position), 0.6f);  // the simulation came along
  c.update(contract_input(150), 1.0f / 60.0f);
  EXPECT_LT(distance(on_ground(c.root_position()), on_ground(position)), 0.1f);  // no snap back
}

// `game` (RootOwner::Game) and `library` (RootOwner::Library without the pull towards the
// simulation) start alike. The game applies root_motion() to its capsule and hands it back with
// set_root(): free space matches the library's own integration; at a wall 0.3 m to its +x side
// the capsule stops while the character keeps animating.
inline void expect_game_owned_root(CharacterBase& game, CharacterBase& library) {
  Vec3 capsule = game.root_position();
  Quat facing = game.root_rotation();
  float largest_gap = 0.0f;
  for (int f = 0; f < 240; ++f) {
    const Vec3 previous = game.root_position();
    const GamepadInput in = contract_input(f);
    game.update(in, 1.0f / 60.0f);
    library.update(in, 1.0f / 60.0f);
    const RootMotion& motion = game.root_motion();
    EXPECT_LT(distance(previous + motion.translation, game.root_position()), 1e-5f);
    capsule = capsule + motion.translation;
    facing = normalize(motion.rotation * facing);
    game.set_root(capsule, facing);
    largest_gap = std::max(largest_gap, distance(game.root_position(), library.root_position()));
  }
  EXPECT_LT(largest_gap, 0.01f) << "the game applying root motion exactly = the library integrating it";
  // Now a wall: the game's capsule cannot pass x = wall.
  const float wall = game.root_position().x + 0.3f, start_z = game.root_position().z;
  GamepadInput towards_wall;
  towards_wall.left_x = -1.0f;  // stick left: world +x with the camera looking along +z
  towards_wall.left_y = 0.3f;
  int moved_frames = 0;
  for (int f = 0; f < 240; ++f) {
    game.update(towards_wall, 1.0f / 60.0f);
    capsule = capsule + game.root_motion().translation;
    capsule.x = std::min(capsule.x, wall);
    facing = normalize(game.root_motion().rotation * facing);
    game.set_root(capsule, facing);
    moved_frames += length(game.root_motion().translation) > 1e-4f ? 1 : 0;
    ASSERT_LE(game.root_position().x, wall + 1e-4f);
    for (const Vec3& p : game.global_positions()) ASSERT_TRUE(is_finite(p));
  }
  EXPECT_GT(moved_frames, 200);  // root motion keeps coming: the character walks against the wall
  EXPECT_GT(std::fabs(game.root_position().z - start_z), 0.05f);  // sliding along it
  EXPECT_LT(distance(on_ground(game.simulation().position), on_ground(game.root_position())), 0.51f);
}

}  // namespace lmm::test
