// C API: what a character plays: trajectories, contacts, counters, frames, experts (lmm/lmm.h).
#include "c_api/internal.hpp"

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
    *out = lmm_counters{stats.updates, stats.matches, stats.transitions};
  } else {
    const lmm::CharacterStats& stats = steered_of(*character)->stats();
    *out = lmm_counters{stats.updates, stats.searches, stats.transitions};
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

}  // extern "C"
