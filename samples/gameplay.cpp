// Gameplay control of a database character (lmm::DatabaseCharacter): it walks, switches to a game
// state of a controller config, plays a one-shot action by its tag, and reads the events each
// update played (foot plants, the action's end). Every call that can fail says why.
// Usage: gameplay DATABASE.mmdb (imported with tags, e.g. configs/skeletons/bandai.toml on a walk,
// a run and a wave: samples/import_database.sh --gameplay)
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lmm/character/database_character.hpp"

namespace {

// The game states, as a controller config's [states.NAME] tables (docs/configs.md#game-states).
constexpr const char* kStates =
    "[states.strolling]\n"
    "require = [\"walk\"]\n"
    "[states.hurrying]\n"
    "require = [\"run\"]\n"
    "idle = false\n";

constexpr float kDt = 1.0f / 60.0f;

lmm::GamepadInput stick_forward(float gait) {
  lmm::GamepadInput input;
  input.left_y = 1.0f;
  input.gait = gait;  // 0 walks, 1 runs
  return input;
}

// Updates `character` for `seconds` with `input` from game time `t` (advanced), printing the
// events each update played; returns the number of action end events seen.
int play(lmm::DatabaseCharacter& character, const lmm::Database& db, const lmm::GamepadInput& input, float seconds,
         float& t) {
  lmm::CharacterEvent events[16];
  int ends = 0;
  for (long frame = 0; frame < std::lround(seconds / kDt); ++frame) {
    character.update(input, kDt);  // no allocation
    t += kDt;
    const int count = character.events(events, 16);  // the markers this update played
    for (int e = 0; e < count && e < 16; ++e) {
      if (events[e].name == lmm::kActionEndEvent) {  // no database event: the end of an action
        std::printf("t %.2f s: the action ended\n", t - kDt + events[e].time);
        ++ends;
      } else {
        std::printf("t %.2f s: event '%s'\n", t - kDt + events[e].time,
                    db.annotations().event_names()[size_t(events[e].name)].c_str());
      }
    }
  }
  return ends;
}

// The names of the tags of the frame `character` plays.
std::string tags_of(const lmm::DatabaseCharacter& character, const lmm::Database& db) {
  return db.annotations().tag_set().names_of(character.current_tags());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATABASE.mmdb (imported with tags)\n", argv[0]);
    return 2;
  }
  std::string error;
  const std::shared_ptr<const lmm::Database> db = lmm::Database::load_file(argv[1], error);
  lmm::FeatureSearch search;
  lmm::DatabaseCharacter character;
  std::vector<lmm::ControllerValue> speeds;  // the config's [speeds], if any (none here)
  std::vector<lmm::StateConfig> states;
  lmm::TagMask wave = 0;
  const bool ready = db != nullptr && search.build(db, error) &&
                     character.init(db, search, lmm::CharacterSettings{}, lmm::Vec3{0, 0, 0}, 0.0f, error) &&
                     lmm::parse_controller_config(kStates, speeds, error, &states) &&
                     character.set_states(states, error) &&              // once, at load time: allocates
                     db->annotations().tag_mask("wave", wave, error);  // names to masks once, too
  if (!ready) {
    std::fprintf(stderr, "gameplay: %s\n", error.c_str());
    return 1;
  }
  float t = 0.0f;
  play(character, *db, stick_forward(0.0f), 2.0f, t);  // free: any frame but an action's
  std::printf("t %.2f s: walking on '%s' frames\n", t, tags_of(character, *db).c_str());

  if (!character.set_state("hurrying", error)) {  // its constraint from the next update
    std::fprintf(stderr, "gameplay: %s\n", error.c_str());
    return 1;
  }
  play(character, *db, stick_forward(1.0f), 2.0f, t);
  std::printf("t %.2f s: in state '%s' on '%s' frames\n", t, std::string(character.state()).c_str(),
              tags_of(character, *db).c_str());

  // The wave: a standing action, played where the stick is released. Its frames hold `action`,
  // which the config keeps out of every search that requires no tag, so only this call enters them.
  if (!character.play_action(wave, lmm::ActionSettings{lmm::ActionRoot::InPlace, false}, error)) {
    std::fprintf(stderr, "gameplay: %s\n", error.c_str());
    return 1;
  }
  const float started = t;
  std::printf("t %.2f s: playing the wave ('%s' frames), %.2f s long\n", t, tags_of(character, *db).c_str(),
              character.action_seconds_left());
  int ends = 0;
  while (character.action_playing() && t < started + 30.0f) ends += play(character, *db, lmm::GamepadInput{}, kDt, t);
  if (ends != 1) {
    std::fprintf(stderr, "gameplay: %d end events for one action\n", ends);
    return 1;
  }
  const float ended = t;
  play(character, *db, stick_forward(1.0f), 1.0f, t);  // the state's constraint again
  std::printf("t %.2f s: in state '%s' on '%s' frames\n", t, std::string(character.state()).c_str(),
              tags_of(character, *db).c_str());
  std::printf("the wave played %.2f s and ended at t %.2f s\n", ended - started, ended);
  return 0;
}
