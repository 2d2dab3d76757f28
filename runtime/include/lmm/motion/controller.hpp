// Gamepad to desired motion (basic motion matching, desired_velocity_update / desired_rotation_update) and
// a spring-simulated character whose future trajectory feeds the matching query.
#pragma once

#include <string>
#include <vector>

#include "lmm/asset/speed_profile.hpp"
#include "lmm/core/math.hpp"
#include "lmm/core/springs.hpp"

namespace lmm {

// One frame of player input. Stick axes in [-1, 1]: x = right, y = up (forward).
struct GamepadInput {
  float left_x = 0.0f, left_y = 0.0f;    // movement
  float right_x = 0.0f, right_y = 0.0f;  // facing while strafing
  float camera_azimuth = 0.0f;           // radians about +Y; 0 = camera looking along +Z
  bool strafe = false;                   // face the camera / right stick instead of the motion
  float gait = 0.0f;                     // 0 = walk speeds, 1 = run speeds (blended between)
};

// Speeds (LocomotionSpeeds) and spring halflives of the simulated character.
struct ControllerSettings : LocomotionSpeeds {
  float velocity_halflife = 0.2f;  // s
  float rotation_halflife = 0.2f;  // s
};

// One value of a controller config: its key (e.g. "run_forward") and value.
struct ControllerValue {
  std::string key;
  float value = 0.0f;
};

// A game state of a controller config ([states.NAME]): the tag constraint (tag names) and search
// settings a character switches to by name (DatabaseCharacter::set_state).
struct StateConfig {
  std::string name;
  std::vector<std::string> require, require_any, exclude;  // TagConstraint's sets
  float transition_cost = 0.0f;                            // the search's transition cost in this state
  bool idle = true;                                        // whether a released stick idles in this state
};

constexpr float kMaxStateTransitionCost = 1.0e6f;  // [states.NAME] transition_cost range: [0, this]
constexpr int kMaxStates = 256;                    // [states.NAME] tables per config

// Parses a controller config (docs/configs.md#controller-configs): the TOML subset of a
// [speeds] and a [springs] table of `key = number` lines, [states.NAME] tables and '#'
// comments. Keys: walk_forward, walk_side, walk_back, run_forward, run_side, run_back (m/s, in
// [0.01, kMaxSpeed]) and velocity_halflife, rotation_halflife (s, in [0.001, 10]); a state's
// require, require_any, exclude (one-line arrays of quoted tag names), transition_cost (in [0,
// kMaxStateTransitionCost]) and idle (true / false); NAME is letters, digits, '_' and '-'. False
// with a message "LINE: ..." naming the table, key and accepted range at fault; `values` holds
// the keys given, in order, and `states` (when not null) the states, in order.
bool parse_controller_config(const std::string& text, std::vector<ControllerValue>& values, std::string& error,
                             std::vector<StateConfig>* states = nullptr);
// Writes parsed values into `settings` (keys parse_controller_config accepted; others ignored).
void apply_controller_values(const std::vector<ControllerValue>& values, ControllerSettings& settings);

// Stick direction (world, length <= 1) after the camera azimuth: x right, y forward.
Vec3 stick_direction(float stick_x, float stick_y, float camera_azimuth);

// Basic motion matching's desired_velocity_update: the stick in world space, scaled per direction relative to
// the character's facing `rotation` by forward / side / back speeds.
Vec3 desired_velocity(const GamepadInput& input, Quat rotation, const ControllerSettings& settings);

// Basic motion matching's desired_rotation_update: face the camera / right stick when strafing, else the
// desired velocity while the stick is held; otherwise keep `current`.
Quat desired_rotation(const GamepadInput& input, Quat current, Vec3 desired_velocity);

// The spring-simulated character root (ground position, facing) that the animation follows.
struct SimulatedRoot {
  Vec3 position, velocity, acceleration;
  Quat rotation;
  Vec3 angular_velocity;

  // The two springs from this state towards a desired velocity and rotation.
  struct Springs {
    VelocitySpring velocity;
    RotationSpring rotation;
  };
  // The decay factors of the two springs over one time span, kept between calls.
  struct Decay {
    DecayFactor velocity, rotation;
  };

  // Advances the springs by dt towards the desired velocity and rotation.
  void update(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& settings, float dt);
  // The same, the exponentials kept in `decay` (the result is the same).
  void update(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& settings, float dt, Decay& decay);
  // The state `seconds` ahead if the desired velocity and rotation stay as they are.
  SimulatedRoot predict(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& settings,
                        float seconds) const;
  // The springs from this state towards the desired velocity and rotation (shared by predictions).
  Springs springs_towards(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& settings) const;
  // The state `seconds` along `springs` (made by springs_towards from this state), the
  // exponentials kept in `decay`: predict() without recomputing what every horizon shares.
  SimulatedRoot after(const Springs& springs, float seconds, Decay& decay) const;
};

}  // namespace lmm
