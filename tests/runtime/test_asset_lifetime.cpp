// Asset lifetime (issue 13, item 1): a Database or Model is an immutable asset owned through
// std::shared_ptr, so reloading one in place is impossible, moving one is impossible, and freeing
// the caller's pointer while characters, indexes or evaluators use it is safe. The runtime tests
// run under ASan in the asan configuration: a use after free fails them there.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "lmm/blob_writer.hpp"
#include "lmm/asset/database.hpp"
#include "lmm/character/database_character.hpp"
#include "lmm/character/learned_character.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/character/path_following.hpp"
#include "lmm/eval/search.hpp"
#include "support/synthetic_database.hpp"
#include "support/synthetic_model.hpp"

using namespace lmm;

namespace {

// Assets can only be made by their factories and only read through the pointer they return:
// no copy, no move (std::vector growth cannot relocate them), no default construction and no
// member that reloads (load_file / load_buffer are static factories, not member functions).
template <typename Asset>
constexpr bool is_immutable_asset() {
  using Factory = std::shared_ptr<const Asset> (*)(const std::string&, std::string&);
  using BufferFactory = std::shared_ptr<const Asset> (*)(const uint8_t*, size_t, std::string&);
  return !std::is_copy_constructible_v<Asset> && !std::is_move_constructible_v<Asset> &&
         !std::is_copy_assignable_v<Asset> && !std::is_move_assignable_v<Asset> &&
         !std::is_default_constructible_v<Asset> &&
         std::is_same_v<decltype(&Asset::load_file), Factory> &&
         std::is_same_v<decltype(&Asset::load_buffer), BufferFactory>;
}
static_assert(is_immutable_asset<Database>(), "Database must be an immutable, factory-made asset");
static_assert(is_immutable_asset<Model>(), "Model must be an immutable, factory-made asset");
static_assert(std::is_move_constructible_v<DatabaseCharacter> && std::is_move_constructible_v<LearnedCharacter> &&
                  std::is_move_constructible_v<PathFollower>,
              "characters may be moved (they hold their assets through shared pointers)");

constexpr int kUpdates = 300;
constexpr float kDt = 1.0f / 60.0f;

// Writes `bytes` to a fresh file named `name` in the test temp folder; returns its path.
std::string temp_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = testing::TempDir() + name;
  std::string error;
  EXPECT_TRUE(write_file_atomic(path, bytes.data(), bytes.size(), error)) << error;
  return path;
}

// A database of random-walk clips (`clips` of them) loaded from a file, so that the asset owns
// its bytes and freeing it frees them.
std::shared_ptr<const Database> load_walk_database(int clips, uint32_t seed) {
  test::SyntheticDatabase synthetic;
  std::mt19937 rng(seed);
  std::vector<int> lengths;
  for (int r = 0; r < clips; ++r) lengths.push_back(60 + int(rng() % 200));
  synthetic.randomize(lengths, seed);
  const std::string path = temp_file("lifetime-" + std::to_string(seed) + ".mmdb", synthetic.build());
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(path, error);
  EXPECT_NE(db, nullptr) << error;
  std::remove(path.c_str());
  return db;
}

// A random-weight model bundle (with the encoder) on SyntheticDatabase's schema, loaded from a
// file so that the asset owns its bytes.
std::shared_ptr<const Model> load_model(uint32_t seed) {
  std::string error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(test::random_model_values(4, seed, false, true), false, error);
  EXPECT_FALSE(bytes.empty()) << error;
  const std::string path = temp_file("lifetime-" + std::to_string(seed) + ".lmmw", bytes);
  std::shared_ptr<const Model> model = Model::load_file(path, error);
  EXPECT_NE(model, nullptr) << error;
  std::remove(path.c_str());
  return model;
}

GamepadInput input_at(int frame) {
  GamepadInput in;
  in.left_x = float((frame / 90) % 3 - 1) * 0.7f;
  in.left_y = 0.8f;
  return in;
}

bool pose_is_finite(const PoseOutput& c) {
  for (const Vec3& p : c.global_positions()) {
    if (!is_finite(p)) return false;
  }
  return true;
}

// Whether `a` and `b` hold the same joint positions, bit for bit.
bool same_pose(const PoseOutput& a, const PoseOutput& b) {
  const std::vector<Vec3>& p = a.global_positions();
  const std::vector<Vec3>& q = b.global_positions();
  if (p.size() != q.size()) return false;
  for (size_t j = 0; j < p.size(); ++j) {
    if (p[j].x != q[j].x || p[j].y != q[j].y || p[j].z != q[j].z) return false;
  }
  return true;
}

// Runs `character` kUpdates frames; every frame played lies in `frames` and every pose is finite.
void run_database_character(DatabaseCharacter& character, int frames) {
  for (int f = 0; f < kUpdates; ++f) {
    character.update(input_at(f), kDt);
    ASSERT_TRUE(pose_is_finite(character)) << "update " << f;
    ASSERT_GE(character.current_frame(), 0);
    ASSERT_LT(character.current_frame(), frames) << "update " << f;
  }
}

TEST(AssetLifetime, DatabaseCharacterKeepsItsDatabaseAfterTheCallerDropsOrReplacesIt) {
  std::shared_ptr<const Database> db = load_walk_database(12, 31);
  ASSERT_NE(db, nullptr);
  const int frames = db->frame_count();
  const std::weak_ptr<const Database> watch = db;
  {
    FeatureSearch search;
    DatabaseCharacter character;
    std::string error;
    ASSERT_TRUE(search.build(db, error)) << error;
    ASSERT_TRUE(character.init(db, search, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
    // Old API: db.load_file(other) reloaded the object under the character (a segfault). The
    // closest thing now: the caller's pointer moves to a much smaller database, then is dropped.
    db = load_walk_database(1, 32);
    ASSERT_NE(db, nullptr);
    ASSERT_LT(db->frame_count(), frames);
    db.reset();
    EXPECT_FALSE(watch.expired());
    ASSERT_NO_FATAL_FAILURE(run_database_character(character, frames));
    EXPECT_EQ(character.stats().updates, kUpdates);
    EXPECT_GT(character.stats().searches, 0);
  }
  EXPECT_TRUE(watch.expired());  // the last user released it: no leak, no cycle
}

TEST(AssetLifetime, LearnedCharacterAndEvaluatorKeepTheirModelAfterTheCallerDropsIt) {
  std::shared_ptr<const Model> model = load_model(41);
  ASSERT_NE(model, nullptr);
  const std::weak_ptr<const Model> watch = model;
  const int pose_size = model->pose_layout().size(), state_size = model->state_size();
  {
    LearnedCharacter character;
    ModelEvaluator evaluator;
    std::string error;
    ASSERT_TRUE(character.init(model, LearnedSettings{}, Vec3{}, 0.0f, error)) << error;
    ASSERT_TRUE(evaluator.init(model, 1, KernelPath::Auto, error)) << error;
    // Old API: model.load_file(other) reloaded in place and froze the pose (non-finite states).
    model = load_model(42);
    model.reset();
    EXPECT_FALSE(watch.expired());
    for (int f = 0; f < kUpdates; ++f) {
      character.update(input_at(f), kDt);
      ASSERT_TRUE(pose_is_finite(character)) << "update " << f;
    }
    EXPECT_EQ(character.stats().nonfinite_states, 0);
    EXPECT_GT(character.stats().searches, 0);
    const std::vector<float> state(static_cast<size_t>(state_size), 0.1f);
    std::vector<float> pose(static_cast<size_t>(pose_size));
    EXPECT_TRUE(evaluator.decode(state.data(), pose.data()));
  }
  EXPECT_TRUE(watch.expired());
}

TEST(AssetLifetime, PathFollowerKeepsItsDatabaseAfterTheCallerDropsIt) {
  std::shared_ptr<const Database> db = load_walk_database(12, 33);
  ASSERT_NE(db, nullptr);
  const int frames = db->frame_count();
  FeatureSearch search;
  std::string error;
  ASSERT_TRUE(search.build(db, error)) << error;
  Path path;
  ASSERT_TRUE(make_path({{0.0f, 0.0f, 0.0f}, {4.0f, 0.0f, 5.0f}}, PathShaping{}, db->fps(), path, error)) << error;
  PathFollower follower;
  ASSERT_TRUE(follower.init(db, search, PathFollowerSettings{}, path, error)) << error;
  db.reset();
  for (int f = 0; f < kUpdates; ++f) {
    follower.update(kDt);
    ASSERT_TRUE(pose_is_finite(follower)) << "update " << f;
    ASSERT_LT(follower.current_frame(), frames);
  }
}

TEST(AssetLifetime, CharactersInAGrowingVectorMatchTheirUnmovedTwins) {
  // Old API: a std::vector<Model> that grew after init moved the models under their characters
  // (invalid reads). Assets cannot move now; characters may, and keep working when they do.
  const std::shared_ptr<const Model> model = load_model(43);
  const std::shared_ptr<const Database> db = load_walk_database(12, 34);
  ASSERT_TRUE(model != nullptr && db != nullptr);
  FeatureSearch search;
  std::string error;
  ASSERT_TRUE(search.build(db, error)) << error;
  std::vector<LearnedCharacter> learned(1);
  std::vector<DatabaseCharacter> matched(1);
  LearnedCharacter learned_twin;
  DatabaseCharacter matched_twin;
  for (LearnedCharacter* c : {&learned[0], &learned_twin}) {
    ASSERT_TRUE(c->init(model, LearnedSettings{}, Vec3{}, 0.0f, error)) << error;
  }
  for (DatabaseCharacter* c : {&matched[0], &matched_twin}) {
    ASSERT_TRUE(c->init(db, search, CharacterSettings{}, Vec3{}, 0.0f, error)) << error;
  }
  const LearnedCharacter* first_learned = learned.data();
  const DatabaseCharacter* first_matched = matched.data();
  for (int f = 0; f < kUpdates; ++f) {
    learned.emplace_back();  // grows (and reallocates) while the first characters run
    matched.emplace_back();
    learned[0].update(input_at(f), kDt);
    learned_twin.update(input_at(f), kDt);
    matched[0].update(input_at(f), kDt);
    matched_twin.update(input_at(f), kDt);
    ASSERT_TRUE(same_pose(learned[0], learned_twin)) << "update " << f;
    ASSERT_TRUE(same_pose(matched[0], matched_twin)) << "update " << f;
  }
  EXPECT_NE(learned.data(), first_learned);  // the characters really moved
  EXPECT_NE(matched.data(), first_matched);
  EXPECT_EQ(learned[0].stats().nonfinite_states, 0);
}

TEST(AssetLifetime, IdsAreUniqueAcrossLoadsAndKindsAndStable) {
  const std::shared_ptr<const Database> a = load_walk_database(2, 35);
  const std::shared_ptr<const Database> b = load_walk_database(2, 35);  // same bytes, another load
  const std::shared_ptr<const Model> m = load_model(44);
  ASSERT_TRUE(a != nullptr && b != nullptr && m != nullptr);
  EXPECT_GT(a->id(), 0u);
  EXPECT_NE(a->id(), b->id());
  EXPECT_NE(a->id(), m->id());
  EXPECT_NE(b->id(), m->id());
  const uint64_t id = a->id();
  FeatureSearch search;
  std::string error;
  ASSERT_TRUE(search.build(a, error)) << error;
  EXPECT_EQ(search.database()->id(), id);
  const std::shared_ptr<const Database> copy = a;
  EXPECT_EQ(copy->id(), id);
  EXPECT_EQ(a->id(), id);
}

TEST(AssetLifetime, NullAssetsAreRejectedWithAMessage) {
  std::string error;
  FeatureSearch search;
  EXPECT_FALSE(search.build(nullptr, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
  error.clear();
  DatabaseCharacter matched;
  EXPECT_FALSE(matched.init(nullptr, search, CharacterSettings{}, Vec3{}, 0.0f, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
  error.clear();
  LearnedCharacter learned;
  EXPECT_FALSE(learned.init(nullptr, LearnedSettings{}, Vec3{}, 0.0f, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
  error.clear();
  ModelEvaluator evaluator;
  EXPECT_FALSE(evaluator.init(nullptr, 1, KernelPath::Auto, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
  error.clear();
  Path path;
  path.points = {Vec3{}, Vec3{0, 0, 1}};
  PathFollower follower;
  EXPECT_FALSE(follower.init(nullptr, search, PathFollowerSettings{}, path, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
}

}  // namespace
