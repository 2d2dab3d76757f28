// C API misuse (lmm/lmm.h) that must be refused with a message instead of corrupting memory or
// leaving a character NaN: non-finite placement, double release, use after release, handles of
// the wrong kind, a crowd's characters after the crowd, unbounded workers, crowd ranges outside
// the crowd, special files, gameplay control on learned characters or with unknown tags, states
// and bad config text. Run under ASan/UBSan in the asan configuration.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "lmm/lmm.h"
#include "support/crowd_assets.hpp"

#if defined(__unix__) && !defined(__EMSCRIPTEN__)
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace {

constexpr float kDt = 1.0f / 60.0f;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool error_has(const char* text) { return std::string(lmm_last_error()).find(text) != std::string::npos; }

// The synthetic bundle and database as C API handles.
class CApiMisuse : public testing::Test {
 protected:
  void SetUp() override {
    model_ = lmm_model_load(files_.model.c_str());
    db_ = lmm_database_load(files_.db.c_str());
    ASSERT_TRUE(model_ != nullptr && db_ != nullptr) << lmm_last_error();
  }
  void TearDown() override {
    lmm_model_release(model_);
    lmm_database_release(db_);
  }

  const lmm::test::AssetFiles files_{};
  lmm_model* model_ = nullptr;
  lmm_database* db_ = nullptr;
};

// Whether the character's root position is finite (and readable).
bool root_is_finite(const lmm_character* c) {
  float p[3];
  return lmm_character_root_position(c, p) == 1 && std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]);
}

// Walks `c` forward for `frames` updates; whether every update succeeded.
bool walk(lmm_character* c, int frames) {
  lmm_gamepad forward{};
  forward.left_y = 1.0f;
  for (int f = 0; f < frames; ++f) {
    if (lmm_character_update(c, &forward, kDt) != 1) return false;
  }
  return true;
}

}  // namespace

TEST_F(CApiMisuse, NonFinitePlacementIsRefusedAndTheCharacterStaysUsable) {
  EXPECT_EQ(lmm_character_create_database(db_, kNaN, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(error_has("x is NaN")) << lmm_last_error();
  EXPECT_EQ(lmm_character_create_learned(model_, 0.0f, 0.0f, kInf), nullptr);
  EXPECT_TRUE(error_has("heading is infinite")) << lmm_last_error();
  EXPECT_FALSE(error_has("model")) << "the model is not at fault: " << lmm_last_error();
  for (lmm_character* c : {lmm_character_create_database(db_, 1.0f, 2.0f, 0.5f),
                           lmm_character_create_learned(model_, 1.0f, 2.0f, 0.5f)}) {
    ASSERT_NE(c, nullptr) << lmm_last_error();
    EXPECT_EQ(lmm_character_teleport(c, 0.0f, kNaN, 0.0f), 0);
    EXPECT_TRUE(error_has("z is NaN")) << lmm_last_error();
    EXPECT_EQ(lmm_character_reset(c, -kInf, 0.0f, 0.0f), 0);
    EXPECT_TRUE(error_has("x is infinite")) << lmm_last_error();
    EXPECT_EQ(lmm_character_teleport(c, 0.0f, 0.0f, kNaN), 0);
    ASSERT_TRUE(walk(c, 30)) << lmm_last_error();
    EXPECT_TRUE(root_is_finite(c));
    ASSERT_EQ(lmm_character_teleport(c, 5.0f, -3.0f, 1.0f), 1) << lmm_last_error();
    float p[3];
    ASSERT_EQ(lmm_character_root_position(c, p), 1);
    EXPECT_NEAR(p[0], 5.0f, 1e-4f);
    EXPECT_NEAR(p[2], -3.0f, 1e-4f);
    lmm_character_release(c);
  }
}

TEST_F(CApiMisuse, ReleasedHandlesAreRefusedNotUsed) {
  lmm_character* c = lmm_character_create_database(db_, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  lmm_character_release(c);
  EXPECT_FALSE(walk(c, 1));
  EXPECT_TRUE(error_has("not a live character handle")) << lmm_last_error();
  EXPECT_EQ(lmm_character_joint_count(c), 0);
  lmm_character_release(c);  // a second release does nothing but say so
  EXPECT_TRUE(error_has("released already")) << lmm_last_error();

  lmm_database* db = lmm_database_load(files_.db.c_str());
  ASSERT_NE(db, nullptr) << lmm_last_error();
  lmm_database_release(db);
  lmm_database_release(db);
  EXPECT_TRUE(error_has("not a live database handle")) << lmm_last_error();
  EXPECT_EQ(lmm_character_create_database(db, 0.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(error_has("not a live database handle")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_create_database(db, 2), nullptr);
  EXPECT_EQ(lmm_database_id(db), 0u);

  lmm_model* model = lmm_model_load(files_.model.c_str());
  ASSERT_NE(model, nullptr) << lmm_last_error();
  lmm_model_release(model);
  lmm_model_release(model);
  EXPECT_TRUE(error_has("not a live model handle")) << lmm_last_error();
  EXPECT_EQ(lmm_character_create_learned(model, 0.0f, 0.0f, 0.0f), nullptr);
  EXPECT_EQ(lmm_crowd_create_learned(model, 2, 1), nullptr);
}

TEST_F(CApiMisuse, HandlesOfTheWrongKindAreRefused) {
  EXPECT_EQ(lmm_character_create_learned(reinterpret_cast<lmm_model*>(db_), 0.0f, 0.0f, 0.0f), nullptr);
  EXPECT_TRUE(error_has("model is a database handle, not a model")) << lmm_last_error();
  lmm_character* c = lmm_character_create_learned(model_, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_create_database(reinterpret_cast<lmm_database*>(c), 2), nullptr);
  EXPECT_TRUE(error_has("database is a character handle, not a database")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_size(reinterpret_cast<lmm_crowd*>(c)), 0u);
  lmm_model_release(reinterpret_cast<lmm_model*>(c));  // refused: the character lives on
  EXPECT_TRUE(error_has("is a character handle")) << lmm_last_error();
  EXPECT_TRUE(walk(c, 2)) << lmm_last_error();
  int not_a_handle[64] = {};
  EXPECT_EQ(lmm_character_joint_count(reinterpret_cast<lmm_character*>(not_a_handle)), 0);
  EXPECT_TRUE(error_has("not made by lmmkit")) << lmm_last_error();
  lmm_character_release(reinterpret_cast<lmm_character*>(not_a_handle));
  lmm_character_release(c);
}

TEST_F(CApiMisuse, CrowdCharactersDieWithTheirCrowdAndOnlyWithIt) {
  lmm_crowd* crowd = lmm_crowd_create_learned(model_, 3, 2);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  lmm_character* member = lmm_crowd_character(crowd, 1);
  ASSERT_NE(member, nullptr) << lmm_last_error();
  lmm_character_release(member);
  EXPECT_TRUE(error_has("belongs to a crowd")) << lmm_last_error();
  EXPECT_TRUE(root_is_finite(member));
  lmm_crowd_release(crowd);
  float p[3];
  EXPECT_EQ(lmm_character_root_position(member, p), 0);
  EXPECT_TRUE(error_has("released with its crowd")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_character(crowd, 0), nullptr);
  EXPECT_EQ(lmm_crowd_update(crowd, 0, 3, kDt, 0, 0.0), 0);
  lmm_crowd_release(crowd);
  EXPECT_TRUE(error_has("not a live crowd handle")) << lmm_last_error();
}

TEST_F(CApiMisuse, LearnedCrowdWorkersAreBoundedByTheCrowd) {
  EXPECT_EQ(lmm_crowd_create_learned(model_, 2, 3), nullptr);
  EXPECT_TRUE(error_has("workers 3 is outside 1..2")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_create_learned(model_, 2, 100000), nullptr);
  EXPECT_EQ(lmm_crowd_create_learned(model_, 2, 0), nullptr);
  EXPECT_EQ(lmm_crowd_create_learned(model_, 1000, LMM_MAX_CROWD_WORKERS + 1), nullptr);
  EXPECT_TRUE(error_has("outside 1..256")) << lmm_last_error();
  lmm_crowd* crowd = lmm_crowd_create_learned(model_, 2, 2);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  lmm_crowd_release(crowd);
}

TEST_F(CApiMisuse, CrowdUpdatesOutsideTheCrowdAreRefused) {
  lmm_crowd* crowd = lmm_crowd_create_database(db_, 4);
  ASSERT_NE(crowd, nullptr) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_update(crowd, 3, 1, kDt, 0, 0.0), 0);
  EXPECT_TRUE(error_has("ranks [3, 1) are not within a crowd of 4")) << lmm_last_error();
  EXPECT_EQ(lmm_crowd_update(crowd, 0, 5, kDt, 0, 0.0), 0);
  EXPECT_EQ(lmm_crowd_update(crowd, SIZE_MAX, SIZE_MAX, kDt, 0, 0.0), 0);
  EXPECT_EQ(lmm_crowd_update(crowd, 0, 4, kNaN, 0, 0.0), 1) << lmm_last_error();  // a tiny step, as alone
  float m[16];
  ASSERT_EQ(lmm_crowd_shown_transform(crowd, 2, m), 1);
  for (float v : m) EXPECT_TRUE(std::isfinite(v));
  EXPECT_TRUE(root_is_finite(lmm_crowd_character(crowd, 2)));
  lmm_crowd_release(crowd);
}

TEST_F(CApiMisuse, OnlyRegularFilesAreLoaded) {
  const std::string folder = testing::TempDir();
  EXPECT_EQ(lmm_database_load(folder.c_str()), nullptr);
  EXPECT_TRUE(error_has("is a directory")) << lmm_last_error();
  EXPECT_EQ(lmm_model_load((folder + "missing.lmmw").c_str()), nullptr);
  EXPECT_TRUE(error_has("missing.lmmw: no such file")) << lmm_last_error();
#if defined(__unix__) && !defined(__EMSCRIPTEN__)
  EXPECT_EQ(lmm_database_load("/dev/zero"), nullptr);
  EXPECT_TRUE(error_has("/dev/zero: is not a regular file")) << lmm_last_error();
  const std::string fifo = folder + "lmm-misuse-fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(lmm_database_load(fifo.c_str()), nullptr);  // returns instead of blocking on the FIFO
  EXPECT_TRUE(error_has("is not a regular file")) << lmm_last_error();
  std::string error;
  EXPECT_EQ(lmm::Model::load_file(fifo, error), nullptr);
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  ::unlink(fifo.c_str());
#endif
}

TEST_F(CApiMisuse, GameplayControlIsRefusedWithAMessageOnWrongCharactersAndUnknownNames) {
  // Learned, null and released characters.
  lmm_character* learned = lmm_character_create_learned(model_, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(learned, nullptr) << lmm_last_error();
  // A bundle without tags: names resolve against none, the rest answers as for an untagged database.
  EXPECT_EQ(lmm_character_set_constraint(learned, "walk", nullptr, nullptr), 0);
  EXPECT_TRUE(error_has("unknown tag 'walk' in 'walk' (the model has no tags)")) << lmm_last_error();
  uint64_t tags = 1;
  EXPECT_EQ(lmm_character_tags(learned, &tags), 1);
  EXPECT_EQ(tags, 0u);
  EXPECT_EQ(lmm_character_events(learned, nullptr, 0), 0);
  EXPECT_EQ(lmm_character_constraint_held(learned), 1);
  EXPECT_EQ(lmm_character_idle(learned), 0);
  EXPECT_EQ(lmm_character_action_playing(learned), 0);
  EXPECT_EQ(lmm_character_play_action(learned, "walk", 0, 0), 0);
  EXPECT_TRUE(error_has("unknown tag 'walk'")) << lmm_last_error();
  EXPECT_EQ(lmm_character_play_action_frames(learned, 0, 1, 0, 0), 0);
  EXPECT_TRUE(error_has("lmm_character_play_action_frames is for database characters; this is a learned character"))
      << lmm_last_error();
  EXPECT_EQ(lmm_character_set_states(learned, "[states.a]\n"), 1) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_states(learned, "[states.a]\nrequire = [\"walk\"]\n"), 0);
  EXPECT_TRUE(error_has("state 'a': unknown tag 'walk'")) << lmm_last_error();
  EXPECT_STREQ(lmm_character_state(learned), "");
  EXPECT_TRUE(walk(learned, 2)) << "the learned character is untouched: " << lmm_last_error();
  lmm_character_release(learned);
  EXPECT_EQ(lmm_character_set_state(learned, "a"), 0);
  EXPECT_TRUE(error_has("not a live character handle")) << lmm_last_error();
  EXPECT_EQ(lmm_character_cancel_action(nullptr), 0);
  EXPECT_TRUE(error_has("character is NULL")) << lmm_last_error();
  EXPECT_EQ(lmm_database_tag_count(nullptr), 0);
  EXPECT_EQ(lmm_database_event_name(reinterpret_cast<lmm_database*>(model_), 0), nullptr);
  EXPECT_TRUE(error_has("database is a model handle")) << lmm_last_error();

  // A database character over a database without tags: unknown names, bad text and arguments.
  lmm_character* c = lmm_character_create_database(db_, 0.0f, 0.0f, 0.0f);
  ASSERT_NE(c, nullptr) << lmm_last_error();
  EXPECT_EQ(lmm_database_tag_count(db_), 0);
  EXPECT_EQ(lmm_database_tag_name(db_, 0), nullptr);
  EXPECT_TRUE(error_has("tag 0 is outside")) << lmm_last_error();
  EXPECT_EQ(lmm_database_tag_mask(db_, "walk", nullptr), 0);
  EXPECT_TRUE(error_has("mask is NULL")) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_constraint(c, "", "", "walk"), 0);
  EXPECT_TRUE(error_has("unknown tag 'walk'")) << lmm_last_error();
  EXPECT_EQ(lmm_character_tags(c, nullptr), 0);
  EXPECT_TRUE(error_has("tags is NULL")) << lmm_last_error();
  EXPECT_EQ(lmm_character_events(c, nullptr, 4), -1);
  EXPECT_TRUE(error_has("capacity 4 with out NULL")) << lmm_last_error();
  lmm_event events[2];
  EXPECT_EQ(lmm_character_events(c, events, -1), -1);
  EXPECT_TRUE(error_has("capacity -1 is negative")) << lmm_last_error();
  EXPECT_EQ(lmm_character_play_action(c, nullptr, 0, 0), 0);
  EXPECT_TRUE(error_has("tags is NULL")) << lmm_last_error();
  EXPECT_EQ(lmm_character_play_action(c, " ", 0, 0), 0);
  EXPECT_TRUE(error_has("name no tag")) << lmm_last_error();
  EXPECT_EQ(lmm_character_play_action(c, "wave", 0, 0), 0);
  EXPECT_TRUE(error_has("unknown tag 'wave'")) << lmm_last_error();
  EXPECT_EQ(lmm_character_play_action_frames(c, 80, 100, 0, 0), 0);  // clip 0 ends at frame 90
  EXPECT_TRUE(error_has("frames 80..100 are not a run of one clip")) << lmm_last_error();
  EXPECT_EQ(lmm_character_play_action_frames(c, 5, 2, 0, 0), 0);
  EXPECT_EQ(lmm_character_play_action_frames(c, -1, 2, 0, 0), 0);
  EXPECT_EQ(lmm_character_action_playing(c), 0);
  EXPECT_EQ(lmm_character_set_states(c, nullptr), 0);
  EXPECT_TRUE(error_has("controller_config is NULL")) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_states(c, "[states.a]\nidle = yes\n"), 0);
  EXPECT_TRUE(error_has("controller config: 2: [states.a]: 'idle' must be true or false")) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_states(c, "[states.armed]\nrequire = [\"armed\"]\n"), 0);
  EXPECT_TRUE(error_has("state 'armed': unknown tag 'armed'")) << lmm_last_error();
  ASSERT_EQ(lmm_character_set_states(c, "[states.free]\n"), 1) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_state(c, "armed"), 0);
  EXPECT_TRUE(error_has("no state named 'armed'")) << lmm_last_error();
  EXPECT_EQ(lmm_character_set_state(c, nullptr), 0);
  EXPECT_TRUE(error_has("name is NULL")) << lmm_last_error();
  EXPECT_STREQ(lmm_character_state(c), "");
  ASSERT_EQ(lmm_character_set_state(c, "free"), 1);
  EXPECT_STREQ(lmm_character_state(c), "free");
  EXPECT_TRUE(walk(c, 30)) << lmm_last_error();
  EXPECT_TRUE(root_is_finite(c));
  lmm_character_release(c);
}
