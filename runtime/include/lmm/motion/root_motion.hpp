// Root motion: who moves a character's root (RootOwner), one update's displacement, rigid moves
// on the ground, and integrating a root from character-space velocities.
#pragma once

#include "lmm/core/math.hpp"

namespace lmm {

// Who moves a character's root between updates (the root contract).
enum class RootOwner {
  Library,  // update() integrates the animation's root motion, pulled towards the simulated root
  Game,     // the game moves the root (e.g. a physics capsule): after each update it applies
            // root_motion() its own way and hands the result back with set_root() before the next
};

// The root displacement of one update (root motion), for games that move the root themselves.
struct RootMotion {
  Vec3 translation;        // world space
  Vec3 local_translation;  // in the root's facing at the start of the update
  Quat rotation;           // facing after = rotation * facing before (a turn about +Y)
};

// A rigid move on the ground: p -> to + turn (p - from); what teleport() applies to a character.
struct GroundMove {
  Vec3 from, to;
  Quat turn;

  // The moved point.
  Vec3 point(Vec3 p) const { return to + rotate(turn, p - from); }
  // The moved direction (velocities).
  Vec3 direction(Vec3 v) const { return rotate(turn, v); }
  // The moved orientation.
  Quat rotation(Quat q) const { return normalize(turn * q); }
};

// Moves `position` on the ground towards `target` by a spring step of `halflife`, at most
// max_ratio x |velocity| x dt (so a standing root is never dragged): basic motion matching's adjustment.
void pull_towards(Vec3 target, Vec3 velocity, float halflife, float max_ratio, float dt, Vec3& position);

// Integrates a root over dt from character-space velocities; returns world velocities too.
void integrate_root_motion(Vec3 local_velocity, Vec3 local_angular, float dt, Vec3& position, Quat& rotation,
                           Vec3& velocity, Vec3& angular);

}  // namespace lmm
