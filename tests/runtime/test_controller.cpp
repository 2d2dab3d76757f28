#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "lmm/motion/controller.hpp"
#include "lmm/motion/ik.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/core/springs.hpp"

using namespace lmm;

namespace {

constexpr float kPi = 3.14159265f;

TEST(Springs, ClosedFormIsStepSizeIndependent) {
  Vec3 p1, v1{1, 0, 0}, a1, p2, v2{1, 0, 0}, a2;
  const Vec3 goal{0, 0, 2};
  spring_velocity_update(p1, v1, a1, goal, 0.3f, 3.0f);
  for (int i = 0; i < 300; ++i) spring_velocity_update(p2, v2, a2, goal, 0.3f, 0.01f);
  EXPECT_NEAR(length(p1 - p2), 0.0f, 1e-3f);
  EXPECT_NEAR(length(v1 - v2), 0.0f, 1e-4f);
  EXPECT_NEAR(length(v1 - goal), 0.0f, 1e-3f);  // converged after ten halflives
  // Position integrates velocity: the finite difference over a tiny step matches.
  Vec3 p3 = p1, v3 = v1, a3 = a1;
  spring_velocity_update(p3, v3, a3, goal, 0.3f, 1e-3f);
  EXPECT_NEAR(length((p3 - p1) / 1e-3f - v1), 0.0f, 1e-2f);
}

TEST(Springs, RotationAndDecayConverge) {
  Quat q = quat_from_angle_axis(2.0f, {0, 1, 0});
  Vec3 w;
  const Quat goal = quat_from_angle_axis(-1.0f, {0, 1, 0});
  for (int i = 0; i < 120; ++i) spring_rotation_update(q, w, goal, 0.2f, 1.0f / 60.0f);
  EXPECT_GT(std::fabs(dot(q, goal)), 1.0f - 1e-4f);
  Vec3 x{1, 2, 3}, v{4, 0, 0};
  for (int i = 0; i < 120; ++i) spring_decay(x, v, 0.1f, 1.0f / 60.0f);
  EXPECT_LT(length(x), 1e-3f);
  EXPECT_LT(length(v), 1e-2f);
}

TEST(Controller, StickAndCameraGiveDesiredVelocity) {
  ControllerSettings s;
  GamepadInput in;
  in.left_y = 1.0f;  // forward, camera looking along +Z
  const Vec3 v = desired_velocity(in, Quat{}, s);
  EXPECT_NEAR(v.z, s.walk_forward, 1e-5f);
  EXPECT_NEAR(v.x, 0.0f, 1e-5f);
  in.gait = 1.0f;
  EXPECT_NEAR(desired_velocity(in, Quat{}, s).z, s.run_forward, 1e-5f);
  in.gait = 0.0f;
  in.left_y = -1.0f;  // backwards relative to a character facing +Z
  EXPECT_NEAR(desired_velocity(in, Quat{}, s).z, -s.walk_back, 1e-5f);
  in.left_y = 0.0f;
  in.left_x = 1.0f;  // right on screen = world -X with this camera
  EXPECT_NEAR(desired_velocity(in, Quat{}, s).x, -s.walk_side, 1e-5f);
  // Camera turned 90 degrees: stick forward now moves along the camera's forward (+X).
  in = GamepadInput{};
  in.left_y = 1.0f;
  in.camera_azimuth = 0.5f * kPi;
  const Vec3 turned = desired_velocity(in, quat_from_heading({1, 0, 0}), s);
  EXPECT_NEAR(turned.x, s.walk_forward, 1e-4f);
  EXPECT_NEAR(turned.z, 0.0f, 1e-4f);
}

// Root velocities (character space, +z forward) of `count` frames at `speed` in `direction`.
void add_frames(std::vector<Vec3>& v, int count, float speed, Vec3 direction) {
  for (int i = 0; i < count; ++i) v.push_back(normalize(direction) * speed);
}

// Issue 40: a stick value of 1e30 squared to infinity and acted as zero.
TEST(Controller, HugeStickValuesAreAFullTiltNotZero) {
  const Vec3 right = stick_direction(1e30f, 0.0f, 0.0f), diagonal = stick_direction(-3e38f, 3e38f, 0.0f);
  EXPECT_NEAR(right.x, -1.0f, 1e-6f);
  EXPECT_NEAR(right.z, 0.0f, 1e-6f);
  EXPECT_NEAR(diagonal.x, 0.70710678f, 1e-6f);
  EXPECT_NEAR(diagonal.z, 0.70710678f, 1e-6f);
  GamepadInput input;
  input.left_y = 1e30f;
  const ControllerSettings settings;
  const Vec3 v = desired_velocity(input, Quat{}, settings);
  EXPECT_NEAR(v.z, settings.walk_forward, 1e-5f);
  const Vec3 small = stick_direction(0.6f, 0.3f, 0.0f);  // in range: untouched
  EXPECT_EQ(small.x, -0.6f);
  EXPECT_EQ(small.z, 0.3f);
}

TEST(Speeds, WalkIsTheMedianAndRunThe90thPercentileOfEachDirection) {
  std::vector<Vec3> v;
  add_frames(v, 700, 1.0f, Vec3{0.2f, 0, 1});   // forward walk (11 degrees off)
  add_frames(v, 300, 3.0f, Vec3{0, 0, 1});      // forward run
  add_frames(v, 100, 0.8f, Vec3{0.1f, 0, -1});  // backwards: enough to measure
  add_frames(v, 10, 0.9f, Vec3{1, 0, 0});       // sideways: too few
  add_frames(v, 200, 0.1f, Vec3{0, 0, 1});      // standing: left out
  v.push_back(Vec3{std::nanf(""), 0, 1});      // corrupt: left out
  const SpeedProfile p = measure_speeds(v.data(), int(v.size()));
  EXPECT_EQ(p.frames, 1311);
  EXPECT_EQ(p.moving_frames, 1110);
  EXPECT_EQ(p.forward_frames, 1000);
  EXPECT_FLOAT_EQ(p.walk_forward, 1.0f);
  EXPECT_FLOAT_EQ(p.run_forward, 3.0f);
  EXPECT_TRUE(p.back_measured);
  EXPECT_FLOAT_EQ(p.walk_back, 0.8f);
  EXPECT_FALSE(p.side_measured);
  const ControllerSettings d;
  EXPECT_FLOAT_EQ(p.walk_side, 1.0f * d.walk_side / d.walk_forward);
  EXPECT_FLOAT_EQ(p.run_side, 3.0f * d.run_side / d.run_forward);
  ControllerSettings applied;
  p.apply(applied);
  EXPECT_EQ(applied.run_forward, 3.0f);
  EXPECT_EQ(applied.velocity_halflife, d.velocity_halflife);
}

// Issue 40: with forward run / walk under 1.17 (one run clip) the default ratios gave a walk speed
// above its run speed, which the tools refused.
TEST(Speeds, UnmeasuredDirectionsNeverWalkFasterThanTheyRun) {
  std::vector<Vec3> v;
  add_frames(v, 300, 2.7f, Vec3{0, 0, 1});  // one run clip: walk (median) 2.7, run (90th) 2.9 m/s
  add_frames(v, 100, 2.9f, Vec3{0, 0, 1});
  const SpeedProfile p = measure_speeds(v.data(), int(v.size()));
  ASSERT_TRUE(p.valid());
  EXPECT_FALSE(p.side_measured || p.back_measured);
  EXPECT_LE(p.walk_side, p.run_side);
  EXPECT_LE(p.walk_back, p.run_back);
  EXPECT_FLOAT_EQ(p.run_back, 2.9f * ControllerSettings{}.run_back / ControllerSettings{}.run_forward);
  SpeedProfile crossed = p;  // as a bundle exported before the clamp stores them
  crossed.walk_back = 2.0f, crossed.run_back = 1.8f;
  ControllerSettings applied;
  crossed.apply(applied);
  EXPECT_EQ(applied.walk_back, 1.8f);
  EXPECT_EQ(applied.run_back, 1.8f);
}

TEST(Speeds, DataWithoutForwardMotionGivesNoProfile) {
  std::vector<Vec3> v;
  add_frames(v, 500, 0.1f, Vec3{0, 0, 1});
  add_frames(v, 500, 1.5f, Vec3{1, 0, 0});
  const SpeedProfile p = measure_speeds(v.data(), int(v.size()));
  EXPECT_FALSE(p.valid());
  ControllerSettings settings;
  p.apply(settings);
  EXPECT_EQ(settings.walk_forward, ControllerSettings{}.walk_forward);
}

TEST(ControllerConfig, ParsesTheTablesAndAppliesOnlyTheKeysGiven) {
  std::vector<ControllerValue> values;
  std::string error;
  ASSERT_TRUE(parse_controller_config("# a comment\n[speeds]\nrun_forward = 3  # m/s\n\n[springs]\n"
                                      "rotation_halflife=0.25\n",
                                      values, error))
      << error;
  ASSERT_EQ(values.size(), 2u);
  ControllerSettings settings;
  apply_controller_values(values, settings);
  EXPECT_EQ(settings.run_forward, 3.0f);
  EXPECT_EQ(settings.rotation_halflife, 0.25f);
  EXPECT_EQ(settings.walk_forward, ControllerSettings{}.walk_forward);
  const std::pair<const char*, const char*> bad[] = {
      {"[speeds]\nrun_forward = 200\n", "2: [speeds]: 'run_forward' = 200 is outside [0.01, 100] m/s"},
      {"[speeds]\nrun_forward = 2 m/s\n", "2: [speeds]: 'run_forward' must be a number"},
      {"[speeds]\nrun_forward = nan\n", "2: [speeds]: 'run_forward' must be a number"},
      {"[speeds\n", "1: unknown table '[speeds'"},
      {"run_forward = 2\n", "1: 'run_forward = 2' is outside the [speeds], [springs] and [states.NAME] tables"},
      {"[springs]\nrun_forward = 2\n", "2: [springs]: unknown key 'run_forward'"},
      {"[speeds]\nrun_forward\n", "2: expected 'key = number'"},
      // Issue 40: these were accepted.
      {"[speeds]]\nrun_forward = 2\n", "1: unknown table '[speeds]]'"},
      {"[speeds]\nrun_forward = 2\n[springs]\n[speeds]\nwalk_forward = 1\n", "4: table [speeds] is given twice"},
      {"[springs]\nvelocity_halflife = 0.0009\n", "2: [springs]: 'velocity_halflife' = 0.0009 is outside [0.001, 10] s"},
  };
  // Issue 40: the bounds themselves, written as text, were refused (a double against a float).
  ASSERT_TRUE(parse_controller_config("[springs]\nvelocity_halflife = 0.001\nrotation_halflife = 10\n[speeds]\n"
                                      "walk_forward = 0.01\nrun_forward = 100\n",
                                      values, error))
      << error;
  EXPECT_EQ(values[0].value, 0.001f);
  for (const auto& [text, message] : bad) {
    values = {ControllerValue{"kept", 1.0f}};
    EXPECT_FALSE(parse_controller_config(text, values, error)) << text;
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_EQ(values.size(), 1u) << "a failed parse leaves the values alone";
  }
}

TEST(ControllerConfig, StateTablesParseAndBadOnesNameTheLineAndKey) {
  std::vector<ControllerValue> values;
  std::vector<StateConfig> states;
  std::string error;
  ASSERT_TRUE(parse_controller_config("[states.armed]\nrequire = [ \"armed\" , \"walk\" ]  # comment\nexclude = []\n"
                                      "[states.cut-scene_2]\nidle = false\ntransition_cost = 1e6\n",
                                      values, error, &states))
      << error;
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].name, "armed");
  EXPECT_EQ(states[0].require, (std::vector<std::string>{"armed", "walk"}));
  EXPECT_TRUE(states[0].exclude.empty());
  EXPECT_TRUE(states[0].idle);
  EXPECT_EQ(states[1].name, "cut-scene_2");
  EXPECT_FALSE(states[1].idle);
  EXPECT_EQ(states[1].transition_cost, 1e6f);
  const std::pair<const char*, const char*> bad[] = {
      {"[states.]\n", "1: unknown table '[states.]'"},
      {"[states.a b]\n", "1: unknown table"},
      {"[states.a]\nrequire = \"walk\"\n", "2: [states.a]: 'require' must be an array of tag names"},
      {"[states.a]\nrequire = [\"walk\", ]\n", "2: [states.a]: 'require' must be an array"},
      {"[states.a]\nexclude = [\"a,b\"]\n", "2: [states.a]: 'exclude': tag 'a,b' contains ','"},
      {"[states.a]\nrequire = [\" walk\"]\n", "2: [states.a]: 'require': tag ' walk' begins or ends with a space"},
      {"[states.a]\nrequire_any = [\"none\"]\n", "2: [states.a]: 'require_any': tag 'none' is reserved"},
      {"[states.none]\n", "1: unknown table '[states.none]'"},
      {"[states.cancel]\n", "1: unknown table '[states.cancel]'"},
      {"[states.a]\nidle = yes\n", "2: [states.a]: 'idle' must be true or false"},
      {"[states.a]\ntransition_cost = -1\n", "2: [states.a]: 'transition_cost' must be a number in [0, 1e+06]"},
      {"[states.a]\nspeed = 1\n", "2: [states.a]: unknown key 'speed'"},
      {"[states.a]\nidle = true\nidle = false\n", "3: [states.a]: 'idle' is given twice"},
      {"[states.a]\n[states.a]\n", "2: table [states.a] is given twice"},
  };
  for (const auto& [text, message] : bad) {
    EXPECT_FALSE(parse_controller_config(text, values, error, &states)) << text;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
  std::string many;
  for (int i = 0; i <= kMaxStates; ++i) many += "[states.s" + std::to_string(i) + "]\n";
  EXPECT_FALSE(parse_controller_config(many, values, error, &states));
  EXPECT_NE(error.find("more than 256"), std::string::npos) << error;
}

TEST(Controller, DesiredRotationFollowsMotionOrCamera) {
  GamepadInput in;
  const Quat current = quat_from_heading({0, 0, 1});
  EXPECT_EQ(desired_rotation(in, current, Vec3{}).w, current.w);  // no stick: keep facing
  in.left_x = -1.0f;  // screen left = world +X
  const Vec3 forward = rotate(desired_rotation(in, current, Vec3{1, 0, 0}), {0, 0, 1});
  EXPECT_NEAR(forward.x, 1.0f, 1e-5f);
  in.strafe = true;  // strafing: face the camera direction whatever the stick does
  in.camera_azimuth = kPi;
  const Vec3 facing = rotate(desired_rotation(in, current, Vec3{1, 0, 0}), {0, 0, 1});
  EXPECT_NEAR(facing.z, -1.0f, 1e-5f);
}

TEST(Controller, PredictionMatchesStepping) {
  SimulatedRoot root;
  ControllerSettings s;
  root.velocity = Vec3{0.5f, 0, 0};
  const Vec3 goal{0, 0, 1.5f};
  const Quat facing = quat_from_heading(goal);
  const SimulatedRoot predicted = root.predict(goal, facing, s, 1.0f);
  SimulatedRoot stepped = root;
  for (int i = 0; i < 60; ++i) stepped.update(goal, facing, s, 1.0f / 60.0f);
  EXPECT_NEAR(length(predicted.position - stepped.position), 0.0f, 1e-4f);
  EXPECT_GT(std::fabs(dot(predicted.rotation, stepped.rotation)), 1.0f - 1e-5f);
}

// Bit-for-bit equality of two simulated roots.
void expect_same_root(const SimulatedRoot& a, const SimulatedRoot& b, const std::string& where) {
  EXPECT_EQ(std::memcmp(&a.position, &b.position, sizeof(Vec3)), 0) << where;
  EXPECT_EQ(std::memcmp(&a.velocity, &b.velocity, sizeof(Vec3)), 0) << where;
  EXPECT_EQ(std::memcmp(&a.acceleration, &b.acceleration, sizeof(Vec3)), 0) << where;
  EXPECT_EQ(std::memcmp(&a.rotation, &b.rotation, sizeof(Quat)), 0) << where;
  EXPECT_EQ(std::memcmp(&a.angular_velocity, &b.angular_velocity, sizeof(Vec3)), 0) << where;
}

TEST(Controller, SharedSpringsAndKeptDecaysGiveTheSeparateResultsBitForBit) {
  ControllerSettings s;
  SimulatedRoot root;
  root.velocity = Vec3{0.5f, 0.0f, -0.2f};
  root.acceleration = Vec3{0.1f, 0.0f, 0.3f};
  root.rotation = quat_from_angle_axis(0.4f, Vec3{0, 1, 0});
  root.angular_velocity = Vec3{0.0f, 1.2f, 0.0f};
  SimulatedRoot stepped = root, kept = root;
  SimulatedRoot::Decay step_decay;
  std::vector<SimulatedRoot::Decay> horizon_decay(3);
  const float horizons[] = {0.333f, 0.667f, 1.0f};
  for (int i = 0; i < 90; ++i) {
    const Vec3 goal{std::sin(0.1f * float(i)), 0.0f, 1.5f};
    const Quat facing = quat_from_heading(goal);
    // A steady frame time with a change now and then, so kept factors must be recomputed.
    const float dt = i % 30 == 29 ? 1.0f / 30.0f : 1.0f / 60.0f;
    const SimulatedRoot::Springs springs = kept.springs_towards(goal, facing, s);
    for (int h = 0; h < 3; ++h) {
      expect_same_root(kept.after(springs, horizons[h], horizon_decay[size_t(h)]),
                       kept.predict(goal, facing, s, horizons[h]), "frame " + std::to_string(i));
    }
    stepped.update(goal, facing, s, dt);
    kept.update(goal, facing, s, dt, step_decay);
    expect_same_root(kept, stepped, "frame " + std::to_string(i));
  }
  // Another halflife with the same dt: the kept factor follows it.
  ControllerSettings slow = s;
  slow.velocity_halflife *= 2.0f;
  stepped.update(Vec3{}, Quat{}, slow, 1.0f / 60.0f);
  kept.update(Vec3{}, Quat{}, slow, 1.0f / 60.0f, step_decay);
  expect_same_root(kept, stepped, "new halflife");
}

TEST(TwoJointIk, ReachesTargetsAndKeepsFootOrientation) {
  // Hip at 1 m, thigh and shin of 0.45 m straight down, slightly bent.
  const int parents[] = {-1, 0, 1, 2};
  const Vec3 lp[] = {{0, 1, 0}, {0, 0, 0}, {0, -0.45f, 0.02f}, {0, -0.45f, -0.02f}};
  Quat lr[] = {Quat{}, Quat{}, Quat{}, quat_from_angle_axis(0.3f, {1, 0, 0})};
  Vec3 gp[4];
  Quat gr[4];
  forward_kinematics(parents, 4, lp, lr, gp, gr);
  const Quat ankle_before = gr[3];
  for (const Vec3 target : {Vec3{0.1f, 0.3f, 0.2f}, Vec3{-0.2f, 0.25f, -0.1f}, Vec3{0, 0.5f, 0.3f}}) {
    Quat hip = lr[1], knee = lr[2], ankle = lr[3];
    const LegChain chain{gp[1], gp[2], gp[3], gr[1], gr[2], gr[3]};
    two_joint_ik(chain, target, Vec3{0, 0, 1}, hip, knee, ankle);
    Quat nr[] = {lr[0], hip, knee, ankle};
    Vec3 np[4];
    Quat ng[4];
    forward_kinematics(parents, 4, lp, nr, np, ng);
    EXPECT_NEAR(length(np[3] - target), 0.0f, 1e-4f);
    EXPECT_GT(std::fabs(dot(ng[3], ankle_before)), 1.0f - 1e-5f);
  }
  // Out of reach: the leg stretches towards the target.
  Quat hip = lr[1], knee = lr[2], ankle = lr[3];
  two_joint_ik(LegChain{gp[1], gp[2], gp[3], gr[1], gr[2], gr[3]}, Vec3{0, -1.0f, 0}, Vec3{0, 0, 1}, hip, knee, ankle);
  Quat nr[] = {lr[0], hip, knee, ankle};
  Vec3 np[4];
  Quat ng[4];
  forward_kinematics(parents, 4, lp, nr, np, ng);
  EXPECT_NEAR(np[3].y, 1.0f - length(lp[2]) - length(lp[3]), 1e-3f);
}

// A leg under a pelvis: root (0), pelvis 1 m up (1), hip (2), knee and ankle (thigh and shin 0.45 m,
// slightly bent) and a toe 10 cm in front of the ankle (5). `pose(root)` puts the root there,
// every rotation at identity, and refreshes the global pose.
struct LockedLeg {
  std::vector<int> parents = {-1, 0, 1, 2, 3, 4};
  PoseBuffers out;
  std::vector<Vec3> global = std::vector<Vec3>(6);
  std::vector<Quat> global_rotations = std::vector<Quat>(6);
  FootLocker feet;
  LockedLeg() {
    out.resize(6);
    out.positions = {{0, 0, 0}, {0, 1, 0}, {0, 0, 0}, {0, -0.45f, 0.02f}, {0, -0.45f, -0.02f}, {0, -0.05f, 0.1f}};
    feet.init(parents, {5});
  }
  void pose(Vec3 root) {
    out.positions[0] = root;
    out.positions[1] = Vec3{0, 1, 0};
    for (Quat& q : out.rotations) q = Quat{};
    forward_kinematics(parents.data(), 6, out.positions.data(), out.rotations.data(), global.data(),
                       global_rotations.data());
  }
  // Locks the feet of the last pose, then of `frames` - 1 more frames of the same animated pose
  // (the pelvis follows a spring).
  void apply(uint8_t contact, int frames = 1) {
    const Vec3 root = out.positions[0];
    for (int f = 0; f < frames; ++f) {
      if (f > 0) pose(root);
      feet.apply(&contact, 0.25f, 0.03f, 1.0f / 60.0f, parents, out, global, global_rotations);
    }
  }
  Vec3 toe() const { return global[5]; }
};

TEST(FootLocker, AKneeBendsAndAHeelLiftsToKeepALockedToeWhereItWas) {
  LockedLeg leg;
  leg.pose(Vec3{});
  leg.apply(1);
  const Vec3 locked = leg.toe();
  leg.pose(Vec3{0, -0.1f, 0});  // the body sinks 10 cm: the knee bends
  leg.apply(1);
  EXPECT_LT(length(leg.toe() - locked), 1e-4f);
  EXPECT_LT(leg.feet.largest_ik_error(), 1e-4f);
  leg.pose(Vec3{0, 0.04f, 0});  // lifted 4 cm, beyond the leg's length: the heel lifts, the toe stays
  leg.apply(1);
  EXPECT_LT(length(leg.toe() - locked), 1e-3f);
  EXPECT_LT(leg.feet.largest_ik_error(), 1e-3f);
  EXPECT_GT(leg.global[4].y - locked.y, 0.05f + 0.01f) << "the ankle rose above where the flat foot had it";
  EXPECT_LT(length(leg.global[4] - leg.global[5]), length(Vec3{0, -0.05f, 0.1f}) + 1e-4f);
}

TEST(FootLocker, ALockOutOfReachIsDraggedNotLeftBehind) {
  LockedLeg leg;
  leg.pose(Vec3{});
  leg.apply(1);
  const Vec3 locked = leg.toe();
  leg.pose(Vec3{0.2f, 0, 0});  // the body moves 20 cm sideways: the pelvis drops, the heel lifts
  leg.apply(1, 30);
  EXPECT_LT(length(leg.toe() - locked), 1e-3f);
  EXPECT_LT(leg.global[1].y, 1.0f - 0.005f) << "the pelvis went down";
  EXPECT_GE(leg.global[1].y, 1.0f - FootLocker::kMaxPelvisDrop - 1e-5f);
  leg.pose(Vec3{0.1f, 0.5f, 0});  // lifted 50 cm: no leg reaches; the toe is dragged towards the animated one
  leg.apply(1, 30);
  const Vec3 animated_toe = Vec3{0.1f, 0.5f, 0} + Vec3{0, 1, 0} + Vec3{0, -0.95f, 0.1f};
  EXPECT_LT(leg.feet.largest_ik_error(), 1e-3f);
  EXPECT_LT(length(leg.toe() - animated_toe), length(locked - animated_toe) - 0.1f);
  leg.feet.release_all();
  EXPECT_EQ(leg.feet.largest_ik_error(), 0.0f);
}

TEST(FootLocker, APlantedFootStopsWhereItWasShownAndTheAnimatedPelvisComesBack) {
  LockedLeg leg;
  leg.pose(Vec3{});
  leg.apply(0);
  const Vec3 shown = leg.toe();
  leg.pose(Vec3{0, 0, 0.05f});  // the foot still moves 5 cm as its contact starts
  leg.apply(1);
  EXPECT_NEAR(leg.toe().x, shown.x, 1e-4f);
  EXPECT_NEAR(leg.toe().z, shown.z, 1e-4f);
  leg.pose(Vec3{0.25f, 0, 0.05f});  // stretched: the pelvis is lowered in the shown pose...
  leg.apply(1, 30);
  EXPECT_LT(leg.out.positions[1].y, 1.0f - 0.005f);
  leg.feet.restore_pelvis(leg.out);  // ...and a transition gets the animated one back
  EXPECT_NEAR(leg.out.positions[1].y, 1.0f, 1e-6f);
  leg.feet.restore_pelvis(leg.out);  // once
  EXPECT_NEAR(leg.out.positions[1].y, 1.0f, 1e-6f);
}

}  // namespace
