// What the C API tests of foot locking read of a character (lmm/lmm.h): its world joint
// positions, and a locked and an unlocked twin run side by side.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "lmm/character/learned_character.hpp"
#include "lmm/core/math.hpp"
#include "lmm/lmm.h"

namespace lmm::test {

// World joint positions of `c` (empty with a test failure when the call fails).
inline std::vector<Vec3> joints_of(const lmm_character* c) {
  const int count = lmm_character_joint_count(c);
  std::vector<float> xyz(size_t(3 * std::max(count, 0)));
  EXPECT_EQ(lmm_character_world_transforms(c, xyz.data(), nullptr, size_t(count)), 1) << lmm_last_error();
  std::vector<Vec3> joints(size_t(std::max(count, 0)));
  for (size_t j = 0; j < joints.size(); ++j) joints[j] = Vec3{xyz[3 * j], xyz[3 * j + 1], xyz[3 * j + 2]};
  return joints;
}

// Whether two poses are equal, bit for bit.
inline bool same_pose(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  if (a.size() != b.size()) return false;
  for (size_t j = 0; j < a.size(); ++j) {
    if (a[j].x != b[j].x || a[j].y != b[j].y || a[j].z != b[j].z) return false;
  }
  return true;
}

// Over `updates` updates of `locked` and `free` (the same character but for the lock) by `step`:
// the updates whose poses differ, and how contact joints in contact at both ends of an update of
// `locked` moved.
struct LockRun {
  int differing = 0;
  float largest_held_move = 0.0f;
  int held_contacts = 0;  // contact joints in contact at both ends of an update
  int held_but_moved = 0;  // of those, the ones that moved over 1 mm (a lock stretched too far releases)
};
template <typename Step>
LockRun run_locked(lmm_character* locked, lmm_character* free, int updates, Step&& step) {
  LockRun run;
  const int contacts = lmm_character_contact_count(locked);
  std::vector<int> before(size_t(contacts), 0);
  std::vector<Vec3> pose = joints_of(locked);
  for (int u = 0; u < updates; ++u) {
    step(locked, u);
    step(free, u);
    const std::vector<Vec3> now = joints_of(locked);
    run.differing += same_pose(now, joints_of(free)) ? 0 : 1;
    for (int k = 0; k < contacts; ++k) {
      int joint = -1, in_contact = 0;
      EXPECT_EQ(lmm_character_contact(locked, k, &joint, &in_contact), 1) << lmm_last_error();
      if (in_contact != 0 && before[size_t(k)] != 0) {
        ++run.held_contacts;
        const float move = length(now[size_t(joint)] - pose[size_t(joint)]);
        run.largest_held_move = std::max(run.largest_held_move, move);
        run.held_but_moved += move > 1e-3f ? 1 : 0;
      }
      before[size_t(k)] = in_contact;
    }
    pose = now;
  }
  return run;
}


// A learned character of the bundle at `path` with lmm_character_set_foot_lock(on, 0.5 m, 0.1 s)
// against a C++ twin with those FootLockSettings, over 300 updates of walking on a weaving stick:
// the same pose after every update (test failures otherwise). The run against an unlocked one.
inline LockRun learned_foot_lock_against_cpp(const std::string& path) {
  LockRun run;
  lmm_model* model = lmm_model_load(path.c_str());
  EXPECT_NE(model, nullptr) << lmm_last_error();
  if (model == nullptr) return run;
  lmm_character* locked = lmm_character_create_learned(model, 0.0f, 0.0f, 0.0f);
  lmm_character* free = lmm_character_create_learned(model, 0.0f, 0.0f, 0.0f);
  EXPECT_EQ(lmm_character_set_foot_lock(locked, 1, 0.5f, 0.1f), 1) << lmm_last_error();
  LearnedSettings settings;
  settings.foot_lock = true;
  settings.foot_unlock_distance = 0.5f;
  settings.foot_blend_halflife = 0.1f;
  LearnedCharacter twin;
  std::string error;
  EXPECT_TRUE(twin.init(Model::load_file(path, error), settings, Vec3{}, 0.0f, error)) << error;
  int twin_differs = 0;
  run = run_locked(locked, free, 300, [&](lmm_character* c, int u) {
    lmm_gamepad pad{};
    pad.left_x = std::sin(0.05f * float(u));
    pad.left_y = 1.0f;
    EXPECT_EQ(lmm_character_update(c, &pad, 1.0f / 60.0f), 1) << lmm_last_error();
    if (c != locked) return;
    GamepadInput input;
    input.left_x = pad.left_x;
    input.left_y = pad.left_y;
    twin.update(input, 1.0f / 60.0f);
    twin_differs += same_pose(joints_of(locked), twin.global_positions()) ? 0 : 1;
  });
  EXPECT_EQ(twin_differs, 0);
  lmm_character_release(locked);
  lmm_character_release(free);
  lmm_model_release(model);
  return run;
}

}  // namespace lmm::test
