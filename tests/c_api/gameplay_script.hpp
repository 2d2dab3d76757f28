// The annotated database and the scripted four-state run of the C API gameplay tests
// (test_gameplay_control.cpp; states.cpp prints the run's C++ root path for the Python check).
// The synthetic walks tagged by clip ("even", "odd"), by time ("early": each clip's first 300
// frames), with an "act" run (clip 1, frames 100..250 of it) and "standing" frames (clip 0's
// first 120), and "step" / "mark" events on every 7th / 11th frame.
#pragma once

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lmm/character/database_character.hpp"
#include "lmm/lmm.h"
#include "lmm/motion/controller.hpp"
#include "support/annotated_walks.hpp"

namespace lmm::test::gameplay {

constexpr TagMask kEven = 1, kOdd = 2, kEarly = 4, kAct = 8, kStanding = 16;
constexpr const char* kTagNames = "even\nodd\nearly\nact\nstanding\n";
constexpr int kStep = 0, kMark = 1;  // event name indices
constexpr int kEarlyFrames = 300;

// The four game states of the scripted run, as a controller config, and their constraints.
constexpr const char* kStatesConfig =
    "[speeds]\nwalk_forward = 1.4\n"
    "[states.even]\nrequire = [\"even\"]\n"
    "[states.odd]\nrequire = [\"odd\"]\ntransition_cost = 0.5\n"
    "[states.early_odd]\nrequire = [\"odd\", \"early\"]\nidle = false\n"
    "[states.not_early]\nrequire_any = [\"even\", \"odd\"]\nexclude = [\"early\"]\n";
constexpr const char* kStates[4] = {"even", "odd", "early_odd", "not_early"};
constexpr TagConstraint kStateConstraints[4] = {
    {kEven, 0, 0}, {kOdd, 0, 0}, {kOdd | kEarly, 0, 0}, {0, kEven | kOdd, kEarly}};

constexpr int kUpdates = 1200;  // 20 s at 60 Hz
constexpr float kDt = 1.0f / 60.0f;
constexpr int kStateUpdates = 150;  // a state switch every 2.5 s, through the four in turn
constexpr int kInputUpdates = 100;  // a new stick every 1.67 s

// The state of update `u` (0-based) of the run.
inline int state_at(int u) { return (u / kStateUpdates) % 4; }
// The state to set before update `u`, nullptr when the state stays.
inline const char* state_set_before(int u) { return u % kStateUpdates == 0 ? kStates[state_at(u)] : nullptr; }

// The input of update `u`: the stick pushed in one of five directions at once, in turn.
inline lmm_gamepad input_at(int u) {
  static const float sticks[5][3] = {
      {0.0f, 1.0f, 0.0f}, {1.0f, 0.0f, 0.5f}, {-0.7f, -0.7f, 1.0f}, {-1.0f, 0.3f, 0.0f}, {0.5f, 0.8f, 0.3f}};
  const float* s = sticks[(u / kInputUpdates) % 5];
  lmm_gamepad g{};
  g.left_x = s[0], g.left_y = s[1], g.gait = s[2];
  return g;
}

// The C++ runtime's input for `g`.
inline GamepadInput to_cpp(const lmm_gamepad& g) {
  GamepadInput in;
  in.left_x = g.left_x, in.left_y = g.left_y, in.right_x = g.right_x, in.right_y = g.right_y;
  in.camera_azimuth = g.camera_azimuth, in.strafe = g.strafe != 0, in.gait = g.gait;
  return in;
}

// The annotated walks: `buffer` holds the database file's bytes (test failures, and a null `db`,
// on any error).
inline void load_database(AlignedBuffer& buffer, std::shared_ptr<const Database>& db, FeatureSearch& search) {
  std::shared_ptr<const Database> plain;
  FeatureSearch unused;
  load_synthetic_walks(plain, unused);
  if (plain == nullptr) return;
  WalkAnnotations notes;
  notes.tag_names = kTagNames;
  notes.tags = [plain](int frame, int clip) {
    const int at = frame - plain->ranges()[size_t(clip)].start;
    return (clip % 2 ? kOdd : kEven) | (at < kEarlyFrames ? kEarly : 0) |
           (clip == 1 && at >= 100 && at <= 250 ? kAct : 0) | (clip == 0 && at < 120 ? kStanding : 0);
  };
  notes.event_names = "step\nmark\n";
  for (int f = 0; f < plain->frame_count(); ++f) {
    for (int name : {kStep, kMark}) {
      if (f % (name == kStep ? 7 : 11) != 0) continue;
      notes.event_frames.push_back(f);
      notes.event_name_index.push_back(name);
    }
  }
  load_annotated_walks(notes, buffer, db, search);
}

// Writes `buffer` to `path`; whether it succeeded.
inline bool write_file(const std::string& path, const AlignedBuffer& buffer) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  const bool written = f != nullptr && std::fwrite(buffer.data(), 1, buffer.size(), f) == buffer.size();
  return f != nullptr && std::fclose(f) == 0 && written;
}

// The C++ runtime's root position after each update of the scripted run (a DatabaseCharacter at
// the origin facing +Z with the default settings, as lmm_character_create_database makes it);
// empty with a message when the states are refused.
inline std::vector<Vec3> cpp_root_path(std::shared_ptr<const Database> db, const FeatureSearch& search,
                                       std::string& error) {
  std::vector<ControllerValue> values;
  std::vector<StateConfig> states;
  DatabaseCharacter c;
  if (!parse_controller_config(kStatesConfig, values, error, &states) ||
      !c.init(std::move(db), search, CharacterSettings{}, Vec3{}, 0.0f, error) || !c.set_states(states, error)) {
    return {};
  }
  std::vector<Vec3> path;
  for (int u = 0; u < kUpdates; ++u) {
    if (const char* state = state_set_before(u)) c.set_state(state);
    c.update(to_cpp(input_at(u)), kDt);
    path.push_back(c.root_position());
  }
  return path;
}

}  // namespace lmm::test::gameplay
