#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "lmm/asset/database.hpp"
#include "support/synthetic_database.hpp"

using namespace lmm;

namespace {

bool loads(const std::vector<uint8_t>& bytes, std::string& error) {
  const AlignedBuffer buffer = test::aligned_copy(bytes);
  return Database::load_buffer(buffer.data(), buffer.size(), error) != nullptr;
}

TEST(Database, LoadsEveryPart) {
  const test::SyntheticDatabase synthetic;
  const AlignedBuffer buffer = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> loaded = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(loaded, nullptr) << error;
  const Database& db = *loaded;
  EXPECT_EQ(db.frame_count(), 12);
  EXPECT_EQ(db.joint_count(), 3);
  EXPECT_EQ(db.fps(), 60.0f);
  EXPECT_EQ(db.skeleton().names[2], "Foot");
  EXPECT_EQ(db.role("left_foot"), 2);
  EXPECT_EQ(db.role("head"), -1);
  ASSERT_EQ(db.ranges().size(), 2u);
  EXPECT_EQ(db.ranges()[1].name, "walk (mirrored)");
  EXPECT_TRUE(db.ranges()[1].mirrored);
  EXPECT_EQ(db.ranges()[1].stop, 12);
  EXPECT_FLOAT_EQ(db.positions(7)[1].x, 0.07f);
  EXPECT_FLOAT_EQ(db.positions(7)[1].y, 1.0f);
  EXPECT_FLOAT_EQ(db.angular_velocities(3)[2].y, 0.2f);
  EXPECT_EQ(db.contacts(5)[0], 1);
  EXPECT_EQ(db.schema().dims, 5);
  EXPECT_EQ(db.schema().groups[1].name, "trajectory");
  EXPECT_EQ(db.schema().trajectory_offsets, (std::vector<int>{20}));
  EXPECT_FLOAT_EQ(db.features(10)[1], 1.0f - 0.05f);
}

// Issue 14: meta.unit_scale (the source BVH unit) is optional, so databases written before it
// existed still load (source_unit_scale 0); when present it must be one positive number.
TEST(Database, ReadsTheOptionalSourceUnitScale) {
  std::string error;
  test::SyntheticDatabase old_file;
  const AlignedBuffer old_buffer = test::aligned_copy(old_file.build());
  const std::shared_ptr<const Database> old_db = Database::load_buffer(old_buffer.data(), old_buffer.size(), error);
  ASSERT_NE(old_db, nullptr) << error;
  EXPECT_EQ(old_db->source_unit_scale(), 0.0f);
  test::SyntheticDatabase millimetres;
  millimetres.unit_scale = {0.001f};
  const AlignedBuffer buffer = test::aligned_copy(millimetres.build());
  const std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(db, nullptr) << error;
  EXPECT_EQ(db->source_unit_scale(), 0.001f);
  for (const std::vector<float>& bad : {std::vector<float>{-0.01f}, {0.0f}, {std::nanf("")}, {0.01f, 0.01f}}) {
    test::SyntheticDatabase wrong;
    wrong.unit_scale = bad;
    EXPECT_FALSE(loads(wrong.build(), error));
    EXPECT_NE(error.find("meta.unit_scale"), std::string::npos) << error;
  }
}

// Issue 17: databases of format version 1 (before phase.values) still load, with no phases.
TEST(Database, VersionOneFilesLoadWithoutPhases) {
  test::SyntheticDatabase old_file;
  old_file.version = 1;
  const AlignedBuffer buffer = test::aligned_copy(old_file.build());
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(db, nullptr) << error;
  EXPECT_EQ(db->blob().version(), 1u);
  EXPECT_EQ(db->phase_channels(), 0);
  EXPECT_EQ(db->schema().phase_channels, 0);
  EXPECT_EQ(db->schema().dims, 5);
}

// Issue 17: phase.values holds each frame's phase embedding; a phase group reads it.
TEST(Database, ReadsThePhaseEmbedding) {
  test::SyntheticDatabase synthetic;
  synthetic.add_phase_group(3);
  const AlignedBuffer buffer = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(db, nullptr) << error;
  EXPECT_EQ(db->phase_channels(), 3);
  EXPECT_EQ(db->schema().dims, 5 + 6);
  EXPECT_EQ(db->schema().groups[2].kind, FeatureKind::Phase);
  for (int f = 0; f < db->frame_count(); ++f) {
    for (int c = 0; c < 6; ++c) {
      ASSERT_EQ(db->phase(f)[c], test::SyntheticDatabase::phase_value(size_t(f), uint64_t(c))) << f << " " << c;
    }
  }
}

TEST(Database, RejectsMissingMisSizedOrNonFinitePhases) {
  std::string error;
  test::SyntheticDatabase missing;
  missing.add_phase_group(2);
  missing.phase.clear();
  EXPECT_FALSE(loads(missing.build(), error));
  EXPECT_NE(error.find("feature group 'phase' (kind phase)"), std::string::npos) << error;
  EXPECT_NE(error.find("phase.values"), std::string::npos) << error;

  test::SyntheticDatabase narrow;
  narrow.add_phase_group(2);
  narrow.phase.resize(narrow.phase.size() / 2);
  narrow.phase_width = 2;
  EXPECT_FALSE(loads(narrow.build(), error));
  EXPECT_NE(error.find("phase.values has 2 columns, expected 4"), std::string::npos) << error;

  test::SyntheticDatabase odd;  // phases without a phase group: any even width
  odd.phase.assign(12 * 3, 0.5f);
  odd.phase_width = 3;
  EXPECT_FALSE(loads(odd.build(), error));
  EXPECT_NE(error.find("phase.values has 3 columns"), std::string::npos) << error;

  test::SyntheticDatabase nan;
  nan.add_phase_group(2);
  nan.phase[7 * 4 + 1] = std::nanf("");
  EXPECT_FALSE(loads(nan.build(), error));
  EXPECT_NE(error.find("phase.values: frame 7, column 1"), std::string::npos) << error;
}

TEST(Database, RejectsInconsistentContent) {
  std::string error;
  test::SyntheticDatabase gap;
  gap.range_start = {0, 6};
  EXPECT_FALSE(loads(gap.build(), error));
  EXPECT_NE(error.find("range"), std::string::npos) << error;

  test::SyntheticDatabase bad_parent;
  bad_parent.parents = {-1, 2, 1};
  EXPECT_FALSE(loads(bad_parent.build(), error));
  EXPECT_NE(error.find("parent"), std::string::npos) << error;

  test::SyntheticDatabase nan_feature;
  nan_feature.features[7] = std::nanf("");
  EXPECT_FALSE(loads(nan_feature.build(), error));
  EXPECT_NE(error.find("NaN"), std::string::npos) << error;

  test::SyntheticDatabase bad_group;
  bad_group.group_items = {9, 20};
  EXPECT_FALSE(loads(bad_group.build(), error));
  EXPECT_NE(error.find("foot_position"), std::string::npos) << error;

  test::SyntheticDatabase zero_scale;
  zero_scale.feature_scale[2] = 0.0f;
  EXPECT_FALSE(loads(zero_scale.build(), error));
}

TEST(Database, RejectsTruncationAndCorruption) {
  const std::vector<uint8_t> bytes = test::SyntheticDatabase().build();
  std::string error;
  for (size_t n = 0; n < bytes.size(); n += 7) {
    EXPECT_FALSE(loads(std::vector<uint8_t>(bytes.begin(), bytes.begin() + long(n)), error)) << n;
  }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<uint8_t> bad = bytes;
    bad[rng() % bad.size()] ^= uint8_t(1u << (rng() % 8));
    EXPECT_FALSE(loads(bad, error)) << "trial " << trial;
  }
}

TEST(Database, FailedLoadLeavesTheLoadedDatabaseAlone) {
  const AlignedBuffer good = test::aligned_copy(test::SyntheticDatabase().build());
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_buffer(good.data(), good.size(), error);
  ASSERT_NE(db, nullptr) << error;
  test::SyntheticDatabase broken;
  broken.range_start = {0, 6};
  const AlignedBuffer bad = test::aligned_copy(broken.build());
  EXPECT_EQ(Database::load_buffer(bad.data(), bad.size(), error), nullptr);
  EXPECT_EQ(Database::load_file("/nonexistent/x.mmdb", error), nullptr);
  EXPECT_EQ(db->frame_count(), 12);
  EXPECT_EQ(db->ranges().size(), 2u);
  EXPECT_FLOAT_EQ(db->positions(7)[1].x, 0.07f);
}

TEST(Database, LoadFileNamesTheFile) {
  std::string error;
  EXPECT_EQ(Database::load_file("/nonexistent/dir/x.mmdb", error), nullptr);
  EXPECT_NE(error.find("/nonexistent/dir/x.mmdb"), std::string::npos) << error;

  const std::string path = testing::TempDir() + "lmm_db_test.mmdb";
  const std::vector<uint8_t> bytes = test::SyntheticDatabase().build();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size() - 10, f);
  std::fclose(f);
  EXPECT_EQ(Database::load_file(path, error), nullptr);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  std::remove(path.c_str());
}

}  // namespace

namespace {

// Issue 12 item 3: the loader checks the joint data it serves, not only the features.
TEST(Database, RejectsNonFiniteOrAbsurdJointData) {
  std::string error;
  test::SyntheticDatabase nan_rotation;
  nan_rotation.rotations[4 * (3 * 7 + 1) + 2] = std::nanf("");  // frame 7, joint 1 (Hips), x
  EXPECT_FALSE(loads(nan_rotation.build(), error));
  EXPECT_NE(error.find("bones.rotations: frame 7, joint 1 ('Hips')"), std::string::npos) << error;

  test::SyntheticDatabase scaled_rotation;
  for (int c = 0; c < 4; ++c) scaled_rotation.rotations[4 * (3 * 2 + 2) + c] *= 0.5f;  // frame 2, Foot
  EXPECT_FALSE(loads(scaled_rotation.build(), error));
  EXPECT_NE(error.find("frame 2, joint 2 ('Foot') is not a unit quaternion"), std::string::npos) << error;

  test::SyntheticDatabase far_position;
  far_position.positions[3 * (3 * 11 + 0)] = 1e30f;
  EXPECT_FALSE(loads(far_position.build(), error));
  EXPECT_NE(error.find("bones.positions: frame 11, joint 0 ('Simulation')"), std::string::npos) << error;

  test::SyntheticDatabase inf_velocity;
  inf_velocity.velocities[5] = INFINITY;
  EXPECT_FALSE(loads(inf_velocity.build(), error));
  EXPECT_NE(error.find("bones.velocities"), std::string::npos) << error;

  test::SyntheticDatabase nan_angular;
  nan_angular.angular_velocities.back() = std::nanf("");
  EXPECT_FALSE(loads(nan_angular.build(), error));
  EXPECT_NE(error.find("bones.angular_velocities: frame 11, joint 2"), std::string::npos) << error;

  test::SyntheticDatabase bad_contact;
  bad_contact.contacts[3] = 7;
  EXPECT_FALSE(loads(bad_contact.build(), error));
  EXPECT_NE(error.find("contacts.states: frame 3"), std::string::npos) << error;
}

// Issue 12 item 2: schemas a loader accepts are within the documented limits.
TEST(Database, RejectsSchemasBeyondTheLimits) {
  std::string error;
  for (float weight : {1e38f, 1e-40f, INFINITY, std::nanf("")}) {
    test::SyntheticDatabase db;
    db.group_weight[1] = weight;
    EXPECT_FALSE(loads(db.build(), error)) << weight;
    EXPECT_NE(error.find("feature group 'trajectory'"), std::string::npos) << error;
  }
  test::SyntheticDatabase far_offset;
  far_offset.group_items[1] = 2147483600;  // near INT_MAX: frame + offset would overflow
  EXPECT_FALSE(loads(far_offset.build(), error));
  EXPECT_NE(error.find("frame offset 2147483600"), std::string::npos) << error;

  FeatureSchema wide;
  FeatureGroup group;
  group.name = "wide";
  group.kind = FeatureKind::TrajectoryPosition;
  group.items.assign(kMaxFeatureDims / 2 + 1, 1);
  wide.groups.push_back(group);
  EXPECT_FALSE(wide.finalize(3, error));
  EXPECT_NE(error.find(std::to_string(kMaxFeatureDims)), std::string::npos) << error;
}

TEST(Database, LoadFileRejectsADirectory) {
  std::string error;
  EXPECT_EQ(Database::load_file(testing::TempDir(), error), nullptr);
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
}

}  // namespace
