// Composition of runtime stages: the database character's contract (reset, teleport, a root the
// game owns) and a fourth character built outside the library from public stages only
// (samples/supplied_trajectory_character), following trajectories the game supplies.
#include <gtest/gtest.h>

#include <cmath>

#include "lmm/character/database_character.hpp"
#include "samples/supplied_trajectory_character.hpp"
#include "support/character_contract.hpp"
#include "support/synthetic_walks.hpp"

using namespace lmm;

namespace {

class CompositionTest : public test::SyntheticWalksTest {
 protected:
  void start(DatabaseCharacter& c, const CharacterSettings& settings, Vec3 position, float heading) {
    std::string error;
    ASSERT_TRUE(c.init(db_, search_, settings, position, heading, error)) << error;
  }
};

TEST_F(CompositionTest, DatabaseCharacterResetEqualsAFreshInit) {
  CharacterSettings settings;
  settings.foot_lock = true;
  DatabaseCharacter used, fresh;
  start(used, settings, Vec3{3, 0, -2}, 1.0f);
  start(fresh, settings, Vec3{-4, 0, 5}, -2.0f);
  test::expect_reset_matches_fresh(used, fresh, Vec3{-4, 0, 5}, -2.0f);
}

TEST_F(CompositionTest, DatabaseCharacterTeleportMovesItRigidly) {
  CharacterSettings settings;
  settings.foot_lock = true;
  DatabaseCharacter c;
  start(c, settings, Vec3{}, 0.0f);
  test::expect_teleport_moves_rigidly(c, Vec3{10, 0, -5}, 2.5f);
}

TEST_F(CompositionTest, DatabaseCharacterRootOwnedByTheGameMovesOnlyAsTheGameSays) {
  CharacterSettings library_settings;
  library_settings.adjust_to_simulation = false;
  CharacterSettings game_settings;  // the pull stays on: a game-owned root must skip it
  game_settings.root_owner = RootOwner::Game;
  DatabaseCharacter game, library;
  start(game, game_settings, Vec3{1, 0, 1}, 0.5f);
  start(library, library_settings, Vec3{1, 0, 1}, 0.5f);
  test::expect_game_owned_root(game, library);
}

// The game's agent: moves along +z, turns to +x after `turn_at` s, at `speed` m/s.
struct Agent {
  float speed = 1.3f, turn_at = 3.0f;

  RootSample at(float t) const {
    const float a = std::min(t, turn_at), b = std::max(0.0f, t - turn_at);
    const Vec3 heading = t < turn_at ? Vec3{0, 0, 1} : Vec3{1, 0, 0};
    return RootSample{Vec3{b * speed, 0, a * speed}, quat_from_heading(heading)};
  }
};

TEST_F(CompositionTest, SuppliedTrajectoryCharacterFollowsTheGamesAgent) {
  example::SuppliedTrajectoryCharacter c;
  std::string error;
  ASSERT_TRUE(c.init(db_, search_, example::SuppliedTrajectorySettings{}, Vec3{}, 0.0f, error)) << error;
  const Agent agent;
  std::vector<RootSample> samples(c.sample_times().size());
  float worst = 0.0f, sum = 0.0f;
  int counted = 0;
  const float dt = 1.0f / 60.0f;
  for (int f = 0; f < 360; ++f) {
    const float t = f * dt;
    for (size_t i = 0; i < samples.size(); ++i) samples[i] = agent.at(t + c.sample_times()[i]);
    ASSERT_TRUE(c.plan(agent.at(t), samples));
    c.update(dt);
    const float error = length(on_ground(c.root().position - agent.at(t + dt).position));
    if (f > 60) worst = std::max(worst, error), sum += error, ++counted;
  }
  EXPECT_LT(sum / float(counted), 0.3f) << "the character stays with the agent";
  EXPECT_LT(worst, 0.6f) << "even through the agent's right-angle turn";
  const Vec3 facing = rotate(c.root().rotation, Vec3{0, 0, 1});
  EXPECT_GT(facing.x, 0.8f) << "and faces +x after the agent's turn";
  EXPECT_GT(c.searches(), 50);
  EXPECT_GT(c.transitions(), 0);
  for (const Vec3& p : c.global_positions()) EXPECT_TRUE(is_finite(p));
  EXPECT_FALSE(c.plan(agent.at(0), Span<const RootSample>(samples.data(), samples.size() - 1)));
}

}  // namespace
