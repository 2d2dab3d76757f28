// lmm-sim's engine: scripted or random gamepad input driving database characters, with the
// metrics and output files (BVH, root CSV, SVG) of a run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "lmm/engines/gameplay.hpp"
#include "lmm/engines/strafe_metrics.hpp"
#include "lmm/import/gltf.hpp"
#include "lmm/import/motion.hpp"
#include "lmm/character/learned_character.hpp"

namespace lmm::pipeline {

// Input from `time` seconds on (until the next key), and gameplay commands given at `time`.
struct InputKey {
  float time = 0.0f;
  GamepadInput input;
  GameplayCommand gameplay;  // database characters only
  int line = 0;              // script line (0: generated), for messages
};

// Piecewise-constant gamepad input over time.
struct InputScript {
  std::vector<InputKey> keys;  // sorted by time

  // The input in effect at `time` (the last key at or before it; neutral before the first).
  GamepadInput at(float time) const;
};

// Reads a CSV script: a header naming at least time, stick_x, stick_y, camera_deg, strafe,
// gait (optional right_x, right_y) in any order, then one key per line; '#' starts a comment.
// Stick values may be nan / inf (the character sanitises and counts them). Optional gameplay
// columns (database characters): state, require, require_any, exclude (tag names separated by
// '|'; a row with any of the three sets the constraint, "none" for no condition), action (tag
// names separated by '|', or "cancel") and action_in_place (0 / 1). Throws InputError naming
// the file and line of a bad row, a missing column or decreasing time.
InputScript load_input_script(const std::string& path);

// A seeded random script of `seconds`: held stick directions with pauses, gait changes and a
// drifting camera; with `strafe`, strafe requests instead of part of them (facing the camera,
// held, while the stick points left, right or back at walk gait; they need sideways and
// backward steps in the database, e.g. Bandai's dataset-1 walk-left / -right / -back clips).
InputScript random_input_script(uint32_t seed, float seconds, bool strafe = false);

// Knee pops of a run: how far the foot locks' two-joint IK missed its targets (the characters'
// foot_ik_error per update) and how fast the leg joints moved.
struct LegMetrics {
  double ik_error_max_cm = 0.0, ik_error_sum_cm = 0.0;
  long updates = 0;
  double leg_speed_max_m_s = 0.0;  // fastest leg joint (leg_joints) between two updates

  // Adds one update: its IK error (m) and the speeds of `legs` from global poses dt apart
  // (speeds only when `previous` is not empty).
  void add(float ik_error_m, const std::vector<int>& legs, const std::vector<Vec3>& previous,
           const std::vector<Vec3>& global, float dt);
  // Mean IK error per update (cm; 0 without updates).
  double ik_error_mean_cm() const { return updates ? ik_error_sum_cm / double(updates) : 0.0; }
};

// The legs of `contact_joints`: each contact joint and its ancestors up to three levels (ankle,
// knee, hip for a toe), without repeats.
std::vector<int> leg_joints(const std::vector<int>& parents, const std::vector<int>& contact_joints);

// What one simulated run measured.
struct SimMetrics {
  int characters = 0;
  int frames = 0;  // per character
  int searches = 0;
  int transitions = 0;
  int sanitized_inputs = 0;
  int clamped_dt = 0;
  int forced_projections = 0;      // learned characters: predictions replaced at the age limit
  int nonfinite_states = 0;        // learned characters: non-finite network outputs discarded
  int clamped_states = 0;          // learned characters: states clamped into the training range
  int nan_frames = 0;              // frames with a non-finite joint position
  int still_frames = 0;            // same stick held >= 0.5 s, root neither moving nor turning
  double foot_slide_cm_per_s = 0;  // mean horizontal contact-joint speed while in contact
  LegMetrics legs;                 // foot-lock IK error and the fastest leg joint (knee pops)
  double jitter = 0;               // mean joint acceleration magnitude, m/s^2
  double trajectory_error_m = 0;   // predicted root vs actual root, 1 s ahead
  double max_joint_distance_m = 0; // farthest any joint got from the character root
  double us_per_update = 0;        // median controller update cost
  double us_per_update_mean = 0;   // mean controller update cost (searches included)
  // Frames whose whole input was unchanged for 0.5 s, by request (classify_request): strafing
  // (facing held, moving sideways or backwards) and forward locomotion.
  RequestErrors strafe, forward;
  double strafe_clip_share = 0;    // strafing frames played from sideways / backward clips (NaN: unknown)
  std::vector<int> strafe_frames_per_clip;  // database characters: strafing frames per clip (range)
  GameplayMetrics gameplay;                 // database characters: tags, constraints, events, idle, actions
};

// Mean horizontal speed (cm/s) of contact joints while their character reports contact.
struct FootSlide {
  double sum = 0.0;
  long count = 0;

  // Adds contact joint k (`contact_joints[k]`) where in_contact(k), from global poses dt apart
  // (nothing when `previous` is still empty).
  template <typename InContact>
  void add(const std::vector<int>& contact_joints, const InContact& in_contact, const std::vector<Vec3>& previous,
           const std::vector<Vec3>& global, float dt) {
    if (previous.empty()) return;
    for (size_t k = 0; k < contact_joints.size(); ++k) {
      if (!in_contact(int(k))) continue;
      const size_t j = size_t(contact_joints[k]);
      sum += 100.0 * length(on_ground(global[j] - previous[j])) / dt;
      ++count;
    }
  }
  // The mean so far (0 without samples).
  double mean() const { return count ? sum / double(count) : 0.0; }
};

// The recorded motion of one character.
struct CharacterTrack {
  Clip clip;                        // local pose per frame (joint 0 = world root)
  std::vector<Vec3> root, desired;  // character root and simulated (desired) root per frame
};

// Most frames one run records over all its characters (every pose is kept for the BVH output:
// about 0.6 KB a frame for a 22-joint skeleton); longer runs are an InputError.
constexpr double kMaxRecordedFrames = 4.0e6;

// Adds a random constraint command (random_constraint_command over the tags of `tags` in
// `present`, seeded by `seed` and the key) to every key of `script`.
void add_random_constraints(InputScript& script, const TagNames& tags, TagMask present, uint32_t seed);

// Runs every script on its own database character over `db` (not null; `search` built over it)
// for `seconds` at step `dt`, with game states `states` (a controller config's [states]);
// applies the scripts' gameplay commands and measures them.
SimMetrics run_simulation(const std::shared_ptr<const Database>& db, const FeatureSearch& search,
                          const CharacterSettings& settings, const std::vector<InputScript>& scripts,
                          float seconds, float dt, std::vector<CharacterTrack>& tracks,
                          const std::vector<StateConfig>& states = {});
// Runs every script on its own learned character over `model` (not null; same metrics, contacts
// are the decoder's), with game states `states`; applies the scripts' gameplay commands over the
// model's tags and measures them.
SimMetrics run_simulation(const std::shared_ptr<const Model>& model, const LearnedSettings& settings,
                          const std::vector<InputScript>& scripts, float seconds, float dt,
                          std::vector<CharacterTrack>& tracks, const std::vector<StateConfig>& states = {});

// Metres per unit of the BVH files lmm-sim and lmm-path write, from their --units value: "file"
// (the unit of the source BVH files, `source_unit_scale` as the database or bundle stores it),
// "m", "cm", "mm" or a number of metres per unit in [1e-4, 1e4]. With "file" and a
// source_unit_scale of 0 (`source`, a file written before meta.unit_scale) it is centimetres, the
// unit written before, and `note` says so naming `source` (else it is cleared). Throws
// InputError naming --units.
float output_unit_scale(const std::string& units, float source_unit_scale, const std::string& source,
                        std::string& note);
// Writes `clip` on `skeleton` to `stem`.bvh, with ZXY rotations and `unit_scale` metres per unit
// (re-imports with a skeleton config of that unit_scale), and to `stem`.glb (glTF 2.0 binary,
// metres and Y-up: write_glb), with `mesh` skinned to it unless it is empty.
void write_motion_files(const std::string& stem, const Skeleton& skeleton, const Clip& clip, float unit_scale,
                        const SkinnedMesh& mesh);

// Writes the root trajectories as CSV: t, character, x, z, heading_deg, desired_x, desired_z.
void write_root_csv(const std::string& path, const std::vector<CharacterTrack>& tracks, float dt);
// Writes an SVG: top-down desired vs actual root paths (axes in metres, grid, scale bar) and a
// filmstrip of side-view stick figures (time under each, a 1 m scale bar).
void write_svg(const std::string& path, const Skeleton& skeleton, const std::vector<CharacterTrack>& tracks,
               float dt);

}  // namespace lmm::pipeline
