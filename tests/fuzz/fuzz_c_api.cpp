// libFuzzer target: random sequences of C API calls (lmm/lmm.h) on a small synthetic database and
// bundle. Each input is a program of up to kMaxCalls calls over slots of handles that may be
// live, released (double release, use after release), of another kind (a database passed as a
// model) or a crowd's characters after the crowd; arguments come from the input, NaN and huge
// values included; gameplay calls (tags, constraints, events, actions, states) too. Under ASan/UBSan any memory error is a finding; so is a live character whose
// root becomes non-finite, or a call that fails without a message.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/lmm.h"
#include "support/synthetic_model.hpp"

namespace {

constexpr int kMaxCalls = 64;
constexpr int kSlots = 4;

// Tags "a" (clip 0) and "standing" (frames 70-99), an event "e" on every 7th frame.
void annotate(lmm::test::SyntheticDatabase& synthetic) {
  synthetic.tag_names = "a\nstanding\n";
  synthetic.event_names = "e\n";
  for (int f = 0; f < 105; ++f) {
    synthetic.tag_masks.insert(synthetic.tag_masks.end(), {(f < 60 ? 1 : 0) | (f >= 70 && f < 100 ? 2 : 0), 0});
    if (f % 7 != 0) continue;
    synthetic.event_frames.push_back(f);
    synthetic.event_name_index.push_back(0);
  }
}

// The synthetic assets, written once per process to a temporary folder.
struct AssetFiles {
  std::string db, model;

  AssetFiles() {
    char folder[] = "/tmp/lmm-fuzz-c-api-XXXXXX";
    if (mkdtemp(folder) == nullptr) std::abort();
    db = std::string(folder) + "/db.mmdb";
    model = std::string(folder) + "/model.lmmw";
    lmm::test::SyntheticDatabase synthetic;
    synthetic.randomize({60, 45}, 5);
    annotate(synthetic);
    std::string error;
    const std::vector<uint8_t> db_bytes = synthetic.build();
    const std::vector<uint8_t> model_bytes = lmm::test::synthetic_bundle(lmm::test::random_model_values(4, 17), false, error);
    if (!lmm::write_file_atomic(db, db_bytes.data(), db_bytes.size(), error) ||
        !lmm::write_file_atomic(model, model_bytes.data(), model_bytes.size(), error)) {
      std::fprintf(stderr, "fuzz_c_api: %s\n", error.c_str());
      std::abort();
    }
  }
};

// The fuzzer's bytes read front to back (zeros once they run out).
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  int below(int n) { return byte() % n; }
  // A float: mostly small values, sometimes NaN, infinities or extremes.
  float number() {
    const uint8_t kind = byte();
    if (kind < 200) return float(int(byte()) - 128) / 16.0f;
    const float special[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 0.0f, 1e-30f, 3e38f};
    if (kind < 240) return special[kind % 8];
    uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits = bits << 8 | byte();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

// Handles the program made, live or not: slots are never cleared, so that later calls reuse
// released handles.
struct Slots {
  lmm_database* databases[kSlots] = {};
  lmm_model* models[kSlots] = {};
  lmm_character* characters[kSlots] = {};
  lmm_crowd* crowds[kSlots] = {};
};

// A failed call must say why.
void check_failure_message(int ok) {
  if (ok == 0 && lmm_last_error()[0] == '\0') {
    std::fprintf(stderr, "fuzz_c_api: a call failed without a message\n");
    std::abort();
  }
}

lmm_gamepad gamepad(Reader& in) {
  lmm_gamepad g{};
  g.left_x = in.number(), g.left_y = in.number(), g.right_x = in.number(), g.right_y = in.number();
  g.camera_azimuth = in.number(), g.strafe = in.below(2), g.gait = in.number();
  return g;
}

// Any handle of the slots, reinterpreted as `Handle` (wrong kinds on purpose, now and then).
template <typename Handle>
Handle* any_handle(Slots& s, Reader& in) {
  const int slot = in.below(kSlots);
  switch (in.below(8)) {
    case 0: return reinterpret_cast<Handle*>(s.databases[slot]);
    case 1: return reinterpret_cast<Handle*>(s.models[slot]);
    case 2: return reinterpret_cast<Handle*>(s.crowds[slot]);
    default: return reinterpret_cast<Handle*>(s.characters[slot]);
  }
}

lmm_database* database_of(Slots& s, Reader& in) {
  return in.below(8) == 0 ? any_handle<lmm_database>(s, in) : s.databases[in.below(kSlots)];
}
lmm_model* model_of(Slots& s, Reader& in) { return in.below(8) == 0 ? any_handle<lmm_model>(s, in) : s.models[in.below(kSlots)]; }
lmm_crowd* crowd_of(Slots& s, Reader& in) { return in.below(8) == 0 ? any_handle<lmm_crowd>(s, in) : s.crowds[in.below(kSlots)]; }
lmm_character* character_of(Slots& s, Reader& in) {
  return in.below(8) == 0 ? any_handle<lmm_character>(s, in) : s.characters[in.below(kSlots)];
}

// Reads what panels read of character `c`; a successful read of the root must be finite.
void query(lmm_character* c, Reader& in) {
  float root[3], positions[3 * 64], rotations[4 * 64], times[64], trajectory[3 * 64], facings[4 * 64];
  const int joints = lmm_character_joint_count(c);
  if (lmm_character_root_position(c, root) == 1 && !(std::isfinite(root[0]) && std::isfinite(root[2]))) {
    std::fprintf(stderr, "fuzz_c_api: a live character's root is not finite\n");
    std::abort();
  }
  if (joints <= 64) check_failure_message(lmm_character_world_transforms(c, positions, rotations, size_t(joints)));
  check_failure_message(lmm_character_world_matrices(c, positions, size_t(in.below(3))));
  check_failure_message(lmm_character_trajectory(c, times, trajectory, facings, 64));
  check_failure_message(lmm_character_played_trajectory(c, times, trajectory, trajectory, 64));
  int frame = 0, clip = 0, joint = 0, contact = 0, experts[4];
  lmm_counters counters;
  float weights[4];
  check_failure_message(lmm_character_frame(c, &frame, &clip));
  check_failure_message(lmm_character_counters(c, &counters));
  check_failure_message(lmm_character_contact(c, in.below(4) - 1, &joint, &contact));
  lmm_character_joint_name(c, in.below(40) - 2);
  lmm_character_joint_parent(c, in.below(40) - 2);
  lmm_character_clip_name(c, in.below(6) - 1);
  lmm_character_decoder_experts(c, experts, weights, in.below(5));
  check_failure_message(lmm_character_path_progress(c, &frame, &clip, &contact));
  check_failure_message(lmm_character_root_motion(c, root, rotations));
}

// A path of up to 8 samples from the input (times mostly increasing).
std::vector<float> path_samples(Reader& in) {
  std::vector<float> samples;
  const int count = in.below(9);
  for (int i = 0; i < count; ++i) samples.insert(samples.end(), {float(i) + in.number() * 0.1f, in.number(), in.number()});
  return samples;
}

// Makes a handle into a slot, releasing what the slot held first (refused if released already),
// so that nothing leaks.
void make(Slots& s, Reader& in, const AssetFiles& files) {
  const int slot = in.below(kSlots);
  const int kind = in.below(7);
  if (kind == 0) lmm_database_release(s.databases[slot]);
  if (kind == 1) lmm_model_release(s.models[slot]);
  if (kind >= 2 && kind <= 4) lmm_character_release(s.characters[slot]);
  if (kind >= 5) lmm_crowd_release(s.crowds[slot]);
  switch (kind) {
    case 0: s.databases[slot] = lmm_database_load(files.db.c_str()); break;
    case 1: s.models[slot] = lmm_model_load(files.model.c_str()); break;
    case 2: s.characters[slot] = lmm_character_create_database(database_of(s, in), in.number(), in.number(), in.number()); break;
    case 3: s.characters[slot] = lmm_character_create_learned(model_of(s, in), in.number(), in.number(), in.number()); break;
    case 4: {
      const std::vector<float> samples = path_samples(in);
      s.characters[slot] = lmm_character_create_path(database_of(s, in), samples.data(), samples.size() / 3, in.below(3),
                                                     in.number(), in.number(), in.number(), in.number());
      break;
    }
    case 5: s.crowds[slot] = lmm_crowd_create_database(database_of(s, in), size_t(in.below(9))); break;
    default: s.crowds[slot] = lmm_crowd_create_learned(model_of(s, in), size_t(in.below(9)), in.below(12) - 2); break;
  }
}

void release(Slots& s, Reader& in) {
  switch (in.below(4)) {
    case 0: lmm_database_release(database_of(s, in)); break;
    case 1: lmm_model_release(model_of(s, in)); break;
    case 2: lmm_character_release(character_of(s, in)); break;
    default: lmm_crowd_release(crowd_of(s, in)); break;
  }
}

void move(Slots& s, Reader& in) {
  lmm_character* c = character_of(s, in);
  const lmm_gamepad g = gamepad(in);
  switch (in.below(6)) {
    case 0: check_failure_message(lmm_character_update(c, in.below(4) == 0 ? nullptr : &g, in.number())); break;
    case 1: check_failure_message(lmm_character_teleport(c, in.number(), in.number(), in.number())); break;
    case 2: check_failure_message(lmm_character_reset(c, in.number(), in.number(), in.number())); break;
    case 3: check_failure_message(lmm_character_set_root_owner(c, lmm_root_owner(in.below(2)))); break;
    case 4: {
      const float position[3] = {in.number(), in.number(), in.number()};
      const float rotation[4] = {in.number(), in.number(), in.number(), in.number()};
      check_failure_message(lmm_character_set_root(c, position, rotation));
      break;
    }
    default: {
      const lmm_gamepad inputs[kSlots] = {g, g, g, g};
      check_failure_message(lmm_characters_update(s.characters, inputs, size_t(in.below(3)), size_t(in.below(5)), in.number()));
      break;
    }
  }
}

// Tag names, known and not, and state configs, good and bad, that gameplay calls take.
const char* const kTagNames[] = {"a", "standing", "a,standing", "", "walk", "a,,b", nullptr};
const char* const kStateConfigs[] = {"[states.x]\nrequire = [\"a\"]\n[states.y]\nexclude = [\"a\"]\nidle = false\n",
                                     "[states.z]\nrequire = [\"walk\"]\n", "[states.]\n", nullptr};
const char* const kStates[] = {"x", "y", "z", "", nullptr};

// A gameplay call on a character (tags, constraints, events, actions, states); a failure needs a
// message, a read of a live database character must stay in range.
void direct(Slots& s, Reader& in) {
  lmm_character* c = character_of(s, in);
  const auto names = [&] { return kTagNames[in.below(7)]; };
  uint64_t masks[3] = {};
  lmm_event events[4];
  switch (in.below(8)) {
    case 0: check_failure_message(lmm_character_set_constraint(c, names(), names(), names())); break;
    case 1: check_failure_message(lmm_character_set_constraint_masks(c, in.byte(), in.byte(), in.byte())); break;
    case 2: check_failure_message(lmm_character_events(c, events, in.below(6) - 1) >= 0); break;
    case 3: check_failure_message(lmm_character_play_action(c, names(), in.below(2), in.below(2))); break;
    case 4: check_failure_message(lmm_character_play_action_frames(c, in.below(120) - 5, in.below(120) - 5, 0, 1)); break;
    case 5: check_failure_message(lmm_character_cancel_action(c)); break;
    case 6: check_failure_message(lmm_character_set_states(c, kStateConfigs[in.below(4)])); break;
    default:
      check_failure_message(lmm_character_set_state(c, kStates[in.below(5)]));
      lmm_character_state(c);
      lmm_character_constraint(c, &masks[0], &masks[1], &masks[2]);
      lmm_character_tags(c, &masks[0]);
      lmm_character_idle(c);
      lmm_character_constraint_held(c);
      lmm_character_action_playing(c);
      break;
  }
}

void steer_crowd(Slots& s, Reader& in) {
  lmm_crowd* crowd = crowd_of(s, in);
  const size_t i = size_t(in.below(10));
  const lmm_gamepad g = gamepad(in);
  switch (in.below(6)) {
    case 0: check_failure_message(lmm_crowd_set_input(crowd, i, &g)); break;
    case 1: check_failure_message(lmm_crowd_set_rate_divisor(crowd, i, in.below(20) - 2)); break;
    case 2: {
      const float priorities[8] = {in.number(), in.number(), in.number(), in.number(), 1, 2, 3, 4};
      check_failure_message(lmm_crowd_set_priorities(crowd, priorities, size_t(in.below(9))));
      break;
    }
    case 3: {
      float m[16];
      check_failure_message(lmm_crowd_shown_transform(crowd, i, m));
      break;
    }
    case 4: s.characters[in.below(kSlots)] = lmm_crowd_character(crowd, i); break;
    default:
      check_failure_message(lmm_crowd_update(crowd, size_t(in.below(10)), size_t(in.below(10)), in.number(), in.below(4) - 1,
                                             in.below(4) == 0 ? double(in.number()) : 0.0));
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const AssetFiles files;
  Reader in(data, size);
  Slots s;
  for (int call = 0; call < kMaxCalls && !in.done(); ++call) {
    switch (in.below(6)) {
      case 0: make(s, in, files); break;
      case 1: release(s, in); break;
      case 2: move(s, in); break;
      case 3: steer_crowd(s, in); break;
      case 4: direct(s, in); break;
      default: query(character_of(s, in), in); break;
    }
  }
  // Everything made is released (handles released already are refused, not freed twice).
  for (int slot = 0; slot < kSlots; ++slot) {
    lmm_character_release(s.characters[slot]);
    lmm_crowd_release(s.crowds[slot]);
    lmm_database_release(s.databases[slot]);
    lmm_model_release(s.models[slot]);
  }
  return 0;
}
