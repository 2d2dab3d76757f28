#include <gtest/gtest.h>

#include "lmm/core/math.hpp"

using namespace lmm;

namespace {

constexpr float kPi = 3.14159265358979f;

void expect_near(Vec3 a, Vec3 b, float tol = 1e-5f) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

TEST(Math, RotationAboutYTurnsZIntoX) {
  const Quat q = quat_from_angle_axis(0.5f * kPi, Vec3{0, 1, 0});
  expect_near(rotate(q, Vec3{0, 0, 1}), Vec3{1, 0, 0});
  expect_near(inverse_rotate(q, Vec3{1, 0, 0}), Vec3{0, 0, 1});
}

TEST(Math, ProductAppliesRightOperandFirst) {
  const Quat a = quat_from_angle_axis(0.5f * kPi, Vec3{0, 1, 0});
  const Quat b = quat_from_angle_axis(0.5f * kPi, Vec3{1, 0, 0});
  const Vec3 v{0, 1, 0};
  expect_near(rotate(a * b, v), rotate(a, rotate(b, v)));
}

TEST(Math, HeadingFacesDirection) {
  const Vec3 dir = normalize(Vec3{-3, 0, 4});
  expect_near(rotate(quat_from_heading(dir), Vec3{0, 0, 1}), dir);
}

TEST(Math, ScaledAngleAxisRoundTrip) {
  const Vec3 v{0.3f, -1.2f, 0.7f};
  expect_near(to_scaled_angle_axis(from_scaled_angle_axis(v)), v);
  expect_near(to_scaled_angle_axis(Quat{}), Vec3{});
}

TEST(Math, SlerpHitsEndpointsAndMidpoint) {
  const Quat a{}, b = quat_from_angle_axis(1.0f, Vec3{0, 0, 1});
  expect_near(to_scaled_angle_axis(slerp(a, b, 0.0f)), Vec3{});
  expect_near(to_scaled_angle_axis(slerp(a, b, 1.0f)), Vec3{0, 0, 1});
  expect_near(to_scaled_angle_axis(slerp(a, b, 0.5f)), Vec3{0, 0, 0.5f});
  // Shortest arc even when b is given with the opposite sign.
  const Quat nb{-b.w, -b.x, -b.y, -b.z};
  expect_near(to_scaled_angle_axis(slerp(a, nb, 0.5f)), Vec3{0, 0, 0.5f});
}

}  // namespace
