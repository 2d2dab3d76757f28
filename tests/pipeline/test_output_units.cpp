// Issue 14 item 4: lmm-sim / lmm-path write BVH in the unit of the source BVH files (meta.unit_scale),
// so their output re-imports with the skeleton config that made the database: same joint offsets,
// contacts labelled. Checked on synthetic bipeds in metres and millimetres and on the Bandai data.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "lmm/asset/database.hpp"
#include "lmm/engines/simulation.hpp"
#include "lmm/import/bvh.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/eval/search.hpp"
#include "support/bandai_data.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;

namespace {

// `text` (a BVH file in centimetres) with every length (offsets, End Sites, position channels)
// written in units of `metres_per_unit`.
std::string in_units(const std::string& text, float metres_per_unit) {
  BvhFile bvh = parse_bvh(text, "synthetic");
  const float factor = 0.01f / metres_per_unit;
  for (BvhJoint& joint : bvh.joints) {
    joint.offset = joint.offset * factor;
    joint.end_site = joint.end_site * factor;
  }
  size_t value = 0;
  for (int f = 0; f < bvh.frame_count; ++f) {
    for (const BvhJoint& joint : bvh.joints) {
      for (BvhChannel c : joint.channels) {
        if (c <= BvhChannel::Zposition) bvh.values[value] *= factor;
        ++value;
      }
    }
  }
  return write_bvh(bvh);
}

// The synthetic biped's skeleton config at `metres_per_unit`; Simulation (the root lmm-sim writes)
// is collapsed, as the Bandai config does.
SkeletonConfig biped_config(const std::string& dir, float metres_per_unit) {
  std::string toml = test::biped_skeleton_toml();
  const std::string unit_line = "unit_scale = 0.01\n";
  const size_t at = toml.find(unit_line);
  EXPECT_NE(at, std::string::npos);
  toml.replace(at, unit_line.size(), "unit_scale = " + format_number(metres_per_unit) + "\ncollapse = [\"Simulation\"]\n");
  return load_skeleton_config(test::write_text(dir + "/biped.toml", toml));
}

std::shared_ptr<const Database> load(const std::string& file) {
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(file, error);
  EXPECT_NE(db, nullptr) << error;
  return db;
}

// Simulates 4 s of walking forward on `db` (database playback, the root not pulled, so contacts
// are the data's) and writes the motion as the tools do (write_motion_files): `stem`.bvh in the
// unit they choose by default (--units file) and `stem`.glb, with the generated mesh (--mesh spindles).
void simulate_to_files(const std::shared_ptr<const Database>& db, const std::string& stem) {
  FeatureSearch search;
  std::string error;
  ASSERT_TRUE(search.build(db, error)) << error;
  InputScript walk;
  walk.keys.push_back(InputKey{});
  walk.keys.back().input.left_y = 1.0f;
  CharacterSettings settings;
  settings.adjust_to_simulation = false;
  std::vector<CharacterTrack> tracks;
  run_simulation(db, search, settings, {walk}, 4.0f, 1.0f / 60.0f, tracks);
  std::string note;
  const float unit_scale = output_unit_scale("file", db->source_unit_scale(), "db.mmdb", note);
  EXPECT_EQ(unit_scale, db->source_unit_scale());
  EXPECT_EQ(note, "");
  write_motion_files(stem, db->skeleton(), tracks[0].clip, unit_scale, bone_spindles(db->skeleton()));
}

// Every joint of `original` has the same rest offset (m) in `again`, found by name.
void expect_same_offsets(const Skeleton& original, const Skeleton& again) {
  ASSERT_EQ(original.joint_count(), again.joint_count());
  for (int j = 1; j < original.joint_count(); ++j) {
    const int k = again.find(original.names[size_t(j)]);
    ASSERT_GE(k, 0) << original.names[size_t(j)];
    EXPECT_LT(length(again.offsets[size_t(k)] - original.offsets[size_t(j)]), 1e-4f) << original.names[size_t(j)];
  }
}

}  // namespace

TEST(OutputUnits, NamedNumericAndOldFileUnits) {
  std::string note;
  EXPECT_EQ(output_unit_scale("m", 0.01f, "x.mmdb", note), 1.0f);
  EXPECT_EQ(output_unit_scale("cm", 1.0f, "x.mmdb", note), 0.01f);
  EXPECT_EQ(output_unit_scale("mm", 1.0f, "x.mmdb", note), 0.001f);
  EXPECT_EQ(output_unit_scale("0.0254", 1.0f, "x.mmdb", note), 0.0254f);
  EXPECT_EQ(output_unit_scale("file", 0.001f, "x.mmdb", note), 0.001f);
  EXPECT_EQ(note, "");
  // A database from before meta.unit_scale: centimetres, as lmm-sim always wrote, with a note.
  EXPECT_EQ(output_unit_scale("file", 0.0f, "old.mmdb", note), 0.01f);
  EXPECT_NE(note.find("old.mmdb does not record"), std::string::npos) << note;
  EXPECT_NE(note.find("centimetres"), std::string::npos) << note;
  for (const char* bad : {"inch", "0", "-1", "1e9", "nan"}) {
    try {
      output_unit_scale(bad, 1.0f, "x.mmdb", note);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--units: '" + std::string(bad) + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(OutputUnits, SyntheticRigsInMetresAndMillimetresReimportWithTheirConfig) {
  for (const float metres_per_unit : {1.0f, 0.001f}) {
    SCOPED_TRACE(metres_per_unit);
    const std::string dir = test::temp_folder(metres_per_unit == 1.0f ? "m" : "mm");
    // Slow walks (0.2 m/s, under the contact speed threshold): most frames are contacts.
    ImportOptions o;
    o.skeleton = biped_config(dir, metres_per_unit);
    o.features = load_feature_config(test::write_text(dir + "/f.toml", test::biped_features_toml()));
    o.mirror = false;
    o.inputs = {test::write_text(dir + "/c.bvh", in_units(test::circle_walk_bvh(20.0f, 200.0f, 120, 30.0f), metres_per_unit)),
                test::write_text(dir + "/w.bvh", in_units(test::straight_walk_bvh(20.0f, 120, 30.0f), metres_per_unit))};
    const ImportSummary source = import_database(o, dir + "/db.mmdb");
    ASSERT_GT(source.contact_ratio, 0.5);
    const std::shared_ptr<const Database> db = load(dir + "/db.mmdb");
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(db->source_unit_scale(), metres_per_unit);

    simulate_to_files(db, dir + "/motion");
    o.inputs = {dir + "/motion.bvh"};
    const ImportSummary again = import_database(o, dir + "/again.mmdb");
    const std::shared_ptr<const Database> reimported = load(dir + "/again.mmdb");
    ASSERT_NE(reimported, nullptr);
    expect_same_offsets(db->skeleton(), reimported->skeleton());
    EXPECT_GT(again.contact_ratio, 0.5 * source.contact_ratio);
  }
}

TEST(OutputUnits, BandaiSimulationBvhAndGlbReimportWithTheBandaiConfig) {
  REQUIRE_BANDAI(folder, "normal-extra");
  const std::string dir = test::temp_folder("bandai");
  const std::string clips = folder + "/normal-extra/dataset-1_walk_normal_001.bvh";
  const ImportSummary source = test::import_bandai({clips}, dir + "/db.mmdb");
  const std::shared_ptr<const Database> db = load(dir + "/db.mmdb");
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->source_unit_scale(), 0.01f);  // configs/skeletons/bandai.toml: centimetres
  simulate_to_files(db, dir + "/motion");
  const ImportSummary again = test::import_bandai({dir + "/motion.bvh"}, dir + "/again.mmdb");
  const std::shared_ptr<const Database> reimported = load(dir + "/again.mmdb");
  ASSERT_NE(reimported, nullptr);
  expect_same_offsets(db->skeleton(), reimported->skeleton());
  EXPECT_GT(again.contact_ratio, 0.5 * source.contact_ratio);
  // The .glb written beside it (metres, Y-up) imports with the same config to the same features.
  test::import_bandai({dir + "/motion.glb"}, dir + "/again-glb.mmdb");
  const std::shared_ptr<const Database> from_glb = load(dir + "/again-glb.mmdb");
  ASSERT_NE(from_glb, nullptr);
  expect_same_offsets(db->skeleton(), from_glb->skeleton());
  ASSERT_EQ(from_glb->frame_count(), reimported->frame_count());
  float worst = 0.0f;
  for (int f = 0; f < reimported->frame_count(); ++f) {
    for (int d = 0; d < reimported->schema().dims; ++d) {
      worst = std::max(worst, std::fabs(from_glb->features(f)[d] - reimported->features(f)[d]));
    }
  }
  EXPECT_LT(worst, 0.01f);  // normalised features; the BVH's printed digits differ from the floats
}
