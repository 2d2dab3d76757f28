// A character on a trajectory the game supplies: instead of a gamepad, the game (its AI, a
// cutscene spline, a path replicated over the network) says every frame where the character should
// be now and at each of the sample times the database's features look ahead (and back). The
// character, SuppliedTrajectoryCharacter (supplied_trajectory_character.hpp), is composed of the
// runtime's public stages outside the library: search, database playback, root motion pulled
// towards the game's position, forward kinematics. Here the game's agent walks a circle of 4 m
// radius at 1.3 m/s; the program prints where the character is and how far from the agent.
// Usage: supplied_trajectory DATABASE.mmdb
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "supplied_trajectory_character.hpp"

namespace {

// The game's agent: where it is, and which way it faces, at `t` seconds (t < 0: where it was).
lmm::RootSample agent_at(float t) {
  const float radius = 4.0f, speed = 1.3f, angle = t * speed / radius;
  // From the origin facing +Z, around the centre (4, 0, 0), turning left (+X is on its left).
  const lmm::Vec3 position{radius - radius * std::cos(angle), 0.0f, radius * std::sin(angle)};
  const lmm::Vec3 direction{std::sin(angle), 0.0f, std::cos(angle)};
  return lmm::RootSample{position, lmm::quat_from_heading(direction)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATABASE.mmdb (made by lmm-import)\n", argv[0]);
    return 2;
  }
  std::string error;
  const std::shared_ptr<const lmm::Database> db = lmm::Database::load_file(argv[1], error);
  lmm::FeatureSearch search;
  example::SuppliedTrajectoryCharacter character;
  if (db == nullptr || !search.build(db, error) ||
      !character.init(db, search, example::SuppliedTrajectorySettings{}, lmm::Vec3{0, 0, 0}, 0.0f, error)) {
    std::fprintf(stderr, "supplied_trajectory: %s\n", error.c_str());
    return 1;
  }
  // One sample per time the character asks for (seconds from now), refilled every frame.
  std::vector<lmm::RootSample> samples(character.sample_times().size());
  const float dt = 1.0f / 60.0f;
  float distance_sum = 0.0f;
  int frames = 0;
  for (int frame = 0; frame < 600; ++frame) {  // 10 s at 60 Hz
    const float t = frame * dt;
    for (size_t i = 0; i < samples.size(); ++i) samples[i] = agent_at(t + character.sample_times()[i]);
    if (!character.plan(agent_at(t), samples)) {
      std::fprintf(stderr, "supplied_trajectory: the plan has the wrong number of samples\n");
      return 1;
    }
    character.update(dt);
    const lmm::Vec3 root = character.root().position, agent = agent_at(t + dt).position;
    const float distance = lmm::length(lmm::on_ground(root - agent));
    if (frame >= 60) distance_sum += distance, ++frames;  // the first second: starting to walk
    if ((frame + 1) % 60 == 0) {
      std::printf("t %2d s: character at (%5.2f, %5.2f), agent at (%5.2f, %5.2f), %.2f m apart\n", (frame + 1) / 60,
                  root.x, root.z, agent.x, agent.z, distance);
    }
  }
  const float mean = distance_sum / float(frames);
  if (!(mean < 0.5f)) {  // also false for NaN
    std::fprintf(stderr, "supplied_trajectory: the character kept %.2f m from the agent on average\n", mean);
    return 1;
  }
  std::printf("followed the agent %.2f m from it on average: %d searches, %d transitions\n", mean, character.searches(),
              character.transitions());
  return 0;
}
