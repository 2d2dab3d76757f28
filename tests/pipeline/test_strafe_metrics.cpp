// The strafing metrics of lmm-sim / lmm-eval (lmm::pipeline::StrafeMetrics and its helpers) and
// the random strafe requests of lmm-sim --random-strafe.
#include <gtest/gtest.h>

#include <cmath>

#include "lmm/engines/simulation.hpp"
#include "lmm/engines/strafe_metrics.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

constexpr float kPi = 3.14159265f;
const Vec3 kUp{0.0f, 1.0f, 0.0f};

Quat heading(float degrees) { return quat_from_angle_axis(degrees * kPi / 180.0f, kUp); }

// A character-space velocity of `speed` travelling `degrees` from the facing (towards +X, left).
Vec3 travelling(float degrees, float speed) {
  return Vec3{speed * std::sin(degrees * kPi / 180.0f), 0.0f, speed * std::cos(degrees * kPi / 180.0f)};
}

TEST(StrafeMetrics, TravelUsesTheFortyFiveDegreeCones) {
  for (float degrees : {0.0f, 30.0f, -44.0f}) EXPECT_EQ(travel_of(travelling(degrees, 1.0f)), Travel::Forward) << degrees;
  for (float degrees : {46.0f, 90.0f, -90.0f, 134.0f}) EXPECT_EQ(travel_of(travelling(degrees, 1.0f)), Travel::Side) << degrees;
  for (float degrees : {136.0f, 180.0f, -150.0f}) EXPECT_EQ(travel_of(travelling(degrees, 1.0f)), Travel::Back) << degrees;
  EXPECT_EQ(travel_of(travelling(90.0f, 0.9f * kMovingSpeed)), Travel::Still);
  // Vertical motion is not travel.
  EXPECT_EQ(travel_of(Vec3{0.0f, 5.0f, 0.0f}), Travel::Still);
}

TEST(StrafeMetrics, FacingErrorIsTheHeadingDifference) {
  const float pairs[][2] = {{0.0f, 10.0f}, {30.0f, -45.0f}, {170.0f, -170.0f}, {90.0f, -90.0f}, {-120.0f, 100.0f}};
  for (const auto& p : pairs) {
    float expected = std::fabs(p[0] - p[1]);
    if (expected > 180.0f) expected = 360.0f - expected;
    EXPECT_NEAR(facing_error_deg(heading(p[0]), heading(p[1])), expected, 1e-3) << p[0] << " vs " << p[1];
  }
  // A leaning character faces where its heading on the ground points.
  const Quat lean = quat_from_angle_axis(0.3f, Vec3{1.0f, 0.0f, 0.0f});
  EXPECT_NEAR(facing_error_deg(heading(25.0f) * lean, heading(0.0f)), 25.0, 1e-3);
}

TEST(StrafeMetrics, VelocityErrorIgnoresHeight) {
  const Vec3 velocity{1.0f, 0.5f, 2.0f}, desired{-0.5f, 3.0f, 4.0f};
  EXPECT_NEAR(velocity_error_m_s(velocity, desired), std::hypot(1.0 - -0.5, 2.0 - 4.0), 1e-6);
}

// The input of a strafe request: facing the camera at `camera_degrees`, stick at `stick_degrees`
// from up (positive = towards the left).
GamepadInput strafe_input(float camera_degrees, float stick_degrees) {
  GamepadInput in;
  in.strafe = true;
  in.camera_azimuth = camera_degrees * kPi / 180.0f;
  in.left_x = -std::sin(stick_degrees * kPi / 180.0f);
  in.left_y = std::cos(stick_degrees * kPi / 180.0f);
  return in;
}

// What the character's controller asks for with `in`: (desired facing, desired velocity).
std::pair<Quat, Vec3> desired(const GamepadInput& in, Quat current) {
  const ControllerSettings settings;
  const Vec3 velocity = desired_velocity(in, current, settings);
  return {desired_rotation(in, current, velocity), velocity};
}

TEST(StrafeMetrics, RequestsAreClassifiedByTheControllersDesiredMotion) {
  const Quat current = heading(40.0f);
  for (float stick : {90.0f, -90.0f, 180.0f}) {
    const GamepadInput in = strafe_input(40.0f, stick);
    const auto [facing, velocity] = desired(in, current);
    EXPECT_EQ(classify_request(in, facing, velocity), Request::Strafe) << stick;
  }
  // Strafing with the stick forward is forward locomotion; without strafe the facing follows
  // the stick, so any direction is forward locomotion.
  GamepadInput in = strafe_input(40.0f, 10.0f);
  auto [facing, velocity] = desired(in, current);
  EXPECT_EQ(classify_request(in, facing, velocity), Request::Forward);
  in = strafe_input(40.0f, 90.0f);
  in.strafe = false;
  std::tie(facing, velocity) = desired(in, current);
  EXPECT_EQ(classify_request(in, facing, velocity), Request::Forward);
  // ... also while the character is still turning towards the stick.
  EXPECT_EQ(classify_request(in, current, velocity), Request::Forward);
  // Less than half a stick is idle.
  in = strafe_input(40.0f, 90.0f);
  in.left_x *= 0.4f, in.left_y *= 0.4f;
  std::tie(facing, velocity) = desired(in, current);
  EXPECT_EQ(classify_request(in, facing, velocity), Request::Idle);
}

TEST(StrafeMetrics, SummariesAndClipShare) {
  // Clips 0..2 travel forward, sideways and backwards.
  StrafeMetrics metrics({Travel::Forward, Travel::Side, Travel::Back});
  EXPECT_TRUE(std::isnan(metrics.strafe().facing_error_deg));
  EXPECT_TRUE(std::isnan(metrics.strafe_clip_share()));
  const float facing_errors[] = {40.0f, 10.0f, 20.0f, 5.0f};
  const int clips[] = {0, 1, 2, 2};
  const float speeds[] = {0.2f, 0.5f, 0.7f, 0.6f}, desired_speed = 0.6f;
  for (int i = 0; i < 4; ++i) {
    metrics.add(Request::Strafe, heading(facing_errors[i]), travelling(0.0f, speeds[i]), heading(0.0f),
                travelling(0.0f, desired_speed), clips[i]);
  }
  // Forward frames and idle frames leave the strafing figures alone.
  metrics.add(Request::Forward, heading(90.0f), travelling(0.0f, 3.0f), heading(0.0f), travelling(0.0f, 1.0f), 0);
  metrics.add(Request::Idle, heading(90.0f), travelling(0.0f, 3.0f), heading(0.0f), travelling(0.0f, 1.0f), 0);
  const RequestErrors strafe = metrics.strafe();
  EXPECT_EQ(strafe.frames, 4);
  EXPECT_NEAR(strafe.facing_error_deg, 20.0, 1e-3);  // median (upper of the middle two: 10, 20)
  // Errors 0.4, 0.1, 0.1, 0 (speeds against 0.6): the upper middle one.
  EXPECT_NEAR(strafe.velocity_error_m_s, std::fabs(desired_speed - 0.5f), 1e-6);
  EXPECT_NEAR(strafe.speed_ratio, (0.2 + 0.5 + 0.7 + 0.6) / (4.0 * desired_speed), 1e-6);
  EXPECT_NEAR(metrics.strafe_clip_share(), 3.0 / 4.0, 1e-12);
  EXPECT_EQ(metrics.strafe_frames_per_clip(), (std::vector<int>{1, 1, 2}));
  const RequestErrors forward = metrics.forward();
  EXPECT_EQ(forward.frames, 1);
  EXPECT_NEAR(forward.facing_error_deg, 90.0, 1e-3);
  EXPECT_NEAR(forward.velocity_error_m_s, 2.0, 1e-6);
  EXPECT_NEAR(forward.speed_ratio, 3.0, 1e-6);
  // Frames of unknown clips (learned characters) count in the errors, not in the share.
  metrics.add(Request::Strafe, heading(0.0f), travelling(0.0f, 0.6f), heading(0.0f), travelling(0.0f, 0.6f), -1);
  EXPECT_EQ(metrics.strafe().frames, 5);
  EXPECT_NEAR(metrics.strafe_clip_share(), 3.0 / 4.0, 1e-12);
}

TEST(StrafeMetrics, RandomStrafeScriptsHoldTheFacingWhileSteppingSidewaysOrBack) {
  const InputScript script = random_input_script(3, 600.0f, true);
  int strafing = 0, forward = 0;
  const InputKey* previous = nullptr;
  for (const InputKey& key : script.keys) {
    const GamepadInput& in = key.input;
    if (in.strafe) {
      ++strafing;
      // The stick, seen from the camera the character faces, points sideways or backwards.
      const Quat facing = heading(in.camera_azimuth * 180.0f / kPi);
      const Vec3 velocity = desired_velocity(in, facing, ControllerSettings{});
      EXPECT_NE(travel_of(inverse_rotate(facing, velocity)), Travel::Forward) << key.time;
      EXPECT_EQ(in.right_x * in.right_x + in.right_y * in.right_y, 0.0f) << "faces the camera at " << key.time;
      if (previous && previous->input.strafe) {
        EXPECT_EQ(in.camera_azimuth, previous->input.camera_azimuth) << key.time;
      }
    } else {
      forward += in.left_x * in.left_x + in.left_y * in.left_y > 0.0f ? 1 : 0;
    }
    previous = &key;
  }
  // Both kinds of request, each a sizeable part of the keys.
  EXPECT_GT(strafing, int(script.keys.size()) / 4);
  EXPECT_GT(forward, int(script.keys.size()) / 4);
}

}  // namespace
