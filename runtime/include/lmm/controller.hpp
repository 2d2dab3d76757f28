// Gamepad to desired motion (basic motion matching, desired_velocity_update / desired_rotation_update) and
// a spring-simulated character whose future trajectory feeds the matching query.
#pragma once

#include <string>
#include <vector>

#include "lmm/math.hpp"
#include "lmm/springs.hpp"

namespace lmm {

// One frame of player input. Stick axes in [-1, 1]: x = right, y = up (forward).
struct GamepadInput {
  float left_x = 0.0f, left_y = 0.0f;    // movement
  float right_x = 0.0f, right_y = 0.0f;  // facing while strafing
  float camera_azimuth = 0.0f;           // radians about +Y; 0 = camera looking along +Z
  bool strafe = false;                   // face the camera / right stick instead of the motion
  float gait = 0.0f;                     // 0 = walk speeds, 1 = run speeds (blended between)
};

// Speeds and spring halflives of the simulated character. The default speeds fit the Bandai
// locomotion data (walks average 1.1-1.3 m/s, runs 2.7-2.8 m/s).
struct ControllerSettings {
  float walk_forward = 1.2f, walk_side = 1.0f, walk_back = 0.9f;  // m/s
  float run_forward = 2.8f, run_side = 2.2f, run_back = 1.8f;     // m/s
  float velocity_halflife = 0.2f;  // s
  float rotation_halflife = 0.2f;  // s
};

// Locomotion speeds of motion data, per direction of travel in character space, measured from
// the root (simulation bone) velocities of its frames. Frames slower than kMovingSpeed are left
// out; forward is within 45 degrees of the facing, back within 45 degrees of its opposite, side
// in between. Walk speed = the median speed of a direction, run speed = its 90th percentile. A
// direction with fewer than kMinDirectionFrames moving frames (or 1% of them) keeps the default
// ControllerSettings ratio to forward (side / forward, back / forward) and is marked unmeasured;
// its walk speed is then clamped to its run speed (the ratios cross when forward run / walk is
// under 1.17, e.g. data of one run clip), so that walk <= run holds in every direction.
struct SpeedProfile {
  float walk_forward = 0.0f, walk_side = 0.0f, walk_back = 0.0f;  // m/s
  float run_forward = 0.0f, run_side = 0.0f, run_back = 0.0f;     // m/s
  int frames = 0, moving_frames = 0, forward_frames = 0, side_frames = 0, back_frames = 0;
  bool side_measured = false, back_measured = false;

  // Whether speeds are known (enough forward motion was measured, or a bundle stored them).
  bool valid() const { return walk_forward > 0.0f; }
  // The six speeds in the order walk forward, side, back, run forward, side, back.
  std::vector<float> values() const;
  // Writes the six speeds into `settings` (when valid(); otherwise leaves it unchanged), each
  // walk speed clamped to its run speed (as measure_speeds makes them; bundles exported before
  // that may hold crossed speeds).
  void apply(ControllerSettings& settings) const;
};

constexpr float kMovingSpeed = 0.3f;       // m/s: slower root motion is standing or shuffling
constexpr float kMaxSpeed = 100.0f;        // m/s: a stored speed beyond this is corrupt
constexpr int kMinDirectionFrames = 30;    // moving frames a direction needs to be measured

// Measures the speed profile of `count` root velocities, each seen in the root's own frame
// (character space: x left, z forward). Allocates (a copy of the speeds); no limit on count.
SpeedProfile measure_speeds(const Vec3* local_root_velocities, int count);

// One value of a controller config: its key (e.g. "run_forward") and value.
struct ControllerValue {
  std::string key;
  float value = 0.0f;
};

// Parses a controller config (docs/configs.md#controller-configs): the TOML subset of a
// [speeds] and a [springs] table of `key = number` lines and '#' comments. Keys: walk_forward,
// walk_side, walk_back, run_forward, run_side, run_back (m/s, in [0.01, kMaxSpeed]) and
// velocity_halflife, rotation_halflife (s, in [0.001, 10]). False with a message "LINE: ..."
// naming the table, key and accepted range at fault; `values` holds the keys given, in order.
bool parse_controller_config(const std::string& text, std::vector<ControllerValue>& values, std::string& error);
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
  void update(Vec3 desired_velocity, Quat desired_rotation, const ControllerSettings& settings, float dt,
              Decay& decay);
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
