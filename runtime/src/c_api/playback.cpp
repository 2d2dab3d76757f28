// C API: what a character plays: trajectories, contacts, counters, frames, experts; and how the
// game directs a database character: tag constraints, tags, events, actions, states (lmm/lmm.h).
#include "c_api/internal.hpp"

#include "lmm/motion/controller.hpp"

using namespace lmm::capi;

extern "C" {

int lmm_character_trajectory_count(const lmm_character* character) {
  return require_live(character, Kind::Character, "character") ? int(schema_of(*character).trajectory_offsets.size())
                                                               : 0;
}

int lmm_character_trajectory(const lmm_character* character, float* times, float* positions_xyz, float* rotations_xyzw,
                             size_t capacity) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const std::vector<int>& offsets = schema_of(*character).trajectory_offsets;
  if (capacity < offsets.size()) {
    last_error = "the buffers hold " + std::to_string(capacity) + " trajectory samples; the character has " +
                 std::to_string(offsets.size());
    return 0;
  }
  const lmm::PathFollower* follower = path_follower_of(*character);
  const std::vector<lmm::RootSample>& samples =
      follower != nullptr ? follower->revised_trajectory() : steered_of(*character)->predicted_trajectory();
  const float fps = fps_of(*character);
  for (size_t m = 0; m < offsets.size(); ++m) {
    if (times != nullptr) times[m] = float(offsets[m]) / fps;
    if (positions_xyz != nullptr) write_xyz(samples[m].position, positions_xyz + 3 * m);
    if (rotations_xyzw != nullptr) write_xyzw(samples[m].rotation, rotations_xyzw + 4 * m);
  }
  return 1;
}

int lmm_character_played_trajectory(const lmm_character* character, float* times, float* positions_xyz,
                                    float* directions_xyz, size_t capacity) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const lmm::FeatureSchema& schema = schema_of(*character);
  const size_t samples = schema.trajectory_offsets.size();
  if (capacity < samples) {
    last_error = "the buffers hold " + std::to_string(capacity) + " trajectory samples; the character has " +
                 std::to_string(samples);
    return 0;
  }
  if (samples > kMaxTrajectorySamples) {
    last_error = "the schema has " + std::to_string(samples) + " trajectory samples; the played trajectory reports " +
                 std::to_string(kMaxTrajectorySamples) + " at most";
    return 0;
  }
  lmm::Vec3 positions[kMaxTrajectorySamples], directions[kMaxTrajectorySamples];
  std::visit([&](const auto* played) { played->played_trajectory(positions, directions); }, character->played);
  const float fps = fps_of(*character);
  for (size_t m = 0; m < samples; ++m) {
    if (times != nullptr) times[m] = float(schema.trajectory_offsets[m]) / fps;
    if (positions_xyz != nullptr) write_xyz(positions[m], positions_xyz + 3 * m);
    if (directions_xyz != nullptr) write_xyz(directions[m], directions_xyz + 3 * m);
  }
  return 1;
}

int lmm_character_contact_count(const lmm_character* character) {
  return require_live(character, Kind::Character, "character") ? int(contact_joints_of(*character).size()) : 0;
}

int lmm_character_contact(const lmm_character* character, int k, int* joint, int* in_contact) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const std::vector<int>& joints = contact_joints_of(*character);
  if (k < 0 || size_t(k) >= joints.size()) {
    last_error = "contact " + std::to_string(k) + " is outside 0.." + std::to_string(int(joints.size()) - 1);
    return 0;
  }
  if (joint != nullptr) *joint = joints[size_t(k)];
  if (in_contact != nullptr)
    *in_contact = std::visit([k](const auto* played) { return played->in_contact(k); }, character->played);
  return 1;
}

int lmm_character_counters(const lmm_character* character, lmm_counters* out) {
  if (!require_live(character, Kind::Character, "character") || !require(out, "out")) return 0;
  if (const lmm::PathFollower* follower = path_follower_of(*character)) {
    const lmm::PathFollowerStats& stats = follower->stats();
    *out = lmm_counters{stats.updates, stats.matches, stats.transitions, 0, 0};
  } else {
    const lmm::CharacterStats& stats = steered_of(*character)->stats();
    *out = lmm_counters{stats.updates, stats.searches, stats.transitions, stats.constraint_searches,
                        stats.unsatisfied_searches};
  }
  return 1;
}

int lmm_character_frame(const lmm_character* character, int* frame, int* clip) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  const int played = played_frame_of(*character);
  if (played < 0) {
    last_error = "a learned character plays no database frame";
    return 0;
  }
  if (frame != nullptr) *frame = played;
  if (clip != nullptr) *clip = lmm::clip_index(*character->database->database, played);
  return 1;
}

const char* lmm_character_clip_name(const lmm_character* character, int clip) {
  if (!require_live(character, Kind::Character, "character")) return nullptr;
  if (character->model != nullptr) {
    last_error = "a learned character plays no database clip";
    return nullptr;
  }
  const std::vector<lmm::DatabaseRange>& ranges = character->database->database->ranges();
  if (clip >= 0 && size_t(clip) < ranges.size()) return ranges[size_t(clip)].name.c_str();
  last_error = "clip " + std::to_string(clip) + " is outside 0.." + std::to_string(int(ranges.size()) - 1);
  return nullptr;
}

int lmm_character_decoder_experts(lmm_character* character, int* experts, float* weights, int capacity) {
  if (!require_live(character, Kind::Character, "character")) return 0;
  lmm::LearnedCharacter* const* learned = std::get_if<lmm::LearnedCharacter*>(&character->played);
  if (learned == nullptr) {
    last_error = "only a learned character has decoder experts";
    return 0;
  }
  if (capacity < 1) {
    last_error = "capacity " + std::to_string(capacity) + " is below 1";
    return 0;
  }
  int32_t routed[lmm::kMaxTopK];
  float routed_weights[lmm::kMaxTopK];
  const int count = (*learned)->decoder_experts(routed, routed_weights);
  if (count == 0) {
    last_error = "the model's decoder is not a mixture of experts";
    return 0;
  }
  const int written = std::min(count, capacity);
  for (int j = 0; j < written; ++j) {
    if (experts != nullptr) experts[j] = routed[j];
    if (weights != nullptr) weights[j] = routed_weights[j];
  }
  return written;
}

int lmm_character_set_constraint_masks(lmm_character* character, uint64_t require_all, uint64_t require_any,
                                       uint64_t exclude) {
  return with_any_character(character, 0, [&](auto& c) {
    c.set_constraint(lmm::TagConstraint{require_all, require_any, exclude});
    return 1;
  });
}

int lmm_character_set_constraint(lmm_character* character, const char* require_all, const char* require_any,
                                 const char* exclude) {
  return with_any_character(character, 0, [&](auto& c) {
    return guarded([&] {
      const lmm::TagNames& tags = tags_of(*character);
      lmm::TagConstraint constraint;
      if (!resolve_tags(tags, require_all, constraint.require_all) ||
          !resolve_tags(tags, require_any, constraint.require_any) || !resolve_tags(tags, exclude, constraint.exclude)) {
        return 0;
      }
      c.set_constraint(constraint);
      return 1;
    });
  });
}

int lmm_character_constraint(const lmm_character* character, uint64_t* require_all, uint64_t* require_any,
                             uint64_t* exclude) {
  return with_any_character(character, 0, [&](const auto& c) {
    if (require_all != nullptr) *require_all = c.constraint().require_all;
    if (require_any != nullptr) *require_any = c.constraint().require_any;
    if (exclude != nullptr) *exclude = c.constraint().exclude;
    return 1;
  });
}

int lmm_character_tags(const lmm_character* character, uint64_t* tags) {
  return with_any_character(character, 0, [&](const auto& c) {
    if (!require(tags, "tags")) return 0;
    *tags = c.current_tags();
    return 1;
  });
}

int lmm_character_constraint_held(const lmm_character* character) {
  return with_any_character(character, -1, [](const auto& c) { return c.constraint_held() ? 1 : 0; });
}

int lmm_character_idle(const lmm_character* character) {
  return with_gameplay_character(character, "lmm_character_idle", -1, [](const auto& c) { return c.idle() ? 1 : 0; });
}

// lmm_event and lmm::CharacterEvent hold the same three fields: the C++ call writes its events
// into the caller's buffer as CharacterEvents (made there first), each rewritten as an lmm_event.
static_assert(sizeof(lmm_event) == sizeof(lmm::CharacterEvent) && alignof(lmm_event) == alignof(lmm::CharacterEvent),
              "lmm_event must match lmm::CharacterEvent");

int lmm_character_events(const lmm_character* character, lmm_event* out, int capacity) {
  return with_gameplay_character(character, "lmm_character_events", -1, [&](const auto& c) {
    if (capacity < 0 || (capacity > 0 && out == nullptr)) {
      last_error = "events: capacity " + std::to_string(capacity) + (capacity < 0 ? " is negative" : " with out NULL");
      return -1;
    }
    lmm::CharacterEvent* events = capacity > 0 ? new (out) lmm::CharacterEvent[size_t(capacity)] : nullptr;
    const int count = c.events(events, capacity);
    for (int i = 0; i < std::min(count, capacity); ++i) {
      const lmm::CharacterEvent e = events[i];
      new (out + i) lmm_event{e.name, e.frame, e.time};
    }
    return count;
  });
}

// The ActionSettings of the C flags.
static lmm::ActionSettings action_settings(int in_place, int interruptible) {
  return lmm::ActionSettings{in_place != 0 ? lmm::ActionRoot::InPlace : lmm::ActionRoot::Animated, interruptible != 0};
}

int lmm_character_play_action(lmm_character* character, const char* tags, int in_place, int interruptible) {
  return with_gameplay_character(character, "lmm_character_play_action", 0, [&](auto& c) {
    if (!require(tags, "tags")) return 0;
    return guarded([&] {
      lmm::TagMask mask = 0;
      if (!resolve_tags(tags_of(*character), tags, mask)) return 0;
      if (mask == 0) {
        last_error = std::string("tags '") + tags + "' name no tag";
        return 0;
      }
      std::string error;
      if (c.play_action(mask, action_settings(in_place, interruptible), error)) return 1;
      last_error = error;
      return 0;
    });
  });
}

int lmm_character_play_action_frames(lmm_character* character, int first, int last, int in_place, int interruptible) {
  lmm::DatabaseCharacter* c = require_database_character(character, "lmm_character_play_action_frames");
  if (c == nullptr) return 0;
  return guarded([&] {
    std::string error;
    if (c->play_action(first, last, action_settings(in_place, interruptible), error)) return 1;
    last_error = error;
    return 0;
  });
}

int lmm_character_cancel_action(lmm_character* character) {
  return with_gameplay_character(character, "lmm_character_cancel_action", 0, [](auto& c) {
    c.cancel_action();
    return 1;
  });
}

int lmm_character_action_playing(const lmm_character* character) {
  return with_gameplay_character(character, "lmm_character_action_playing", -1,
                                 [](const auto& c) { return c.action_playing() ? 1 : 0; });
}

float lmm_character_action_seconds_left(const lmm_character* character) {
  return with_gameplay_character(character, "lmm_character_action_seconds_left", -1.0f,
                                 [](const auto& c) { return c.action_seconds_left(); });
}

int lmm_character_set_states(lmm_character* character, const char* controller_config) {
  return with_gameplay_character(character, "lmm_character_set_states", 0, [&](auto& c) {
    if (!require(controller_config, "controller_config")) return 0;
    return guarded([&] {
      std::vector<lmm::ControllerValue> values;
      std::vector<lmm::StateConfig> states;
      std::string error;
      if (!lmm::parse_controller_config(controller_config, values, error, &states)) {
        last_error = "controller config: " + error;
        return 0;
      }
      if (c.set_states(states, error)) return 1;
      last_error = error;
      return 0;
    });
  });
}

int lmm_character_set_state(lmm_character* character, const char* name) {
  return with_gameplay_character(character, "lmm_character_set_state", 0, [&](auto& c) {
    if (!require(name, "name")) return 0;
    return guarded([&] {
      std::string error;
      if (c.set_state(name, error)) return 1;
      last_error = error;
      return 0;
    });
  });
}

const char* lmm_character_state(const lmm_character* character) {
  return with_gameplay_character(character, "lmm_character_state", static_cast<const char*>(nullptr),
                                 [](const auto& c) { return c.state().data() != nullptr ? c.state().data() : ""; });
}

}  // extern "C"
