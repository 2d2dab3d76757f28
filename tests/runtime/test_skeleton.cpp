#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "lmm/asset/pose_vector.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/eval/pose_kernels.hpp"

using namespace lmm;

namespace {

constexpr float kPi = 3.14159265358979f;

TEST(Skeleton, ForwardKinematicsMatchesHandComputation) {
  // Root at (1, 0, 0) turned 90 deg about Y; child 1 m along local +Z, itself turned 90 deg
  // about X; grandchild 0.5 m along the child's local +Y.
  const int parents[] = {-1, 0, 1};
  const Vec3 lp[] = {{1, 0, 0}, {0, 0, 1}, {0, 0.5f, 0}};
  const Quat lr[] = {quat_from_angle_axis(0.5f * kPi, {0, 1, 0}),
                     quat_from_angle_axis(0.5f * kPi, {1, 0, 0}), Quat{}};
  Vec3 gp[3];
  Quat gr[3];
  forward_kinematics(parents, 3, lp, lr, gp, gr);
  // Child: (1,0,0) + Ry(90)(0,0,1) = (2,0,0).
  EXPECT_NEAR(gp[1].x, 2.0f, 1e-6f);
  EXPECT_NEAR(gp[1].y, 0.0f, 1e-6f);
  EXPECT_NEAR(gp[1].z, 0.0f, 1e-6f);
  // Grandchild: Rx(90) maps +Y to +Z, then Ry(90) maps +Z to +X: (2.5, 0, 0).
  EXPECT_NEAR(gp[2].x, 2.5f, 1e-6f);
  EXPECT_NEAR(gp[2].y, 0.0f, 1e-6f);
  EXPECT_NEAR(gp[2].z, 0.0f, 1e-6f);
}

TEST(Skeleton, ForwardKinematicsOfManyPosesEqualsOneByOneBitForBit) {
  // 37 poses of a random 22-joint tree (one with a NaN rotation): two groups of sixteen in lanes
  // (where the CPU has AVX-512) and five one by one; each pose's globals equal
  // forward_kinematics' bit for bit, NaN signs included, with the lanes (Auto) and without (Scalar).
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kJoints = 22, kPoses = 37;
  std::vector<int> parents(kJoints);
  for (int i = 0; i < kJoints; ++i) parents[size_t(i)] = i == 0 ? -1 : int(rng() % unsigned(i));
  std::vector<std::vector<Vec3>> lp(kPoses, std::vector<Vec3>(kJoints)), gp = lp, expected_p = lp;
  std::vector<std::vector<Quat>> lr(kPoses, std::vector<Quat>(kJoints)), gr = lr, expected_r = lr;
  std::vector<const Vec3*> lp_of;
  std::vector<const Quat*> lr_of;
  std::vector<Vec3*> gp_of;
  std::vector<Quat*> gr_of;
  for (int c = 0; c < kPoses; ++c) {
    for (int i = 0; i < kJoints; ++i) {
      lp[c][i] = Vec3{100.0f * normal(rng), normal(rng), 0.01f * normal(rng)};
      lr[c][i] = Quat{normal(rng), normal(rng), normal(rng), normal(rng)};
    }
    if (c == 3) lr[c][5].x = std::numeric_limits<float>::quiet_NaN();  // NaN signs must match too
    forward_kinematics(parents.data(), kJoints, lp[c].data(), lr[c].data(), expected_p[c].data(), expected_r[c].data());
    lp_of.push_back(lp[c].data());
    lr_of.push_back(lr[c].data());
    gp_of.push_back(gp[c].data());
    gr_of.push_back(gr[c].data());
  }
  std::vector<float> scratch(size_t(forward_kinematics_scratch(kJoints)));
  for (KernelPath path : {KernelPath::Auto, KernelPath::Scalar}) {
    for (int c = 0; c < kPoses; ++c) {
      std::fill(gp[c].begin(), gp[c].end(), Vec3{7.0f, 7.0f, 7.0f});
      std::fill(gr[c].begin(), gr[c].end(), Quat{7.0f, 7.0f, 7.0f, 7.0f});
    }
    const PoseArrays poses{lp_of.data(), lr_of.data(), gp_of.data(), gr_of.data(), kPoses};
    forward_kinematics_many(parents.data(), kJoints, poses, scratch.data(), path);
    for (int c = 0; c < kPoses; ++c) {
      EXPECT_EQ(std::memcmp(gp[c].data(), expected_p[c].data(), sizeof(Vec3) * kJoints), 0) << c << " " << kernel_path_name(path);
      EXPECT_EQ(std::memcmp(gr[c].data(), expected_r[c].data(), sizeof(Quat) * kJoints), 0) << c << " " << kernel_path_name(path);
    }
  }
}

// Local pose of a three-joint chain at time t (smooth in t).
void chain_pose(float t, Vec3* p, Quat* r) {
  p[0] = Vec3{std::sin(t), 0.1f * t, 2.0f * t};
  p[1] = Vec3{0.0f, 0.4f + 0.1f * std::cos(t), 0.2f};
  p[2] = Vec3{0.3f, 0.0f, 0.0f};
  r[0] = quat_from_angle_axis(0.7f * t, normalize(Vec3{0.2f, 1.0f, 0.1f}));
  r[1] = quat_from_angle_axis(std::sin(2.0f * t), Vec3{1, 0, 0});
  r[2] = quat_from_angle_axis(0.3f * t, Vec3{0, 0, 1});
}

TEST(Skeleton, ForwardKinematicsEqualsTheQuaternionOperatorsBitForBit) {
  // A 22-joint tree of random branches, unnormalised rotations and large offsets: whatever
  // lanes forward_kinematics runs on, each joint equals parent + rotate(parent, offset) and
  // parent * local as math.hpp computes them.
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kJoints = 22;
  int parents[kJoints];
  Vec3 lp[kJoints], gp[kJoints];
  Quat lr[kJoints], gr[kJoints];
  for (int i = 0; i < kJoints; ++i) {
    parents[i] = i == 0 ? -1 : int(rng() % unsigned(i));
    lp[i] = Vec3{100.0f * normal(rng), normal(rng), 0.01f * normal(rng)};
    lr[i] = Quat{normal(rng), normal(rng), normal(rng), normal(rng)};
  }
  forward_kinematics(parents, kJoints, lp, lr, gp, gr);
  EXPECT_EQ(std::memcmp(&gp[0], &lp[0], sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(&gr[0], &lr[0], sizeof(Quat)), 0);
  for (int i = 1; i < kJoints; ++i) {
    const Vec3 position = gp[parents[i]] + rotate(gr[parents[i]], lp[i]);
    const Quat rotation = gr[parents[i]] * lr[i];
    EXPECT_EQ(std::memcmp(&gp[i], &position, sizeof(Vec3)), 0) << "joint " << i;
    EXPECT_EQ(std::memcmp(&gr[i], &rotation, sizeof(Quat)), 0) << "joint " << i;
  }
}

TEST(Skeleton, VelocityKinematicsMatchesFiniteDifferences) {
  const int parents[] = {-1, 0, 1};
  const float t = 0.8f, h = 1e-3f;
  Vec3 p0[3], p1[3], pm[3], lv[3], la[3], gp[3], gv[3], ga[3], gp0[3], gp1[3];
  Quat r0[3], r1[3], rm[3], gr[3], gr0[3], gr1[3];
  chain_pose(t - h, p0, r0);
  chain_pose(t + h, p1, r1);
  chain_pose(t, pm, rm);
  for (int j = 0; j < 3; ++j) {
    lv[j] = (p1[j] - p0[j]) / (2 * h);
    la[j] = to_scaled_angle_axis(r1[j] * inverse(r0[j])) / (2 * h);
  }
  forward_kinematics_velocity(parents, 3, pm, rm, lv, la, gp, gr, gv, ga);
  forward_kinematics(parents, 3, p0, r0, gp0, gr0);
  forward_kinematics(parents, 3, p1, r1, gp1, gr1);
  for (int j = 0; j < 3; ++j) {
    const Vec3 fd = (gp1[j] - gp0[j]) / (2 * h);
    EXPECT_NEAR(gv[j].x, fd.x, 2e-3f) << "joint " << j;
    EXPECT_NEAR(gv[j].y, fd.y, 2e-3f) << "joint " << j;
    EXPECT_NEAR(gv[j].z, fd.z, 2e-3f) << "joint " << j;
    const Vec3 fa = to_scaled_angle_axis(gr1[j] * inverse(gr0[j])) / (2 * h);
    EXPECT_NEAR(ga[j].x, fa.x, 2e-3f) << "joint " << j;
    EXPECT_NEAR(ga[j].y, fa.y, 2e-3f) << "joint " << j;
    EXPECT_NEAR(ga[j].z, fa.z, 2e-3f) << "joint " << j;
  }
}

TEST(Skeleton, ValidateRejectsBadParents) {
  Skeleton s{{"a", "b"}, {-1, 1}, {Vec3{}, Vec3{}}};
  std::string error;
  EXPECT_FALSE(s.validate(error));
  EXPECT_NE(error.find("'b'"), std::string::npos) << error;
  s.parents = {-1, 0};
  EXPECT_TRUE(s.validate(error));
  EXPECT_EQ(s.find("b"), 1);
  EXPECT_EQ(s.find("c"), -1);
  EXPECT_EQ(s.joined_names(), "a, b");
}

}  // namespace
