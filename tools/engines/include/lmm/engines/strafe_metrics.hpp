// How well a character meets strafe requests (facing held, moving sideways or backwards) and
// forward-locomotion requests: facing and velocity errors per kind of request, and which clips
// (by their direction of travel) strafing frames were played from.
#pragma once

#include <vector>

#include "lmm/motion/controller.hpp"
#include "lmm/asset/database.hpp"

namespace lmm::pipeline {

// A direction of travel in character space, with SpeedProfile's cones: forward within 45 degrees
// of the facing, back within 45 degrees of its opposite, side in between; Still below kMovingSpeed.
enum class Travel { Still, Forward, Side, Back };

// The direction of travel of a character-space velocity (x left, z forward).
Travel travel_of(Vec3 local_velocity);

// The direction most moving frames of each clip of `db` travel in (Still for a clip without
// moving frames), one per db.ranges() entry.
std::vector<Travel> clip_travel(const Database& db);

// What one frame of input asks for.
enum class Request { Idle, Forward, Strafe };

// Idle when the stick is deflected less than half way or the desired velocity is below
// kMovingSpeed; Strafe when `input.strafe` and `desired_velocity` travels sideways or backwards
// relative to `desired_facing`; otherwise Forward.
Request classify_request(const GamepadInput& input, Quat desired_facing, Vec3 desired_velocity);

// Angle in degrees (0 to 180) between the ground headings of two rotations.
double facing_error_deg(Quat facing, Quat desired_facing);

// Length (m/s) of the ground-plane difference of two velocities.
double velocity_error_m_s(Vec3 velocity, Vec3 desired_velocity);

// Errors over the frames of one kind of request (NaN without frames).
struct RequestErrors {
  int frames = 0;
  double facing_error_deg = 0.0;    // median: character facing vs desired facing
  double velocity_error_m_s = 0.0;  // median: root velocity vs desired velocity
  double speed_ratio = 0.0;         // mean root speed / mean desired speed (a step cycle's
                                    // speed swings average out)
};

// Collects per-frame errors of strafing and forward-locomotion frames.
class StrafeMetrics {
 public:
  // `clip_travel`: the direction of travel of each clip frames are played from (clip_travel();
  // empty when no clips are known, e.g. for learned characters).
  explicit StrafeMetrics(std::vector<Travel> clip_travel = {});
  // Adds one frame: the request, the character's facing and root velocity, the desired facing
  // and velocity, and the index of the clip the frame was played from (-1: unknown).
  void add(Request request, Quat facing, Vec3 velocity, Quat desired_facing, Vec3 desired_velocity, int clip);

  // Errors of the strafing frames.
  RequestErrors strafe() const { return summary(strafe_); }
  // Errors of the forward-locomotion frames.
  RequestErrors forward() const { return summary(forward_); }
  // Share (0-1) of strafing frames played from clips that travel sideways or backwards; NaN
  // without strafing frames or when no frame's clip was known.
  double strafe_clip_share() const;
  // Strafing frames played from each clip (one count per clip_travel entry).
  const std::vector<int>& strafe_frames_per_clip() const { return strafe_per_clip_; }

 private:
  struct Samples {
    std::vector<double> facing, velocity;
    double speed = 0.0, desired_speed = 0.0;
  };
  static RequestErrors summary(const Samples& samples);

  std::vector<Travel> clip_travel_;
  std::vector<int> strafe_per_clip_;
  Samples strafe_, forward_;
};

}  // namespace lmm::pipeline
