#include <gtest/gtest.h>

#include "lmm/features.hpp"

using namespace lmm;

namespace {

constexpr float kPi = 3.14159265358979f;

FeatureSchema four_kinds_schema() {
  FeatureSchema s;
  s.groups.push_back({"foot_pos", FeatureKind::BonePosition, {1}, 1.0f, 0, {}});
  s.groups.push_back({"foot_vel", FeatureKind::BoneVelocity, {1}, 1.0f, 0, {}});
  s.groups.push_back({"traj_pos", FeatureKind::TrajectoryPosition, {20, -6}, 1.0f, 0, {}});
  s.groups.push_back({"traj_dir", FeatureKind::TrajectoryDirection, {20}, 1.5f, 0, {}});
  return s;
}

TEST(Features, FinalizeAssignsDimsAndSortedOffsets) {
  FeatureSchema s = four_kinds_schema();
  std::string error;
  ASSERT_TRUE(s.finalize(2, error)) << error;
  EXPECT_EQ(s.dims, 3 + 3 + 4 + 2);
  EXPECT_EQ(s.groups[2].first_dim, 6);
  EXPECT_EQ(s.trajectory_offsets, (std::vector<int>{-6, 20}));
  EXPECT_EQ(s.groups[2].sample_indices, (std::vector<int>{1, 0}));
}

TEST(Features, CharacterSpaceValuesMatchHandComputation) {
  FeatureSchema s = four_kinds_schema();
  std::string error;
  ASSERT_TRUE(s.finalize(2, error)) << error;
  // Root at (1, 0, 2) facing +X (90 deg about Y): world +X is character +Z, world +Z is -X.
  const RootSample root{{1, 0, 2}, quat_from_angle_axis(0.5f * kPi, {0, 1, 0})};
  const Vec3 positions[] = {{1, 0, 2}, {1, 0.1f, 3}};
  const Vec3 velocities[] = {{0, 0, 0}, {2, 0, 0}};
  // Samples in trajectory_offsets order (-6, +20): 0.5 m behind, 1 m ahead turned further.
  const RootSample trajectory[] = {{{0.5f, 0, 2}, root.rotation},
                                   {{2, 0, 2}, quat_from_angle_axis(kPi, {0, 1, 0})}};
  float out[12];
  compute_features(s, positions, velocities, root, trajectory, out);
  const float expected[12] = {-1, 0.1f, 0,   // foot 1 m along world +Z = character -X
                              0, 0, 2,       // velocity along world +X = character +Z
                              0, 1, 0, -0.5f,  // +20 frames ahead, then -6 frames behind
                              1, 0};         // facing world -Z = the character's left, +X
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(out[i], expected[i], 1e-5f) << "dim " << i;
}

TEST(Features, FinalizeRejectsBadGroups) {
  std::string error;
  FeatureSchema bad_joint;
  bad_joint.groups.push_back({"feet", FeatureKind::BonePosition, {7}, 1.0f, 0, {}});
  EXPECT_FALSE(bad_joint.finalize(3, error));
  EXPECT_NE(error.find("'feet'"), std::string::npos) << error;
  FeatureSchema empty;
  empty.groups.push_back({"nothing", FeatureKind::TrajectoryPosition, {}, 1.0f, 0, {}});
  EXPECT_FALSE(empty.finalize(3, error));
  EXPECT_NE(error.find("'nothing'"), std::string::npos) << error;
  FeatureSchema zero_weight;
  zero_weight.groups.push_back({"w", FeatureKind::BoneVelocity, {1}, 0.0f, 0, {}});
  EXPECT_FALSE(zero_weight.finalize(3, error));
}

TEST(Features, KindNamesRoundTrip) {
  for (FeatureKind k : {FeatureKind::BonePosition, FeatureKind::BoneVelocity,
                        FeatureKind::TrajectoryPosition, FeatureKind::TrajectoryDirection}) {
    FeatureKind parsed;
    ASSERT_TRUE(parse_feature_kind(feature_kind_name(k), parsed));
    EXPECT_EQ(parsed, k);
  }
  FeatureKind unused;
  EXPECT_FALSE(parse_feature_kind("phase", unused));
}

TEST(Features, NormalizeAppliesOffsetAndScale) {
  float v[] = {3.0f, -1.0f};
  const float offset[] = {1.0f, 1.0f}, scale[] = {2.0f, 0.5f};
  normalize_features(v, offset, scale, 2);
  EXPECT_FLOAT_EQ(v[0], 1.0f);
  EXPECT_FLOAT_EQ(v[1], -4.0f);
}

}  // namespace
