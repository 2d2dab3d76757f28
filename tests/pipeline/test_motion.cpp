#include <gtest/gtest.h>

#include <cmath>

#include "lmm/import/motion.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

struct Loaded {
  Skeleton skeleton;
  Clip clip;
};

Loaded load(const std::string& text) {
  Loaded l;
  clip_from_bvh(parse_bvh(text, "test.bvh"), 0.01f, "test", l.skeleton, l.clip);
  return l;
}

std::vector<Vec3> globals(const Skeleton& s, const Clip& c, int f) {
  std::vector<Vec3> gp(size_t(c.joints));
  std::vector<Quat> gr(size_t(c.joints));
  forward_kinematics(s.parents.data(), c.joints, &c.position(f, 0), &c.rotation(f, 0), gp.data(), gr.data());
  return gp;
}

TEST(Motion, MirrorPairsFollowPatterns) {
  const Loaded l = load(test::straight_walk_bvh(100.0f, 2, 30.0f));
  const std::vector<int> pairs = mirror_pairs(l.skeleton, {{"_L", "_R"}});
  EXPECT_EQ(pairs, (std::vector<int>{0, 1, 4, 5, 2, 3}));
  EXPECT_EQ(mirror_pairs(l.skeleton, {{"Left", "Right"}}), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Motion, MirroringTwiceIsTheIdentity) {
  const Loaded l = load(test::circle_walk_bvh(150.0f, 300.0f, 20, 30.0f));
  const MirrorMap map = mirror_map(l.skeleton, {{"_L", "_R"}}, mean_local_rotations({&l.clip}));
  const Clip once = mirror(l.clip, l.skeleton, map);
  const Clip twice = mirror(once, l.skeleton, map);
  for (size_t i = 0; i < l.clip.positions.size(); ++i) {
    EXPECT_NEAR(length(twice.positions[i] - l.clip.positions[i]), 0.0f, 1e-6f) << i;
    EXPECT_GT(std::fabs(dot(twice.rotations[i], l.clip.rotations[i])), 1.0f - 1e-6f) << i;
  }
  // Once mirrored, the left foot is where the right one was, reflected across x = 0.
  const std::vector<Vec3> a = globals(l.skeleton, l.clip, 13), b = globals(l.skeleton, once, 13);
  EXPECT_NEAR(b[3].x, -a[5].x, 1e-5f);
  EXPECT_NEAR(b[3].y, a[5].y, 1e-5f);
  EXPECT_NEAR(b[3].z, a[5].z, 1e-5f);
}

TEST(Motion, MirroringMapsLocalFramesOfAsymmetricSkeletons) {
  // Legs built along local +X (left) and -X (right), as in the Bandai files, with constant
  // "joint orient" rotations that point them down. Pose A swings the left leg forward by
  // 30 degrees, pose B the right one; mirroring A must give B in local terms.
  constexpr float kPi = 3.14159265f;
  Skeleton s{{"Hips", "UpperLeg_L", "Foot_L", "UpperLeg_R", "Foot_R"},
             {-1, 0, 1, 0, 3},
             {{0, 0.9f, 0}, {0.1f, -0.05f, 0}, {0.8f, 0, 0}, {-0.1f, -0.05f, 0}, {-0.8f, 0, 0}}};
  const Quat left_down = quat_from_angle_axis(-0.5f * kPi, {0, 0, 1});
  const Quat right_down = quat_from_angle_axis(0.5f * kPi, {0, 0, 1});
  const Quat swing = quat_from_angle_axis(-kPi / 6, {1, 0, 0});
  Clip clip;
  clip.frames = 2;
  clip.joints = 5;
  clip.positions = {s.offsets[0], s.offsets[1], s.offsets[2], s.offsets[3], s.offsets[4],
                    s.offsets[0], s.offsets[1], s.offsets[2], s.offsets[3], s.offsets[4]};
  clip.rotations = {Quat{}, swing * left_down, Quat{}, right_down, Quat{},
                    Quat{}, left_down, Quat{}, swing * right_down, Quat{}};
  const MirrorMap map = mirror_map(s, {{"_L", "_R"}}, mean_local_rotations({&clip}));
  const Clip mirrored = mirror(clip, s, map);
  for (int j = 0; j < 5; ++j) {
    EXPECT_GT(std::fabs(dot(mirrored.rotation(0, j), clip.rotation(1, j))), 1.0f - 1e-5f) << s.names[j];
    EXPECT_NEAR(length(mirrored.position(0, j) - clip.position(1, j)), 0.0f, 1e-5f) << s.names[j];
  }
  // And the global pose is the reflection of the original.
  const std::vector<Vec3> a = globals(s, clip, 0), b = globals(s, mirrored, 0);
  EXPECT_NEAR(b[4].x, -a[2].x, 1e-5f);
  EXPECT_NEAR(b[4].z, a[2].z, 1e-5f);
  EXPECT_GT(b[4].z, 0.3f);  // the right foot is now forward
}

TEST(Motion, MirroredClipsKeepTheSkeletonsOffsets) {
  // Left and right limbs built along +X and -X with "joint orient" rotations, a spine whose two
  // arms point apart, and one pose, far from symmetric, as the whole data: the fit to the mean
  // pose alone maps the legs' and arms' frames but not their children's offsets, so mirrored
  // local positions (and a skeleton posed by rotations on its rest offsets) would leave them.
  constexpr float kPi = 3.14159265f;
  Skeleton s{{"Hips", "UpperLeg_L", "Foot_L", "UpperLeg_R", "Foot_R", "Spine", "Arm_L", "Hand_L", "Arm_R", "Hand_R"},
             {-1, 0, 1, 0, 3, 0, 5, 6, 5, 8},
             {{0, 0.9f, 0}, {0.1f, -0.05f, 0}, {0.8f, 0, 0.05f}, {-0.1f, -0.05f, 0}, {-0.8f, 0, 0.05f},
              {0, 0.3f, -0.02f}, {0.15f, 0.25f, 0}, {0.5f, 0.02f, 0}, {-0.15f, 0.25f, 0}, {-0.5f, 0.02f, 0}}};
  const Quat left_down = quat_from_angle_axis(-0.5f * kPi, {0, 0, 1});
  const Quat right_down = quat_from_angle_axis(0.5f * kPi, {0, 0, 1});
  const Quat swing = quat_from_angle_axis(-kPi / 5, {1, 0, 0});
  const Quat bend = quat_from_angle_axis(0.4f, normalize(Vec3{0.3f, 1, 0.2f}));
  Clip clip;
  clip.frames = 1;
  clip.joints = 10;
  clip.positions = s.offsets;
  clip.rotations = {Quat{}, swing * left_down, bend, right_down, Quat{}, bend, Quat{}, bend, swing, Quat{}};
  const MirrorMap map = mirror_map(s, {{"_L", "_R"}}, mean_local_rotations({&clip}));
  const Clip mirrored = mirror(clip, s, map);
  for (int j = 1; j < 10; ++j) {
    EXPECT_NEAR(length(mirrored.position(0, j) - s.offsets[size_t(j)]), 0.0f, 1e-5f) << s.names[j];
  }
  // The mirrored pose is the reflection of the original, with the sides swapped.
  const std::vector<Vec3> a = globals(s, clip, 0), b = globals(s, mirrored, 0);
  for (int j = 0; j < 10; ++j) {
    const Vec3 reflected = a[size_t(map.pairs[size_t(j)])];
    EXPECT_NEAR(length(b[size_t(j)] - Vec3{-reflected.x, reflected.y, reflected.z}), 0.0f, 1e-5f) << s.names[j];
  }
  // And mirroring twice gives the clip back.
  const Clip twice = mirror(mirrored, s, map);
  for (int j = 0; j < 10; ++j) {
    EXPECT_GT(std::fabs(dot(twice.rotation(0, j), clip.rotation(0, j))), 1.0f - 1e-5f) << s.names[j];
  }
}

TEST(Motion, ResampleKeepsDurationAndInterpolates) {
  const Loaded l = load(test::straight_walk_bvh(90.0f, 31, 30.0f));
  const Clip r = resample(l.clip, 60.0f);
  EXPECT_EQ(r.frames, 61);
  EXPECT_FLOAT_EQ(r.fps, 60.0f);
  EXPECT_NEAR(r.position(7, 0).z, 0.9f * 7.0f / 60.0f, 1e-6f);
  EXPECT_NEAR(r.position(60, 0).z, l.clip.position(30, 0).z, 1e-6f);
  // Rotations are slerped: halfway between 0 and 40 degrees about Y is 20 degrees.
  Clip turn = l.clip;
  turn.rotation(1, 0) = quat_from_angle_axis(0.6981317f, Vec3{0, 1, 0});
  const Clip rt = resample(turn, 60.0f);
  EXPECT_NEAR(to_scaled_angle_axis(rt.rotation(1, 0)).y, 0.3490658f, 1e-5f);
}

TEST(Motion, FrameTimePrintedRoundedStillGivesExactRate) {
  std::string text = test::straight_walk_bvh(90.0f, 31, 30.0f);
  text.replace(text.find("Frame Time: "), 20, "Frame Time: 0.0333333\n");
  const Loaded l = load(text);
  EXPECT_EQ(l.clip.fps, 30.0f);
  EXPECT_EQ(resample(l.clip, 60.0f).frames, 61);
}

TEST(Motion, CollapseKeepsGlobalPose) {
  Loaded l = load(test::circle_walk_bvh(150.0f, 300.0f, 5, 30.0f));
  const std::vector<Vec3> before = globals(l.skeleton, l.clip, 4);
  collapse_joints({"UpperLeg_L"}, l.skeleton, l.clip);
  ASSERT_EQ(l.skeleton.joint_count(), 5);
  EXPECT_EQ(l.skeleton.names[2], "Foot_L");
  EXPECT_EQ(l.skeleton.parents[2], 0);
  const std::vector<Vec3> after = globals(l.skeleton, l.clip, 4);
  const int kept[] = {0, 1, 3, 4, 5};
  for (int j = 0; j < 5; ++j) {
    EXPECT_NEAR(after[size_t(j)].x, before[size_t(kept[j])].x, 1e-5f);
    EXPECT_NEAR(after[size_t(j)].y, before[size_t(kept[j])].y, 1e-5f);
    EXPECT_NEAR(after[size_t(j)].z, before[size_t(kept[j])].z, 1e-5f);
  }
  try {
    collapse_joints({"Tail"}, l.skeleton, l.clip);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'Tail'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Foot_R"), std::string::npos) << "lists available joints";
  }
  EXPECT_THROW(collapse_joints({"Hips"}, l.skeleton, l.clip), InputError);  // root, 3 children
}

TEST(Motion, SimulationBoneFollowsHipsOnTheGround) {
  Loaded l = load(test::circle_walk_bvh(150.0f, 300.0f, 90, 30.0f));
  const std::vector<Vec3> before = globals(l.skeleton, l.clip, 45);
  SimulationBoneSettings settings;
  settings.hips = 0;
  settings.left = {2};
  settings.right = {4};
  add_simulation_bone(settings, l.skeleton, l.clip);
  ASSERT_EQ(l.skeleton.names[0], "Simulation");
  EXPECT_EQ(l.skeleton.parents[1], 0);
  const Vec3 root = l.clip.position(45, 0);
  EXPECT_NEAR(root.x, before[0].x, 1e-5f);
  EXPECT_NEAR(root.y, 0.0f, 1e-6f);
  EXPECT_NEAR(root.z, before[0].z, 1e-5f);
  // Facing = path tangent (sin a, 0, cos a) with a = distance / radius.
  const float a = 1.5f * 45.0f / 30.0f / 3.0f;
  const Vec3 facing = rotate(l.clip.rotation(45, 0), Vec3{0, 0, 1});
  EXPECT_NEAR(facing.x, std::sin(a), 1e-4f);
  EXPECT_NEAR(facing.z, std::cos(a), 1e-4f);
  // Global pose is unchanged by the re-rooting.
  const std::vector<Vec3> after = globals(l.skeleton, l.clip, 45);
  for (size_t j = 0; j < before.size(); ++j) {
    EXPECT_NEAR(after[j + 1].x, before[j].x, 1e-5f);
    EXPECT_NEAR(after[j + 1].y, before[j].y, 1e-5f);
    EXPECT_NEAR(after[j + 1].z, before[j].z, 1e-5f);
  }
}

TEST(Motion, VelocitiesAreCentralDifferences) {
  const Loaded l = load(test::circle_walk_bvh(150.0f, 300.0f, 30, 30.0f));
  std::vector<Vec3> v, w;
  compute_velocities(l.clip, v, w);
  const int f = 10, j = 0, n = l.clip.joints;
  const Vec3 expected = (l.clip.position(f + 1, j) - l.clip.position(f - 1, j)) * 15.0f;
  EXPECT_NEAR(v[size_t(f * n + j)].x, expected.x, 1e-5f);
  EXPECT_NEAR(v[size_t(f * n + j)].z, expected.z, 1e-5f);
  // The hips turn at speed / radius = 0.5 rad/s about +Y.
  EXPECT_NEAR(w[size_t(f * n)].y, 0.5f, 1e-3f);
  // One-sided at the ends.
  const Vec3 first = (l.clip.position(1, j) - l.clip.position(0, j)) * 30.0f;
  EXPECT_NEAR(v[0].z, first.z, 1e-5f);
}

TEST(Motion, ContactsNeedLowSpeedAndHeight) {
  // Left foot planted 5 cm above the ground (hips still), right leg swinging fast.
  std::string text = test::biped_hierarchy() + "MOTION\nFrames: 30\nFrame Time: 0.0333333\n";
  for (int f = 0; f < 30; ++f) {
    text += "0 90 0 0 0 0  0 0 0  0 0 0  0 0 0  0 " + std::to_string(40.0 * std::sin(0.5 * f)) +
            " 0  0 0 0\n";
  }
  Loaded l = load(text);
  SimulationBoneSettings sim;
  sim.left = {2};
  sim.right = {4};
  add_simulation_bone(sim, l.skeleton, l.clip);
  std::vector<Vec3> v, w;
  compute_velocities(l.clip, v, w);
  ContactSettings settings;
  settings.joints = {4, 6};
  settings.velocity_threshold = 0.3f;
  settings.height_threshold = 0.08f;
  const std::vector<uint8_t> c = compute_contacts(settings, l.skeleton, l.clip, v, w);
  int left = 0, right = 0;
  for (int f = 0; f < 30; ++f) {
    left += c[size_t(2 * f)];
    right += c[size_t(2 * f + 1)];
  }
  EXPECT_EQ(left, 30);
  EXPECT_LT(right, 10);
}

TEST(Motion, HeightFollowsTheBonesWhateverTheRestPose) {
  // A Bandai-like rig whose rest pose lies along X (the rotations carry the joint orients):
  // its rest height is the bone chain from the foot to the head, not a height in that pose.
  Skeleton s;
  s.names = {"Hips", "Spine", "Head", "Leg_L", "Foot_L", "Leg_R", "Foot_R"};
  s.parents = {-1, 0, 1, 0, 3, 0, 5};
  s.offsets = {{0, 0, 0}, {0.2f, 0, 0}, {0.4f, 0, 0}, {0, 0, 0.1f}, {0.8f, 0, 0}, {0, 0, -0.1f}, {-0.8f, 0, 0}};
  const std::vector<std::pair<std::string, int>> roles{{"head", 2}, {"left_foot", 4}, {"right_foot", 6}};
  // Three frames with the hips at these heights and every rotation identity: the head is at
  // the hips' height.
  std::vector<Vec3> positions;
  for (float hips : {0.9f, 1.3f, 1.0f}) {
    positions.insert(positions.end(), s.offsets.begin(), s.offsets.end());
    positions[positions.size() - s.offsets.size()].y = hips;
  }
  const std::vector<Quat> rotations(positions.size());
  const SkeletonHeight h = measure_height(s, roles, PoseFrames{positions.data(), rotations.data(), 3});
  EXPECT_EQ(h.top, "Head");
  EXPECT_EQ(h.foot, "Foot_L");
  EXPECT_NEAR(h.rest, 0.8f + 0.1f + 0.2f + 0.4f, 1e-6f);
  EXPECT_NEAR(h.standing, 1.0f, 1e-6f);  // the median frame
}

TEST(Motion, GaussianFilterKeepsLinesAwayFromEdges) {
  std::vector<float> line(100);
  for (size_t i = 0; i < line.size(); ++i) line[i] = 0.5f * float(i) - 3.0f;
  const std::vector<float> smooth = gaussian_filter(line, 4.0f);
  for (size_t i = 13; i < 87; ++i) EXPECT_NEAR(smooth[i], line[i], 1e-4f);
  EXPECT_GT(smooth[0], line[0]);  // edges are clamped, so the ends bend
  EXPECT_EQ(gaussian_filter(line, 0.0f), line);
}

TEST(Motion, GaussianFilterRejectsAnUnboundedWidth) {
  // 1e8 s of smoothing, or a 1e-30 s frame time, used to overflow the kernel radius.
  const std::vector<float> values(10, 1.0f);
  for (float v : gaussian_filter(values, kMaxFilterSigma)) EXPECT_NEAR(v, 1.0f, 1e-5f);
  for (float sigma : {2.0f * kMaxFilterSigma, 1e28f, INFINITY}) {
    try {
      gaussian_filter(values, sigma);
      ADD_FAILURE() << "sigma " << sigma << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("smoothing"), std::string::npos) << e.what();
    }
  }
}

TEST(Motion, SimulationBoneSmoothingBeyondTheFilterLimitIsAnError) {
  Loaded l = load(test::straight_walk_bvh(100.0f, 10, 30.0f));
  SimulationBoneSettings settings;
  settings.left = {2};
  settings.right = {4};
  settings.position_sigma = 1e8f;  // seconds
  EXPECT_THROW(add_simulation_bone(settings, l.skeleton, l.clip), InputError);
}

}  // namespace
