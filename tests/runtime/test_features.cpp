#include <gtest/gtest.h>

#include "lmm/asset/features.hpp"

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
  for (FeatureKind k : {FeatureKind::BonePosition, FeatureKind::BoneVelocity, FeatureKind::TrajectoryPosition,
                        FeatureKind::TrajectoryDirection, FeatureKind::Phase}) {
    FeatureKind parsed;
    ASSERT_TRUE(parse_feature_kind(feature_kind_name(k), parsed));
    EXPECT_EQ(parsed, k);
  }
  EXPECT_STREQ(feature_kind_name(FeatureKind::Phase), "phase");
  FeatureKind unused;
  EXPECT_FALSE(parse_feature_kind("rotation", unused));
}

// Issue 17: a phase group (Kleanthous & Martini 2023, Table 10's phase embedding) is a pose
// group of 2 dims per channel, written from the frame's phase embedding by write_phase_features
// only: compute_features and the query's trajectory part leave its dims alone.
TEST(Features, PhaseGroupsCopyTheirChannelsOfTheEmbedding) {
  FeatureSchema s = four_kinds_schema();
  s.groups.insert(s.groups.begin() + 2, FeatureGroup{"phase", FeatureKind::Phase, {0, 1, 2}, 1.0f, 0, {}});
  std::string error;
  ASSERT_TRUE(s.finalize(2, error)) << error;
  EXPECT_EQ(s.dims, 3 + 3 + 6 + 4 + 2);
  EXPECT_EQ(s.phase_channels, 3);
  EXPECT_EQ(s.trajectory_offsets, (std::vector<int>{-6, 20}));
  EXPECT_FALSE(is_trajectory_kind(FeatureKind::Phase));
  const int first = s.groups[2].first_dim;
  EXPECT_EQ(first, 6);

  const float untouched = 42.0f;
  std::vector<float> out(size_t(s.dims), untouched);
  const Vec3 positions[] = {{0, 0, 0}, {0.2f, 0.9f, 0.1f}};
  const Vec3 velocities[] = {{0, 0, 0}, {1, 0, 0.5f}};
  const RootSample root{{0, 0, 0}, Quat{}};
  const RootSample trajectory[] = {{{0, 0, -0.5f}, Quat{}}, {{0, 0, 1}, Quat{}}};
  compute_features(s, positions, velocities, root, trajectory, out.data());
  const std::vector<float> offset(out.size(), 0.0f), scale(out.size(), 1.0f);
  compute_trajectory_features(s, root, trajectory, offset.data(), scale.data(), out.data());
  for (int d = first; d < first + 6; ++d) EXPECT_EQ(out[size_t(d)], untouched) << "dim " << d;

  const float embedding[] = {0.5f, -0.25f, 0.75f, 0.1f, -0.3f, 0.2f};
  write_phase_features(s, embedding, out.data());
  for (int d = 0; d < 6; ++d) EXPECT_EQ(out[size_t(first + d)], embedding[d]) << "dim " << d;
  EXPECT_EQ(out[0], 0.2f);  // the others as compute_features wrote them
}

TEST(Features, FinalizeRejectsPhaseChannelsOutOfRange) {
  for (int channel : {-1, kMaxPhaseChannels}) {
    FeatureSchema s;
    s.groups.push_back({"phase", FeatureKind::Phase, {0, channel}, 1.0f, 0, {}});
    std::string error;
    EXPECT_FALSE(s.finalize(2, error));
    EXPECT_NE(error.find("'phase': phase channel " + std::to_string(channel)), std::string::npos) << error;
  }
}

// trajectory_from_features inverts compute_trajectory_features: normalised trajectory features of
// a root and its samples give the samples' ground positions and facings back (the -6 sample has no
// direction group: zero), at another root too (the features are relative to the root).
TEST(Features, TrajectoryFromFeaturesInvertsTheTrajectoryFeatures) {
  FeatureSchema s = four_kinds_schema();
  std::string error;
  ASSERT_TRUE(s.finalize(2, error)) << error;
  const RootSample root{{1, 0, 2}, quat_from_angle_axis(0.3f, {0, 1, 0})};
  const RootSample trajectory[] = {{{0.5f, 0, 1.7f}, quat_from_angle_axis(0.1f, {0, 1, 0})},
                                   {{2.2f, 0, 3.1f}, quat_from_angle_axis(1.4f, {0, 1, 0})}};
  std::vector<float> features(size_t(s.dims), 0.0f), offset(features.size()), scale(features.size());
  for (size_t d = 0; d < features.size(); ++d) offset[d] = 0.1f * float(d), scale[d] = 0.5f + 0.25f * float(d);
  compute_trajectory_features(s, root, trajectory, offset.data(), scale.data(), features.data());
  Vec3 positions[2], directions[2];
  trajectory_from_features(s, features.data(), offset.data(), scale.data(), root, positions, directions);
  for (int m = 0; m < 2; ++m) {
    EXPECT_NEAR(positions[m].x, trajectory[m].position.x, 1e-5f) << "sample " << m;
    EXPECT_NEAR(positions[m].z, trajectory[m].position.z, 1e-5f) << "sample " << m;
  }
  const Vec3 facing = rotate(trajectory[1].rotation, Vec3{0, 0, 1});
  EXPECT_NEAR(directions[1].x, facing.x, 1e-5f);
  EXPECT_NEAR(directions[1].z, facing.z, 1e-5f);
  EXPECT_EQ(length(directions[0]), 0.0f);
  // At a root moved by (3, 0, -1) and turned by a further 90 degrees: moved and turned alike.
  const Quat turn = quat_from_angle_axis(0.5f * kPi, {0, 1, 0});
  const RootSample elsewhere{root.position + Vec3{3, 0, -1}, turn * root.rotation};
  trajectory_from_features(s, features.data(), offset.data(), scale.data(), elsewhere, positions, directions);
  const Vec3 moved = elsewhere.position + rotate(turn, trajectory[1].position - root.position);
  EXPECT_NEAR(positions[1].x, moved.x, 1e-5f);
  EXPECT_NEAR(positions[1].z, moved.z, 1e-5f);
  EXPECT_NEAR(directions[1].x, rotate(turn, facing).x, 1e-5f);
}

TEST(Features, NormalizeAppliesOffsetAndScale) {
  float v[] = {3.0f, -1.0f};
  const float offset[] = {1.0f, 1.0f}, scale[] = {2.0f, 0.5f};
  normalize_features(v, offset, scale, 2);
  EXPECT_FLOAT_EQ(v[0], 1.0f);
  EXPECT_FLOAT_EQ(v[1], -4.0f);
}

}  // namespace
