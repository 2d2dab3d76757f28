// The learned motion-matching character on random synthetic bundles: finite output under any
// input, NaN input sanitised and counted, no allocation per update, sub-frame steps that
// interpolate the stepper, the cost comparison and the prediction age limit; pose vectors and
// the model / database compatibility check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "lmm/character/learned_character.hpp"
#include "lmm/asset/pose_vector.hpp"
#include "lmm/eval/pose_kernels.hpp"
#include "lmm/core/rotation_6d.hpp"
#include "support/allocation_counter.hpp"
#include "support/character_contract.hpp"
#include "support/synthetic_model.hpp"

using namespace lmm;

namespace {

struct LoadedModel {
  AlignedBuffer buffer;
  std::shared_ptr<const Model> model;
};

void load(LoadedModel& out, uint32_t seed = 5) {
  std::string error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(test::random_model_values(4, seed, false, true), false, error);
  ASSERT_FALSE(bytes.empty()) << error;
  out.buffer = test::aligned_copy(bytes);
  out.model = Model::load_buffer(out.buffer.data(), out.buffer.size(), error);
  ASSERT_NE(out.model, nullptr) << error;
}

// A bundle of test::tagged_model_values (tags "calm" and "loud", see there).
void load_tagged(LoadedModel& out, float calm_step = 0.0f, float left_step = -1.0f / 60.0f, bool keep_calm_out = false) {
  std::string error;
  ModelValues values = test::tagged_model_values(4, 9, calm_step, left_step);
  if (keep_calm_out) values.kept_out_tag_names = {test::kSyntheticTags[0]};
  const std::vector<uint8_t> bytes = test::synthetic_bundle(values, false, error);
  ASSERT_FALSE(bytes.empty()) << error;
  out.buffer = test::aligned_copy(bytes);
  out.model = Model::load_buffer(out.buffer.data(), out.buffer.size(), error);
  ASSERT_NE(out.model, nullptr) << error;
}

// The constraint of the comma-separated tag names `require` and `exclude` of the model.
TagConstraint constraint_of(const Model& model, const std::string& require, const std::string& exclude = "") {
  TagConstraint c;
  std::string error;
  EXPECT_TRUE(model.tags().tag_mask(require, c.require_all, error)) << error;
  EXPECT_TRUE(model.tags().tag_mask(exclude, c.exclude, error)) << error;
  return c;
}

void start(LearnedCharacter& character, const std::shared_ptr<const Model>& model, const LearnedSettings& settings) {
  std::string error;
  ASSERT_TRUE(character.init(model, settings, Vec3{1, 0, 2}, 0.3f, error)) << error;
}

GamepadInput stick(float x, float y) {
  GamepadInput in;
  in.left_x = x;
  in.left_y = y;
  return in;
}

bool pose_is_finite(const LearnedCharacter& c) {
  for (const Vec3& p : c.global_positions()) {
    if (!is_finite(p)) return false;
  }
  return true;
}

LearnedSettings with_transition(LearnedTransition mode) {
  LearnedSettings s;
  s.transition = mode;
  return s;
}

// Settings under which nothing but the stepper changes the state.
LearnedSettings stepper_only() {
  LearnedSettings s;
  s.search_interval = 1e6f;
  s.max_prediction = 1e6f;
  s.force_search_velocity = 1e6f;
  s.force_search_rotation = 1e6f;
  s.transition_cost = 1e9f;  // the first update's projection never wins
  return s;
}

}  // namespace

TEST(LearnedCharacter, RandomInputGivesFinitePosesAndCountsSearches) {
  LoadedModel m;
  load(m);
  for (LearnedTransition mode : {LearnedTransition::LatentBlend, LearnedTransition::Inertialize}) {
    LearnedCharacter c;
    start(c, m.model, with_transition(mode));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (int f = 0; f < 600; ++f) {
      c.update(stick(unit(rng), unit(rng)), f % 7 == 0 ? 0.05f : 1.0f / 60.0f);
      ASSERT_TRUE(pose_is_finite(c)) << "frame " << f;
    }
    EXPECT_EQ(c.stats().updates, 600);
    EXPECT_GE(c.stats().searches, 600 / 6 / 2);  // at least every 0.1 s of the ~13 s simulated
    EXPECT_EQ(c.stats().nonfinite_states, 0);
    EXPECT_EQ(c.local_positions().size(), size_t(m.model->skeleton().joint_count()));
  }
}

TEST(LearnedCharacter, NanInputIsSanitisedCountedAndNeverReachesThePose) {
  LoadedModel m;
  load(m);
  LearnedCharacter clean, dirty;
  start(clean, m.model, LearnedSettings{});
  start(dirty, m.model, LearnedSettings{});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int f = 0; f < 120; ++f) {
    GamepadInput bad = stick(nan, 0.8f);
    bad.camera_azimuth = std::numeric_limits<float>::infinity();
    clean.update(stick(0.0f, 0.8f), 1.0f / 60.0f);
    dirty.update(bad, f == 50 ? nan : 1.0f / 60.0f);
    ASSERT_TRUE(pose_is_finite(dirty));
  }
  EXPECT_EQ(dirty.stats().sanitized_inputs, 240);
  EXPECT_EQ(dirty.stats().clamped_dt, 1);
  EXPECT_EQ(clean.stats().sanitized_inputs, 0);
}

TEST(LearnedCharacter, UpdateAllocatesNothing) {
  LoadedModel m;
  load(m);
  for (LearnedTransition mode : {LearnedTransition::LatentBlend, LearnedTransition::Inertialize}) {
    LearnedCharacter c;
    start(c, m.model, with_transition(mode));
    c.update(stick(0.5f, 0.5f), 1.0f / 60.0f);
    test::start_counting_allocations();
    for (int f = 0; f < 300; ++f) c.update(stick(std::sin(0.1f * f), std::cos(0.07f * f)), f % 3 ? 0.011f : 0.2f);
    EXPECT_EQ(test::stop_counting_allocations(), 0);
    EXPECT_GT(c.stats().transitions, 0);
  }
}

TEST(LearnedCharacter, ResetEqualsAFreshInit) {
  LoadedModel m;
  load(m);
  for (LearnedTransition mode : {LearnedTransition::LatentBlend, LearnedTransition::Inertialize}) {
    LearnedCharacter used, fresh;
    std::string error;
    ASSERT_TRUE(used.init(m.model, with_transition(mode), Vec3{3, 0, -2}, 1.0f, error)) << error;
    ASSERT_TRUE(fresh.init(m.model, with_transition(mode), Vec3{-4, 0, 5}, -2.0f, error)) << error;
    test::expect_reset_matches_fresh(used, fresh, Vec3{-4, 0, 5}, -2.0f);
  }
}

TEST(LearnedCharacter, TeleportMovesItRigidly) {
  LoadedModel m;
  load(m);
  LearnedCharacter c;
  start(c, m.model, LearnedSettings{});
  test::expect_teleport_moves_rigidly(c, Vec3{-7, 0, 12}, -1.2f);
}

TEST(LearnedCharacter, RootOwnedByTheGameMovesOnlyAsTheGameSays) {
  LoadedModel m;
  load(m);
  LearnedSettings library_settings;
  library_settings.adjust_to_simulation = false;
  LearnedSettings game_settings;  // the pull stays on: a game-owned root must skip it
  game_settings.root_owner = RootOwner::Game;
  LearnedCharacter game, library;
  start(game, m.model, game_settings);
  start(library, m.model, library_settings);
  test::expect_game_owned_root(game, library);
}

TEST(LearnedCharacter, SubFrameStepsInterpolateTheStepperStates) {
  LoadedModel m;
  load(m);
  LearnedCharacter whole, halves;
  start(whole, m.model, stepper_only());
  start(halves, m.model, stepper_only());
  const float frame = 1.0f / m.model->fps();
  std::vector<float> before;
  for (int f = 0; f < 20; ++f) {
    before = whole.network_state();
    whole.update(GamepadInput{}, frame);
    halves.update(GamepadInput{}, 0.5f * frame);
    // Half-way: the mean of the two whole-frame states.
    for (size_t i = 0; i < before.size(); ++i) {
      ASSERT_NEAR(halves.network_state()[i], 0.5f * (before[i] + whole.network_state()[i]), 1e-4f) << "frame " << f << " dim " << i;
    }
    halves.update(GamepadInput{}, 0.5f * frame);
    for (size_t i = 0; i < before.size(); ++i) ASSERT_NEAR(halves.network_state()[i], whole.network_state()[i], 1e-4f);
  }
  EXPECT_EQ(whole.stats().transitions, 0);
}

TEST(LearnedCharacter, KeepsTheCurrentPredictionUntilItsAgeLimit) {
  LoadedModel m;
  load(m);
  LearnedSettings settings;
  settings.transition_cost = 1e9f;  // the projected state never wins on cost
  settings.max_prediction = 0.5f;
  LearnedCharacter c;
  start(c, m.model, settings);
  for (int f = 0; f < 600; ++f) c.update(stick(0.0f, 1.0f), 1.0f / 60.0f);
  // 10 s with a 0.5 s age limit: every transition is a forced re-projection.
  EXPECT_EQ(c.stats().transitions, c.stats().forced_projections);
  EXPECT_GE(c.stats().forced_projections, 18);
  EXPECT_LE(c.stats().forced_projections, 20);
}

TEST(LearnedCharacter, CharactersSharingAModelRunOnSeparateThreads) {
  LoadedModel m;
  load(m);
  // Each character owns its evaluator scratch; the Model is read-only. Concurrent runs must
  // give what the same runs give one after the other.
  auto run = [&](LearnedCharacter& c, float phase) {
    for (int f = 0; f < 400; ++f) c.update(stick(std::sin(0.05f * f + phase), std::cos(0.03f * f)), 1.0f / 60.0f);
  };
  LearnedCharacter sequential[2], concurrent[2];
  for (int i = 0; i < 2; ++i) {
    start(sequential[i], m.model, LearnedSettings{});
    start(concurrent[i], m.model, LearnedSettings{});
    run(sequential[i], float(i));
  }
  std::thread other([&] { run(concurrent[1], 1.0f); });
  run(concurrent[0], 0.0f);
  other.join();
  for (int i = 0; i < 2; ++i) {
    for (size_t j = 0; j < sequential[i].global_positions().size(); ++j) {
      EXPECT_EQ(length(sequential[i].global_positions()[j] - concurrent[i].global_positions()[j]), 0.0f);
    }
  }
}

TEST(LearnedTags, TheBundleCarriesTagNamesAndTheProjectorReadsTheConstraint) {
  LoadedModel m;
  load_tagged(m);
  const Model& model = *m.model;
  EXPECT_EQ(model.tag_count(), 2);
  EXPECT_EQ(model.state_size(), 4 + test::kSyntheticFeatures + 2 + 1);  // latent, features, tags, calm's seconds left
  EXPECT_EQ(model.action_tags(), TagMask(1));
  EXPECT_EQ(model.event_names(), (std::vector<std::string>{"foot_plant_" + model.skeleton().names[size_t(model.contact_joints()[0])],
                                                           "enter_calm", "leave_calm", "enter_loud", "leave_loud"}));
  EXPECT_EQ(model.projector_input_size(), test::kSyntheticFeatures + 2 * kConstraintCodeWidth + 1);
  EXPECT_EQ(model.decoder().in, model.state_size());
  std::vector<float> code(7);
  model.constraint_code(TagConstraint{1, 2, 2}, TagMask(1), code.data());
  EXPECT_EQ(code, (std::vector<float>{1, 0, 0, 0, 1, 1, 1}));
  std::vector<float> state(size_t(model.state_size()), 0.0f);
  state[size_t(model.latent() + model.feature_dims() + 1)] = 0.6f;  // "loud"
  EXPECT_EQ(model.state_tags(state.data()), TagMask(2));
  TagMask mask = 0;
  std::string error;
  EXPECT_FALSE(model.tags().tag_mask("calm,quiet", mask, error));
  EXPECT_NE(error.find("unknown tag 'quiet'"), std::string::npos) << error;
  EXPECT_NE(error.find("the model has tags: calm, loud"), std::string::npos) << error;
  LoadedModel untagged;
  load(untagged);
  EXPECT_EQ(untagged.model->tag_count(), 0);
  EXPECT_EQ(untagged.model->projector_input_size(), untagged.model->feature_dims());
}

// `c` on a tagged bundle (load_tagged into `m`) with stepper_only() settings, updated once.
void start_tagged(LoadedModel& m, LearnedCharacter& c) {
  load_tagged(m);
  start(c, m.model, stepper_only());
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
}

TEST(LearnedTags, AConstraintProjectsInTheNextUpdateAndHolds) {
  LoadedModel m;
  LearnedCharacter c;
  start_tagged(m, c);
  EXPECT_EQ(c.current_tags(), TagMask(0));  // unconstrained, the projector gives calm 0.25
  const CharacterStats before = c.stats();
  c.set_constraint(constraint_of(*m.model, "calm"));
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_EQ(c.stats().searches, before.searches + 1);
  EXPECT_EQ(c.stats().constraint_searches, 1);
  EXPECT_EQ(c.stats().transitions, before.transitions + 1);  // taken whatever its cost
  for (int f = 0; f < 120; ++f) {
    c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    EXPECT_TRUE(c.constraint_held()) << "frame " << f;
  }
  EXPECT_EQ(c.stats().searches, before.searches + 1);  // the stepper keeps the tag: no other projection
  c.set_constraint(constraint_of(*m.model, "", "calm"));
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_EQ(c.current_tags(), TagMask(0));
  EXPECT_EQ(c.stats().unsatisfied_searches, 0);
}

TEST(LearnedTags, AStateLeavingTheConstraintProjectsAtOnce) {
  LoadedModel m;
  load_tagged(m, -0.05f);  // the stepper lowers calm by 0.05 a frame: 1.25 falls below 0.5 in 16 frames
  LearnedCharacter c;
  start(c, m.model, stepper_only());
  c.set_constraint(constraint_of(*m.model, "calm"));
  int held = 0;
  for (int f = 0; f < 600; ++f) {
    c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    held += c.constraint_held() ? 1 : 0;
  }
  EXPECT_EQ(held, 600);  // each leaving is seen before the pose is decoded: a projection replaces it
  EXPECT_GE(c.stats().constraint_searches, 600 / 16);
  EXPECT_EQ(c.stats().unsatisfied_searches, 0);
}

TEST(LearnedTags, AProjectionBreakingTheConstraintIsNotTaken) {
  LoadedModel m;
  load_tagged(m);
  LearnedCharacter c;
  LearnedSettings settings = stepper_only();
  settings.transition_cost = 0.0f;
  start(c, m.model, settings);
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  c.set_constraint(constraint_of(*m.model, "calm"));
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  const CharacterStats held = c.stats();
  // The projector never makes "loud": requiring both cannot be met, so calm keeps playing...
  c.set_constraint(constraint_of(*m.model, "calm,loud"));
  for (int f = 0; f < 60; ++f) c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_EQ(c.stats().unsatisfied_searches, 1);  // ...and it is not retried every frame
  EXPECT_EQ(c.stats().searches, held.searches + 1);
  // Excluding calm from a calm state: the projection (calm -0.75) is taken.
  c.set_constraint(constraint_of(*m.model, "", "calm"));
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_TRUE(c.constraint_held());
  EXPECT_EQ(c.stats().transitions, held.transitions + 1);
}

// The names of the events `c` reported in its last update (kActionEndEvent as "action_end").
std::vector<std::string> event_names_of(const LearnedCharacter& c, const Model& model) {
  CharacterEvent events[16];
  const int count = c.events(events, 16);
  std::vector<std::string> names;
  for (int e = 0; e < std::min(count, 16); ++e) {
    names.push_back(events[e].name == kActionEndEvent ? "action_end" : model.event_names()[size_t(events[e].name)]);
  }
  return names;
}

// Whether `names` holds `name`.
bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(LearnedTags, AnActionPlaysUntilItsTagsRunEndsAndReportsTheEnd) {
  LoadedModel m;
  LearnedCharacter c;
  start_tagged(m, c);
  EXPECT_FALSE(c.play_action(TagMask(2)));  // "loud" is no action tag
  EXPECT_FALSE(c.play_action(TagMask(4)));  // nor a tag of the model
  std::string error;
  EXPECT_FALSE(c.play_action(TagMask(2), ActionSettings{}, error));
  EXPECT_EQ(error, "'loud' holds no action tag of the model (its action tags: calm)");
  EXPECT_FALSE(c.play_action(TagMask(4), ActionSettings{}, error));
  EXPECT_EQ(error, "tag bits beyond the model's 2 tags");
  ASSERT_TRUE(c.play_action(TagMask(1)));
  EXPECT_TRUE(c.action_playing());
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_TRUE(has(event_names_of(c, *m.model), "enter_calm"));
  int frames = 1;
  while (c.action_playing() && frames < 120) {
    c.update(stick(0.0f, 1.0f), 1.0f / 60.0f);  // steering asks to walk: an action plays on regardless
    ++frames;
  }
  // 0.5 s of calm: its seconds left fall under half a frame after 30 frames.
  EXPECT_NEAR(frames, int(test::kSyntheticCalmSeconds * 60.0f), 1);
  EXPECT_TRUE(has(event_names_of(c, *m.model), "action_end"));
  const int transitions = c.stats().transitions;
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);  // the next update leaves the action's states
  EXPECT_EQ(c.stats().transitions, transitions + 1);
  EXPECT_TRUE(has(event_names_of(c, *m.model), "leave_calm"));
  ASSERT_TRUE(c.play_action(TagMask(1)));
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  c.cancel_action();
  EXPECT_FALSE(c.action_playing());
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_TRUE(has(event_names_of(c, *m.model), "action_end"));  // reported by the update after the cancel
}

TEST(LearnedTags, KeptOutActionStatesAreLeftByFreeProjectionsButPlayedAsActions) {
  // The stepper raises calm by 0.05 a frame: free, the state soon holds calm; with calm kept out
  // (model.kept_out_tag_names) a free projection excludes it, so the character leaves it at once.
  for (const bool kept_out : {false, true}) {
    LoadedModel m;
    load_tagged(m, 0.05f, -1.0f / 60.0f, kept_out);
    ASSERT_EQ(m.model->kept_out_tags(), kept_out ? TagMask(1) : TagMask(0));
    LearnedCharacter c;
    start(c, m.model, stepper_only());
    int calm_frames = 0;
    for (int f = 0; f < 120; ++f) {
      c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
      calm_frames += (c.current_tags() & 1) != 0;
    }
    if (kept_out) {
      EXPECT_EQ(calm_frames, 0);
    } else {
      EXPECT_GT(calm_frames, 60);
    }
    if (!kept_out) continue;
    c.set_constraint(constraint_of(*m.model, "", "loud"));  // excluding requires nothing: calm stays out
    for (int f = 0; f < 60; ++f) {
      c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
      EXPECT_FALSE(c.current_tags() & 1) << f;
    }
    ASSERT_TRUE(c.play_action(TagMask(1)));  // the action still plays calm
    c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    EXPECT_TRUE(c.current_tags() & 1);
  }
}

TEST(LearnedTags, AnActionEndsWhenTheEnteredStatesSecondsLeftHavePassedThoughTheStepperStopsCounting) {
  LoadedModel m;
  load_tagged(m, 0.0f, 0.0f);  // the stepper keeps calm's seconds left where the projector put them
  LearnedCharacter c;
  start(c, m.model, stepper_only());
  c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  ASSERT_TRUE(c.play_action(TagMask(1)));
  int frames = 0;
  while (c.action_playing() && frames < 120) {
    c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    ++frames;
  }
  EXPECT_GT(m.model->seconds_left(c.network_state().data(), 0), 0.4f);  // by the state, the run goes on
  EXPECT_NEAR(frames, int(test::kSyntheticCalmSeconds * 60.0f), 1);
  EXPECT_TRUE(has(event_names_of(c, *m.model), "action_end"));
}

TEST(LearnedTags, AnActionIsEnteredByInertializationWhateverTheTransition) {
  LoadedModel m;
  load_tagged(m);
  LearnedSettings blend = stepper_only(), inertialize = stepper_only();
  blend.transition = LearnedTransition::LatentBlend;
  inertialize.transition = LearnedTransition::Inertialize;
  LearnedCharacter a, b;
  start(a, m.model, blend);
  start(b, m.model, inertialize);
  const auto same_poses = [&](const char* when, int frame) {
    for (size_t j = 0; j < a.global_positions().size(); ++j) {
      ASSERT_EQ(length(a.global_positions()[j] - b.global_positions()[j]), 0.0f) << when << " frame " << frame << " joint " << j;
    }
  };
  for (int f = 0; f < 5; ++f) {
    a.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    b.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    same_poses("before the action", f);
  }
  ASSERT_TRUE(a.play_action(TagMask(1)));
  ASSERT_TRUE(b.play_action(TagMask(1)));
  for (int f = 0; f < 25; ++f) {  // the action (0.5 s) and its end
    a.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    b.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    same_poses("in the action", f);
  }
  EXPECT_EQ(a.stats().transitions, b.stats().transitions);
}

TEST(LearnedTags, StatesAndIdleConstrainTheProjections) {
  LoadedModel m;
  load_tagged(m);
  LearnedSettings settings;
  settings.idle.require = "calm";
  LearnedCharacter c;
  start(c, m.model, settings);
  std::string error;
  const StateConfig quiet{"quiet", {}, {}, {"calm"}, 0.0f, false}, any{"any", {}, {}, {}, 0.0f, true};
  EXPECT_FALSE(c.set_states({StateConfig{"bad", {"noisy"}, {}, {}, 0.0f, true}}, error));
  EXPECT_NE(error.find("state 'bad': unknown tag 'noisy'"), std::string::npos) << error;
  ASSERT_TRUE(c.set_states({quiet, any}, error)) << error;
  // A released stick idles on calm states (their quality on real data: scripts/learned-gameplay-checks.sh).
  for (int f = 0; f < 30; ++f) c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
  EXPECT_TRUE(c.idle());
  for (int f = 0; f < 60; ++f) {
    c.update(stick(0.0f, 0.0f), 1.0f / 60.0f);
    EXPECT_TRUE((c.current_tags() & 1) != 0) << "frame " << f;
  }
  c.update(stick(0.0f, 1.0f), 1.0f / 60.0f);
  EXPECT_FALSE(c.idle());
  // The state "quiet" excludes calm and does not idle.
  ASSERT_TRUE(c.set_state("quiet"));
  EXPECT_FALSE(c.set_state("loudest"));
  EXPECT_EQ(c.state(), "quiet");
  for (int f = 0; f < 60; ++f) {
    c.update(stick(0.0f, f < 30 ? 1.0f : 0.0f), 1.0f / 60.0f);
    EXPECT_TRUE(c.constraint_held()) << "frame " << f;
    EXPECT_FALSE(c.idle());
  }
}

TEST(LearnedCharacter, RejectsANullModelAndAnotherSchema) {
  LearnedCharacter c;
  std::string error;
  EXPECT_FALSE(c.init(nullptr, LearnedSettings{}, Vec3{}, 0.0f, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
  LoadedModel m;
  load(m);
  LearnedSettings settings;
  settings.expected_schema = "locomotion";
  EXPECT_FALSE(c.init(m.model, settings, Vec3{}, 0.0f, error));
  EXPECT_NE(error.find("'locomotion'"), std::string::npos) << error;
  EXPECT_NE(error.find("'tiny'"), std::string::npos) << error;
}

TEST(PoseVector, SixDRotationsRoundTrip) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int i = 0; i < 1000; ++i) {
    const Quat q = normalize(Quat{normal(rng), normal(rng), normal(rng), normal(rng)});
    float r6[6];
    quat_to_6d(q, r6);
    const Quat back = quat_from_6d(r6);
    EXPECT_GT(std::fabs(dot(q, back)), 1.0f - 1e-5f) << i;
  }
  const float degenerate[6] = {0, 0, 0, 0, 0, 0};
  const Quat identity = quat_from_6d(degenerate);
  EXPECT_EQ(identity.w, 1.0f);
}

TEST(PoseVector, ManySixDRotationsAtOnceEqualOneAtATimeBitForBit) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int count = 4003;  // not a multiple of 4: the tail goes one at a time
  std::vector<float> r6(size_t(count) * 6);
  for (int i = 0; i < count; ++i) {
    float* r = r6.data() + size_t(i) * 6;
    switch (i % 5) {
      case 0: {  // exact rotations: every branch of the matrix-to-quaternion conversion
        quat_to_6d(normalize(Quat{normal(rng), normal(rng), normal(rng), normal(rng)}), r);
        break;
      }
      case 1:  // network-like: noisy, unnormalised columns
        for (int k = 0; k < 6; ++k) r[k] = normal(rng) * 3.0f;
        break;
      case 2:  // degenerate first column (zero or nearly)
        for (int k = 0; k < 6; ++k) r[k] = k < 3 ? normal(rng) * 1e-9f * float(i % 3) : normal(rng);
        break;
      case 3:  // second column along the first
        for (int k = 0; k < 3; ++k) r[k] = r[k + 3] = normal(rng);
        break;
      default:  // tiny and huge magnitudes
        for (int k = 0; k < 6; ++k) r[k] = normal(rng) * (k % 2 ? 1e-6f : 1e6f);
        break;
    }
  }
  std::vector<Quat> many(static_cast<size_t>(count));
  const auto expect_scalar_results = [&](const char* path) {
    for (int i = 0; i < count; ++i) {
      const Quat one = quat_from_6d(r6.data() + size_t(i) * 6);
      ASSERT_EQ(std::memcmp(&one, &many[size_t(i)], sizeof(Quat)), 0)
          << path << ", rotation " << i << ": " << one.w << " " << one.x << " " << one.y << " " << one.z << " vs "
          << many[size_t(i)].w << " " << many[size_t(i)].x << " " << many[size_t(i)].y << " " << many[size_t(i)].z;
    }
  };
  quats_from_6d(r6.data(), count, many.data());
  expect_scalar_results("default");
  // Every lane width this CPU runs, over counts that leave tails for the narrower ones.
  for (const KernelPath path : available_kernel_paths()) {
    for (const int part : {count, 21, 17, 9, 3}) {
      std::fill(many.begin(), many.end(), Quat{0.0f, 0.0f, 0.0f, 0.0f});
      quats_from_6d(r6.data(), part, many.data(), path);
      quats_from_6d(r6.data() + 6 * part, count - part, many.data() + part, path);
      expect_scalar_results(kernel_path_name(path));
    }
  }
}

TEST(PoseVector, DatabaseFramesRoundTripThroughPoseVectors) {
  const test::LoadedSyntheticDatabase data;
  const Database& db = *data.db;
  const PoseVectorLayout layout = pose_layout_of(db);
  ASSERT_EQ(layout.size(), test::kSyntheticPose);
  std::vector<float> pose(size_t(layout.size()));
  std::vector<Vec3> positions(size_t(db.joint_count()));
  std::vector<Quat> rotations(size_t(db.joint_count()));
  for (int f = 0; f < db.frame_count(); ++f) {
    database_pose_vector(db, f, pose.data());
    pose_from_vector(layout, pose.data(), positions.data(), rotations.data());
    for (int j = 1; j < db.joint_count(); ++j) {
      EXPECT_NEAR(length(positions[size_t(j)] - db.positions(f)[j]), 0.0f, 1e-6f);
      EXPECT_GT(std::fabs(dot(rotations[size_t(j)], db.rotations(f)[j])), 1.0f - 1e-5f);
    }
    const Vec3 v = inverse_rotate(db.rotations(f)[0], db.velocities(f)[0]);
    EXPECT_NEAR(length(pose_root_velocity(layout, pose.data()) - v), 0.0f, 1e-6f);
    EXPECT_EQ(pose[size_t(layout.contact())], db.contacts(f)[0] ? 1.0f : 0.0f);
  }
}

TEST(PoseVector, ModelDatabaseMismatchesNameTheDifference) {
  LoadedModel m;
  load(m);
  std::string error;
  {
    const test::LoadedSyntheticDatabase same;
    EXPECT_TRUE(model_matches_database(*m.model, *same.db, error)) << error;
  }
  auto check = [&](const test::SyntheticDatabase& edited, const std::string& expected) {
    const AlignedBuffer buffer = test::aligned_copy(edited.build());
    const std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
    ASSERT_NE(db, nullptr) << error;
    EXPECT_FALSE(model_matches_database(*m.model, *db, error));
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  };
  test::SyntheticDatabase renamed;
  renamed.joint_names = "Simulation\nHips\nToe\n";
  check(renamed, "'Toe'");
  test::SyntheticDatabase reweighted;
  reweighted.group_weight = {1.0f, 3.0f};
  check(reweighted, "'trajectory'");
  test::SyntheticDatabase renormalised;
  renormalised.feature_scale = {1, 1, 2, 1, 1};
  check(renormalised, "dim 2");
  test::SyntheticDatabase slower;
  slower.fps = 30.0f;
  check(slower, "fps");
}
