#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/import/motion.hpp"
#include "support/shipped_schema.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;
namespace fs = std::filesystem;

namespace {

// Options for importing into `dir` with the biped configs.
ImportOptions biped_options(const std::string& dir) {
  ImportOptions o;
  o.skeleton = load_skeleton_config(test::write_text(dir + "/biped.toml", test::biped_skeleton_toml()));
  o.features = load_feature_config(test::write_text(dir + "/features.toml", test::biped_features_toml()));
  o.threads = 2;
  return o;
}

std::string import_error(const ImportOptions& o, const std::string& out) {
  try {
    import_database(o, out);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string config_error(const std::string& dir, const std::string& skeleton_toml) {
  try {
    load_skeleton_config(test::write_text(dir + "/bad.toml", skeleton_toml));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string feature_config_error(const std::string& dir, const std::string& features_toml) {
  try {
    load_feature_config(test::write_text(dir + "/bad_features.toml", features_toml));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// Imports `o` with --skip-bad into `out`, expecting one good file and one skipped file whose
// single "skipping" warning names `bad_file`; returns the summary.
ImportSummary import_skipping_one(ImportOptions o, const std::string& out, const std::string& bad_file) {
  o.skip_bad = true;
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) {
    if (w.rfind("skipping ", 0) == 0) warnings.push_back(w);
  };
  const ImportSummary s = import_database(o, out);
  EXPECT_EQ(s.files, 1);
  EXPECT_EQ(s.skipped_files, 1);
  EXPECT_EQ(warnings.size(), 1u);
  for (const std::string& w : warnings) EXPECT_NE(w.find(bad_file), std::string::npos) << w;
  return s;
}

// Imports a circle walk and a straight walk into `dir` and loads the database (nullptr and a
// test failure on error).
std::shared_ptr<const Database> import_circle_and_line(const std::string& dir) {
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 90, 30.0f)),
              test::write_text(dir + "/w.bvh", test::straight_walk_bvh(100.0f, 90, 30.0f))};
  import_database(o, dir + "/db.mmdb");
  std::string error;
  std::shared_ptr<const Database> loaded = Database::load_file(dir + "/db.mmdb", error);
  EXPECT_NE(loaded, nullptr) << error;
  return loaded;
}

// Raw (unnormalised) feature `d` of frame `f`.
float raw_feature(const Database& db, int f, int d) {
  return db.features(f)[d] * db.feature_scale()[d] + db.feature_offset()[d];
}

TEST(Import, StraightWalkFeaturesEqualAnalyticValues) {
  const std::string dir = test::temp_folder("walk");
  ImportOptions o = biped_options(dir);
  // A straight constant-speed walk (1.2 m/s) and a circle, so that no group is constant.
  o.inputs = {test::write_text(dir + "/a_walk.bvh", test::straight_walk_bvh(120.0f, 240, 30.0f)),
              test::write_text(dir + "/b_circle.bvh", test::circle_walk_bvh(150.0f, 300.0f, 90, 30.0f))};
  const std::string out = dir + "/walk.mmdb";
  const ImportSummary s = import_database(o, out);
  EXPECT_EQ(s.files, 2);
  EXPECT_EQ(s.clips, 4);
  EXPECT_EQ(s.frames, 2 * (479 + 179));

  std::string error;
  const std::shared_ptr<const Database> loaded = Database::load_file(out, error);
  ASSERT_NE(loaded, nullptr) << error;
  const Database& db = *loaded;
  ASSERT_EQ(db.schema().dims, 6 + 6 + 6 + 6 + 3);
  EXPECT_EQ(db.schema().trajectory_offsets, (std::vector<int>{20, 40, 60}));
  const float v = 1.2f;
  const float expected[27] = {0, v / 3, 0, 2 * v / 3, 0, v,  // trajectory positions
                              0, 1, 0, 1, 0, 1,              // trajectory directions
                              0.1f, 0.05f, 0, -0.1f, 0.05f, 0,  // feet positions
                              0, 0, v, 0, 0, v,              // feet velocities
                              0, 0, v};                      // hip velocity
  for (int f : {100, 200, 350}) {
    for (int d = 0; d < 27; ++d) EXPECT_NEAR(raw_feature(db, f, d), expected[d], 2e-4f) << "frame " << f << " dim " << d;
  }
  // The mirrored copy of the walk has the same features with the feet swapped.
  const DatabaseRange& mirrored = db.ranges()[1];
  EXPECT_TRUE(mirrored.mirrored);
  EXPECT_EQ(mirrored.name, "a_walk (mirrored)");
  EXPECT_NEAR(raw_feature(db, mirrored.start + 100, 12), 0.1f, 2e-4f);
  // Contacts: straight-legged feet at 5 cm moving at 1.2 m/s are not planted.
  EXPECT_EQ(db.contacts(100)[0], 0);
}

TEST(Import, FeaturesOfImportMatchTheRuntimeQueryPath) {
  // The database features equal what the runtime computes from the stored pose.
  const std::shared_ptr<const Database> loaded = import_circle_and_line(test::temp_folder("query"));
  ASSERT_NE(loaded, nullptr);
  const Database& db = *loaded;
  const int f = 50;
  std::vector<RootSample> trajectory;
  for (int offset : db.schema().trajectory_offsets) {
    trajectory.push_back({db.positions(f + offset)[0], db.rotations(f + offset)[0]});
  }
  PoseScratch scratch;
  scratch.resize(db.joint_count());
  std::vector<float> query(size_t(db.schema().dims));
  features_from_local_pose(db.schema(), db.skeleton().parents.data(), db.joint_count(), db.positions(f),
                           db.rotations(f), db.velocities(f), db.angular_velocities(f), trajectory.data(),
                           scratch, query.data());
  normalize_features(query.data(), db.feature_offset(), db.feature_scale(), db.schema().dims);
  for (int d = 0; d < db.schema().dims; ++d) EXPECT_NEAR(query[size_t(d)], db.features(f)[d], 1e-4f) << d;
}

TEST(Import, WeightsScaleNormalisedGroups) {
  const std::shared_ptr<const Database> loaded = import_circle_and_line(test::temp_folder("weights"));
  ASSERT_NE(loaded, nullptr);
  const Database& db = *loaded;
  // Per group: mean-zero dims and mean per-dim std equal to the weight (basic motion matching, normalize_feature).
  for (const FeatureGroup& g : db.schema().groups) {
    double std_sum = 0.0;
    for (int d = g.first_dim; d < g.first_dim + feature_group_dims(g); ++d) {
      double sum = 0.0, sq = 0.0;
      for (int f = 0; f < db.frame_count(); ++f) {
        sum += db.features(f)[d];
        sq += double(db.features(f)[d]) * db.features(f)[d];
      }
      const double mean = sum / db.frame_count();
      EXPECT_NEAR(mean, 0.0, 1e-3) << g.name;
      std_sum += std::sqrt(sq / db.frame_count() - mean * mean);
    }
    EXPECT_NEAR(std_sum / feature_group_dims(g), g.weight, 1e-3) << g.name;
  }
}

TEST(Import, NoMirrorAndFrameRateOptions) {
  const std::string dir = test::temp_folder("options");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 91, 30.0f))};
  o.mirror = false;
  o.fps = 30.0f;
  const ImportSummary s = import_database(o, dir + "/o.mmdb");
  EXPECT_EQ(s.clips, 1);
  EXPECT_EQ(s.frames, 91);
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(dir + "/o.mmdb", error);
  ASSERT_NE(db, nullptr) << error;
  EXPECT_EQ(db->schema().trajectory_offsets, (std::vector<int>{10, 20, 30}));
}

TEST(ImportErrors, BadFileStopsWithoutWritingByDefault) {
  const std::string dir = test::temp_folder("bad");
  ImportOptions o = biped_options(dir);
  std::string broken = test::straight_walk_bvh(100.0f, 30, 30.0f);
  broken.replace(broken.find("Frames: 30"), 10, "Frames: 31");
  o.inputs = {test::write_text(dir + "/good.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f)),
              test::write_text(dir + "/broken.bvh", broken)};
  const std::string out = dir + "/out.mmdb";
  const std::string error = import_error(o, out);
  EXPECT_NE(error.find("broken.bvh"), std::string::npos) << error;
  EXPECT_NE(error.find("--skip-bad"), std::string::npos) << error;
  for (const auto& entry : fs::directory_iterator(dir)) {  // nor any temporary file "out.mmdb.*.tmp"
    EXPECT_NE(entry.path().filename().string().rfind("out.mmdb", 0), 0u) << entry.path();
  }

  // The circle turns, so every feature group varies and the one good file imports alone.
  import_skipping_one(o, out, "broken.bvh");
  EXPECT_TRUE(fs::exists(out));
}

TEST(ImportErrors, FailedImportKeepsThePreviousDatabase) {
  const std::string dir = test::temp_folder("keep");
  ImportOptions o = biped_options(dir);
  const std::string out = test::write_text(dir + "/out.mmdb", "previous contents");
  o.inputs = {test::write_text(dir + "/broken.bvh", "HIERARCHY\nROOT Hips\n{\n")};
  EXPECT_FALSE(import_error(o, out).empty());
  std::ifstream in(out);
  std::string contents;
  std::getline(in, contents);
  EXPECT_EQ(contents, "previous contents");
}

TEST(ImportErrors, SkeletonMismatchNamesTheFile) {
  const std::string dir = test::temp_folder("mismatch");
  ImportOptions o = biped_options(dir);
  std::string other = test::circle_walk_bvh(150.0f, 300.0f, 30, 30.0f);
  other.replace(other.find("JOINT Spine"), 11, "JOINT Chest");
  o.inputs = {test::write_text(dir + "/a.bvh", test::circle_walk_bvh(150.0f, 300.0f, 30, 30.0f)),
              test::write_text(dir + "/b.bvh", other)};
  const std::string error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("b.bvh"), std::string::npos) << error;
  EXPECT_NE(error.find("'Chest'"), std::string::npos) << error;
}

TEST(ImportErrors, ZeroVarianceGroupIsNamed) {
  const std::string dir = test::temp_folder("variance");
  ImportOptions o = biped_options(dir);
  // Straight walks only: trajectory directions never change.
  o.inputs = {test::write_text(dir + "/w.bvh", test::straight_walk_bvh(100.0f, 60, 30.0f))};
  const std::string error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("'trajectory_direction'"), std::string::npos) << error;
  EXPECT_NE(error.find("zero variance"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir + "/out.mmdb"));
}

TEST(ImportErrors, UnknownJointInConfigListsAvailableJoints) {
  const std::string dir = test::temp_folder("joint");
  ImportOptions o = biped_options(dir);
  std::string toml = test::biped_skeleton_toml();
  toml.replace(toml.find("\"Foot_L\""), 8, "\"LeftFoot\"");
  o.skeleton = load_skeleton_config(test::write_text(dir + "/skel.toml", toml));
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  const std::string error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("'LeftFoot'"), std::string::npos) << error;
  EXPECT_NE(error.find("skel.toml [contacts] joints needs role 'left_foot'"), std::string::npos) << error;
  // Issue 14: the importer's own Simulation joint is not one the config could name.
  EXPECT_NE(error.find("available joints: Hips, Spine, UpperLeg_L, Foot_L"), std::string::npos) << error;
  EXPECT_EQ(error.find("Simulation"), std::string::npos) << error;
}

TEST(ImportErrors, MissingInputsAreNamed) {
  const std::string dir = test::temp_folder("missing");
  ImportOptions o = biped_options(dir);
  o.inputs = {dir + "/nothing_here"};
  EXPECT_NE(import_error(o, dir + "/o.mmdb").find("nothing_here"), std::string::npos);
  o.inputs = {dir};
  EXPECT_NE(import_error(o, dir + "/o.mmdb").find("no .bvh, .gltf, .glb or .fbx files"), std::string::npos);
}

TEST(ConfigErrors, NameTheFileKeyOrLine) {
  const std::string dir = test::temp_folder("config");
  EXPECT_NE(config_error(dir, test::biped_skeleton_toml() + "colour = 3\n").find("unknown key 'colour'"),
            std::string::npos);
  std::string typo = test::biped_skeleton_toml();
  typo.replace(typo.find("height_threshold"), 16, "height_treshold");
  EXPECT_NE(config_error(dir, typo).find("[contacts]: unknown key 'height_treshold'"), std::string::npos);
  const std::string syntax = config_error(dir, "name = \"x\"\nunit_scale = = 2\n");
  EXPECT_NE(syntax.find("bad.toml:2:"), std::string::npos) << syntax;
  EXPECT_NE(config_error(dir, "unit_scale = -1\n[simulation]\nfacing_left=[\"a\"]\nfacing_right=[\"b\"]\n")
                .find("'unit_scale' = -1 is outside [0.0001, 10000]"),
            std::string::npos);
  try {
    load_feature_config(test::write_text(dir + "/f.toml", "[[group]]\nname = \"g\"\nkind = \"rotation\"\nseconds = [1.0]\n"));
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kind 'rotation'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_feature_config(test::write_text(dir + "/g.toml", "[[group]]\nname = \"g\"\nkind = \"bone_position\"\nseconds = [1.0]\n")),
               InputError);
}

TEST(ShippedConfigs, SchemasHaveTheSeedDimensions) {
  const FeatureSchema s27 = test::shipped_schema("locomotion27");
  EXPECT_EQ(s27.dims, 27);
  EXPECT_EQ(s27.trajectory_offsets, (std::vector<int>{20, 40, 60}));
  const FeatureSchema s31 = test::shipped_schema("lipschitz31");
  EXPECT_EQ(s31.dims, 31);
  EXPECT_EQ(s31.trajectory_offsets, (std::vector<int>{-6, 18, 36, 60}));
}

TEST(ImportErrors, CorruptedDatabaseFromImportIsRejected) {
  const std::string dir = test::temp_folder("corrupt");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  const std::string out = dir + "/c.mmdb";
  import_database(o, out);
  const auto size = fs::file_size(out);
  {
    std::fstream f(out, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(size / 2));
    f.put('\x7f');
  }
  std::string error;
  EXPECT_EQ(Database::load_file(out, error), nullptr);
  EXPECT_NE(error.find("c.mmdb"), std::string::npos) << error;
  fs::resize_file(out, size / 3);
  EXPECT_EQ(Database::load_file(out, error), nullptr);
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST(ImportLimits, FrameTimeOutOfRangeStopsOrIsSkippedBesideAGoodFile) {
  const std::string dir = test::temp_folder("frame_time");
  const std::string out = dir + "/out.mmdb";
  for (const char* frame_time : {"100000", "1e-30"}) {
    ImportOptions o = biped_options(dir);
    const std::string circle = test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f);
    const std::string bad =
        replaced(circle, "Frame Time: " + std::to_string(1.0 / 30.0), std::string("Frame Time: ") + frame_time);
    // The bad file comes first, so it would be the reference skeleton.
    o.inputs = {test::write_text(dir + "/a_bad.bvh", bad), test::write_text(dir + "/good.bvh", circle)};
    const std::string error = import_error(o, out);
    EXPECT_NE(error.find("a_bad.bvh:"), std::string::npos) << error;
    EXPECT_NE(error.find("frame time"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(out));

    import_skipping_one(o, out, "a_bad.bvh");
    std::string load_error;
    EXPECT_NE(Database::load_file(out, load_error), nullptr) << load_error;
    fs::remove(out);
  }
}

TEST(ImportLimits, FileFailingWhileProcessedIsSkippedOrNamed) {
  const std::string dir = test::temp_folder("process_fault");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  // The file parses, but its hips jump 9 km in one frame: 270 km/s, beyond what the database
  // loader accepts (lmm::kMaxJointSpeed), found per file while the clips are processed.
  const std::string jump = replaced(test::straight_walk_bvh(100.0f, 60, 30.0f), "0 90 100.000000 ", "0 90 900000 ");
  o.inputs = {test::write_text(dir + "/good.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f)),
              test::write_text(dir + "/jump.bvh", jump)};
  const std::string error = import_error(o, out);
  EXPECT_NE(error.find("jump.bvh"), std::string::npos) << error;
  EXPECT_NE(error.find("m/s"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(out));

  EXPECT_EQ(import_skipping_one(o, out, "jump.bvh").clips, 2);
}

TEST(ImportLimits, AnExceptionInAWorkerReachesTheCaller) {
  const std::string dir = test::temp_folder("worker");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  // Two clips (the file and its mirror) on two threads; the callback throws in both.
  o.progress = [](const char* stage, int, int) {
    if (std::string(stage) == "process") throw std::runtime_error("progress display failed");
  };
  EXPECT_THROW(import_database(o, dir + "/out.mmdb"), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir + "/out.mmdb"));
}

TEST(ImportLimits, BvhFileNameWithANewlineGivesALoadableDatabase) {
  const std::string dir = test::temp_folder("file_name");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/walk\nname.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  import_database(o, dir + "/out.mmdb");
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(dir + "/out.mmdb", error);
  ASSERT_NE(db, nullptr) << error;
  EXPECT_EQ(db->ranges()[0].name, "walk_name");
}

TEST(ImportLimits, DatabaseTheLoaderRejectsIsNotWritten) {
  const std::string dir = test::temp_folder("validate");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  // Set in code, past the config checks: the group names no longer split into one per group.
  o.features.groups[0].name = "two\nlines";
  const std::string out = test::write_text(dir + "/out.mmdb", "previous contents");
  const std::string error = import_error(o, out);
  EXPECT_NE(error.find("out.mmdb"), std::string::npos) << error;
  EXPECT_NE(error.find("group names"), std::string::npos) << error;
  std::ifstream in(out);
  std::string contents;
  std::getline(in, contents);
  EXPECT_EQ(contents, "previous contents");
}

TEST(ImportLimits, TrajectoryOffsetThatOverflowsAFrameIndexIsRejected) {
  const std::string dir = test::temp_folder("offset");
  const ImportOptions o = biped_options(dir);
  FeatureSchemaConfig config;
  config.source = "code";
  config.groups.resize(1);
  config.groups[0].name = "far";
  config.groups[0].kind = FeatureKind::TrajectoryPosition;
  config.groups[0].seconds = {4294967296.0 / 60.0};  // 2^32 frames at 60 Hz: wrapped to offset 0
  Skeleton skeleton;
  skeleton.names = {"Simulation", "Hips"};
  skeleton.parents = {-1, 0};
  skeleton.offsets.resize(2);
  EXPECT_THROW(resolve_schema(config, o.skeleton, skeleton, 60.0f), InputError);
}

TEST(ConfigLimits, SkeletonValuesOutsideTheirRangeNameTheKey) {
  const std::string dir = test::temp_folder("skeleton_ranges");
  const std::string toml = test::biped_skeleton_toml();
  const std::pair<const char*, const char*> cases[] = {
      {"position_smoothing = 0.05", "position_smoothing = 1e8"},
      {"direction_smoothing = 0.1", "direction_smoothing = -1"},
      {"unit_scale = 0.01", "unit_scale = 1e30"},
      {"unit_scale = 0.01", "unit_scale = 1e-30"},
      {"velocity_threshold = 0.3", "velocity_threshold = -0.3"},
      {"height_threshold = 0.08", "height_threshold = 1e9"},
      {"filter = 0.05", "filter = 1e9"},
  };
  for (const auto& c : cases) {
    const std::string key = std::string(c.second).substr(0, std::string(c.second).find(' '));
    const std::string error = config_error(dir, replaced(toml, c.first, c.second));
    EXPECT_NE(error.find("bad.toml"), std::string::npos) << error;
    EXPECT_NE(error.find("'" + key + "'"), std::string::npos) << error;
    EXPECT_NE(error.find("outside ["), std::string::npos) << error;
  }
}

TEST(ConfigLimits, FeatureWeightsAndSecondsOutsideTheirRangeNameTheGroup) {
  const std::string dir = test::temp_folder("feature_ranges");
  const std::string group = "name = \"f\"\n[[group]]\nname = \"ahead\"\nkind = \"trajectory_position\"\n";
  for (const char* weight : {"1e38", "1e-40", "1e7", "0.0", "-1.0", "inf", "nan"}) {
    const std::string error = feature_config_error(dir, group + "seconds = [0.5]\nweight = " + weight + "\n");
    EXPECT_NE(error.find("('ahead'): 'weight'"), std::string::npos) << weight << ": " << error;
  }
  for (const char* seconds : {"nan", "inf", "-inf", "11.0", "-1e9"}) {
    const std::string error = feature_config_error(dir, group + "seconds = [0.5, " + seconds + "]\n");
    EXPECT_NE(error.find("('ahead'): 'seconds'"), std::string::npos) << seconds << ": " << error;
  }
}

TEST(ConfigLimits, SchemaDimensionsAreBounded) {
  const std::string dir = test::temp_folder("dims");
  // Trajectory positions take two dims per sample.
  auto schema = [](int samples) {
    std::string text = "[[group]]\nname = \"many\"\nkind = \"trajectory_position\"\nseconds = [0.5";
    for (int i = 1; i < samples; ++i) text += ", 0.5";
    return text + "]\n";
  };
  EXPECT_EQ(feature_config_error(dir, schema(lmm::kMaxFeatureDims / 2)), "");
  const std::string error = feature_config_error(dir, schema(lmm::kMaxFeatureDims / 2 + 1));
  EXPECT_NE(error.find(std::to_string(lmm::kMaxFeatureDims + 2) + " dims"), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(lmm::kMaxFeatureDims)), std::string::npos) << error;
}

TEST(ConfigLimits, NamesWithControlCharactersOrEqualsSignsAreRejected) {
  const std::string dir = test::temp_folder("names");
  const std::string toml = test::biped_skeleton_toml();
  const std::pair<const char*, const char*> skeleton_cases[] = {
      {"left_foot = \"Foot_L\"", "\"left\\nfoot\" = \"Foot_L\""},   // role with a newline
      {"left_foot = \"Foot_L\"", "\"left=foot\" = \"Foot_L\""},      // role with '='
      {"left_foot = \"Foot_L\"", "left_foot = \"Foot\\tL\""},        // joint with a tab
      {"[\"UpperLeg_L\"]", "[\"Upper\\u0001Leg_L\"]"},               // joint in a list
  };
  for (const auto& c : skeleton_cases) {
    const std::string error = config_error(dir, replaced(toml, c.first, c.second));
    EXPECT_NE(error.find("bad.toml"), std::string::npos) << error;
    EXPECT_TRUE(error.find("control character") != std::string::npos || error.find("'='") != std::string::npos)
        << error;
  }
  const std::string features = test::biped_features_toml();
  for (const auto& c : {std::make_pair("name = \"feet_position\"", "name = \"feet\\nposition\""),
                        std::make_pair("name = \"hip_velocity\"", "name = \"hip=velocity\""),
                        std::make_pair("bones = [\"hips\"]", "bones = [\"hi\\rps\"]")}) {
    const std::string error = feature_config_error(dir, replaced(features, c.first, c.second));
    EXPECT_NE(error.find("bad_features.toml"), std::string::npos) << error;
    EXPECT_TRUE(error.find("control character") != std::string::npos || error.find("'='") != std::string::npos)
        << error;
  }
}

// Issue 14: import sanity checks.

// The biped standing still for `stand` frames, then walking along +Z at 1 m/s for `walk`
// frames (30 Hz, rotations zero): its feet, 5 cm above the ground, are planted while it stands.
std::string stand_then_walk_bvh(int stand, int walk) {
  std::string text = test::biped_hierarchy() + "MOTION\nFrames: " + std::to_string(stand + walk) +
                     "\nFrame Time: " + std::to_string(1.0 / 30.0) + "\n";
  for (int f = 0; f < stand + walk; ++f) {
    text += "0 90 " + std::to_string(100.0 * std::max(0, f - stand) / 30.0) + " 0 0 0";
    for (int j = 0; j < 5; ++j) text += " 0 0 0";
    text += "\n";
  }
  return text;
}

// Imports `o` into `out` (the summary into `summary` when given) and returns its warnings.
std::vector<std::string> import_warnings(ImportOptions o, const std::string& out, ImportSummary* summary = nullptr) {
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  const ImportSummary s = import_database(o, out);
  if (summary != nullptr) *summary = s;
  return warnings;
}

// The first of `warnings` that starts with `start`, or "".
std::string warning_about(const std::vector<std::string>& warnings, const std::string& start) {
  for (const std::string& w : warnings) {
    if (w.rfind(start, 0) == 0) return w;
  }
  return "";
}

// The biped skeleton config with `from` replaced by `to`, loaded from `dir`/skel.toml.
SkeletonConfig biped_config(const std::string& dir, const std::string& from, const std::string& to) {
  return load_skeleton_config(test::write_text(dir + "/skel.toml", replaced(test::biped_skeleton_toml(), from, to)));
}

TEST(ImportChecks, MirrorPatternThatPairsNoJointsIsAnError) {
  const std::string dir = test::temp_folder("mirror_patterns");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  const std::string biped_pattern = R"([["_L", "_R"]])";
  for (const char* patterns : {R"([["Left", "Right"]])", R"([["_L", "_R"], ["Left", "Right"]])"}) {
    o.skeleton = biped_config(dir, biped_pattern, patterns);
    const std::string error = import_error(o, out);
    EXPECT_NE(error.find(R"(skel.toml [mirror]: pattern ["Left", "Right"] pairs no joints)"), std::string::npos)
        << error;
    EXPECT_FALSE(fs::exists(out));
  }
  // Without patterns every joint is its own partner: an error when mirroring, not without.
  o.skeleton = biped_config(dir, "patterns = " + biped_pattern, "");
  const std::string error = import_error(o, out);
  EXPECT_NE(error.find("skel.toml [mirror]: no 'patterns'"), std::string::npos) << error;
  EXPECT_NE(error.find("--no-mirror"), std::string::npos) << error;
  o.mirror = false;
  EXPECT_EQ(import_error(o, out), "");
}

TEST(ImportChecks, SkeletonHeightIsMeasuredAlongTheBonesAndAboveTheGround) {
  const std::string dir = test::temp_folder("height");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  // biped_hierarchy in centimetres: Foot_L -80 below UpperLeg_L, (10, -5) beside the hips,
  // Spine 10 above them (the highest joint, no head role), the hips at 90.
  const float rest = (80.0f + std::hypot(10.0f, 5.0f) + 10.0f) / 100.0f, standing = (90.0f + 10.0f) / 100.0f;
  ImportSummary s;
  import_warnings(o, out, &s);
  EXPECT_EQ(s.height.top, "Spine");
  EXPECT_EQ(s.height.foot, "Foot_L");
  EXPECT_NEAR(s.height.rest, rest, 1e-5f);
  EXPECT_NEAR(s.height.standing, standing, 1e-5f);

  // Read as millimetres, the biped is a tenth of that: a warning naming the value, the range
  // and the keys to change.
  o.skeleton = biped_config(dir, "unit_scale = 0.01", "unit_scale = 0.001");
  const std::string warning = warning_about(import_warnings(o, out, &s), "skeleton height");
  EXPECT_NEAR(s.height.rest, rest / 10.0f, 1e-5f);
  EXPECT_NE(warning.find("rest " + format_number(s.height.rest) + " m"), std::string::npos) << warning;
  EXPECT_NE(warning.find("within [1, 2.5] m"), std::string::npos) << warning;
  EXPECT_NE(warning.find("unit_scale = 0.001 in "), std::string::npos) << warning;
  EXPECT_NE(warning.find("[checks] height_range"), std::string::npos) << warning;
  // A config for a small character says so.
  o.skeleton = biped_config(dir, "unit_scale = 0.01", "unit_scale = 0.001\n[checks]\nheight_range = [0.05, 0.5]");
  EXPECT_EQ(warning_about(import_warnings(o, out), "skeleton height"), "");
  EXPECT_NE(config_error(dir, test::biped_skeleton_toml() + "[checks]\nheight_range = [2, 1]\n").find("'height_range'"),
            std::string::npos);
}

TEST(ImportChecks, FileWithOtherRestOffsetsIsABadFileNamingBothFiles) {
  const std::string dir = test::temp_folder("offsets");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  const std::string circle = test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f);
  const float rest_cm = 80.0f + std::hypot(10.0f, 5.0f) + 10.0f;  // as in the height test
  const float tolerance_cm = kOffsetTolerance * rest_cm;
  // The first OFFSET 0 -80 0 is Foot_L's.
  const auto foot_offset = [&](const std::string& y) { return replaced(circle, "OFFSET 0 -80 0", "OFFSET 0 " + y + " 0"); };
  o.inputs = {test::write_text(dir + "/a.bvh", circle), ""};
  for (const std::string& y : {std::string("-0.8"), std::to_string(-80.0f - 2.0f * tolerance_cm)}) {
    o.inputs[1] = test::write_text(dir + "/b.bvh", foot_offset(y));  // in metres, or beyond the tolerance
    const std::string error = import_error(o, out);
    EXPECT_NE(error.find("b.bvh: skeleton differs from " + o.inputs[0]), std::string::npos) << error;
    EXPECT_NE(error.find("joint 'Foot_L'"), std::string::npos) << error;
    EXPECT_NE(error.find("unit_scale"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(out));
    import_skipping_one(o, out, "b.bvh");
    fs::remove(out);
  }
  o.inputs[1] = test::write_text(dir + "/b.bvh", foot_offset(std::to_string(-80.0f - 0.5f * tolerance_cm)));
  EXPECT_EQ(import_error(o, out), "");
}

TEST(ImportChecks, ContactRatioOutsideItsRangeIsAWarningNamingTheThresholds) {
  const std::string dir = test::temp_folder("contact_ratio");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  const std::string circle = test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f));
  // Feet that never stop: no contact at all.
  o.inputs = {circle, test::write_text(dir + "/w.bvh", test::straight_walk_bvh(100.0f, 60, 30.0f))};
  ImportSummary s;
  const std::string warning = warning_about(import_warnings(o, out, &s), "contact labels");
  EXPECT_EQ(s.contact_ratio, 0.0);
  EXPECT_NE(warning.find("contact labels: 0% of frames over all contact joints (Foot_L 0%, Foot_R 0%)"),
            std::string::npos) << warning;
  EXPECT_NE(warning.find("velocity_threshold = 0.3 m/s and height_threshold = 0.08 m in"), std::string::npos)
      << warning;
  EXPECT_NE(warning.find("20-80%"), std::string::npos) << warning;
  // Standing two thirds of the stop-and-go clip: within the range, no warning.
  o.inputs = {circle, test::write_text(dir + "/s.bvh", stand_then_walk_bvh(60, 30))};
  const std::vector<std::string> warnings = import_warnings(o, out, &s);
  EXPECT_GT(s.contact_ratio, kMinContactRatio);
  EXPECT_LT(s.contact_ratio, kMaxContactRatio);
  EXPECT_EQ(warning_about(warnings, "contact labels"), "");
}

TEST(ImportChecks, RelativeContactHeightFollowsEachJointsRestingHeight) {
  const std::string dir = test::temp_folder("relative_contacts");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f)),
              test::write_text(dir + "/s.bvh", stand_then_walk_bvh(60, 30))};
  ImportSummary absolute, relative;
  import_warnings(o, out, &absolute);  // height_threshold = 0.08: the feet stand at 0.05
  ASSERT_GT(absolute.contact_ratio, 0.0);
  // 2 cm above the ground is below the feet; 2 cm above their resting height is not.
  const std::string from = "height_threshold = 0.08";
  o.skeleton = biped_config(dir, from, "height_threshold = 0.02");
  import_warnings(o, out, &relative);
  EXPECT_EQ(relative.contact_ratio, 0.0);
  o.skeleton = biped_config(dir, from, "height_above_rest = 0.02");
  import_warnings(o, out, &relative);
  EXPECT_EQ(relative.contact_ratio, absolute.contact_ratio);
  ASSERT_EQ(relative.contact_joints.size(), 2u);
  for (const ContactJointSummary& c : relative.contact_joints) {
    const float foot_height = (90.0f - 5.0f - 80.0f) / 100.0f;  // biped_hierarchy, still legs
    EXPECT_NEAR(c.height_threshold, foot_height + 0.02f, 1e-3f) << c.joint;
  }
  const std::string error = config_error(dir, replaced(test::biped_skeleton_toml(), from, from + "\nheight_above_rest = 0.02"));
  EXPECT_NE(error.find("either 'height_threshold'"), std::string::npos) << error;
  EXPECT_NE(error.find("'height_above_rest'"), std::string::npos) << error;
}

TEST(ImportChecks, MissingRoleIsBlamedOnTheEntryThatNeedsIt) {
  const std::string dir = test::temp_folder("missing_role");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  o.features = load_feature_config(test::write_text(
      dir + "/f.toml",
      test::biped_features_toml() + "[[group]]\nname = \"head_position\"\nkind = \"bone_position\"\nbones = [\"head\"]\n"));
  std::string error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("f.toml group 'head_position' needs 'head', which is neither a role in "), std::string::npos)
      << error;
  EXPECT_NE(error.find("biped.toml [roles]"), std::string::npos) << error;
  EXPECT_NE(error.find("available joints: Hips, Spine,"), std::string::npos) << error;
  EXPECT_EQ(error.find("Simulation"), std::string::npos) << error;
  o = biped_options(dir);
  o.inputs = {dir + "/c.bvh"};
  o.skeleton = biped_config(dir, "facing_left = [\"UpperLeg_L\"]", "facing_left = [\"left_shoulder\"]");
  error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("skel.toml [simulation] facing_left needs 'left_shoulder'"), std::string::npos) << error;
}

// Foreign rigs (issue 40, item 7): files that imported silently with exit 0, or failed with an
// unclear message.

// A standing biped swaying slowly (the root 5 cm side to side at 0.1 m/s, turning +-20 degrees)
// for `frames` frames at 30 fps: standing-only data whose trajectory features still vary.
std::string sway_bvh(int frames) {
  std::string text = test::biped_hierarchy() + "MOTION\nFrames: " + std::to_string(frames) +
                     "\nFrame Time: " + std::to_string(1.0 / 30.0) + "\n";
  for (int f = 0; f < frames; ++f) {
    const double t = f / 30.0;
    text += std::to_string(5.0 * std::sin(2.0 * t)) + " 90 0 0 0 " + std::to_string(20.0 * std::sin(0.5 * t));
    for (int j = 0; j < 5; ++j) text += " 0 0 0";
    text += "\n";
  }
  return text;
}

// `bvh` with one more frame before the others: every rotation zero and the root `back_cm` behind
// the origin (a T-pose before the take).
std::string with_t_pose(const std::string& bvh, float back_cm) {
  const size_t frames_at = bvh.find("Frames: ") + 8, time_at = bvh.find("Frame Time:");
  const int frames = std::stoi(bvh.substr(frames_at));
  const size_t first_row = bvh.find('\n', time_at) + 1;
  std::string t_pose = "0 90 " + std::to_string(-back_cm) + " 0 0 0";
  for (int j = 0; j < 5; ++j) t_pose += " 0 0 0";
  return bvh.substr(0, frames_at) + std::to_string(frames + 1) + "\n" + bvh.substr(time_at, first_row - time_at) +
         t_pose + "\n" + bvh.substr(first_row);
}

// The joint names of the database at `path`, separated by ", ".
std::string database_joints(const std::string& path) {
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_file(path, error);
  EXPECT_NE(db, nullptr) << error;
  return db == nullptr ? "" : db->skeleton().joined_names();
}

// The warnings of importing `o` into `out`, whether or not the import fails.
std::vector<std::string> warnings_until_done(ImportOptions o, const std::string& out) {
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  import_error(o, out);
  return warnings;
}

TEST(ForeignRigs, ZUpFilesImportWithUpAxisZLikeTheirYUpTwin) {
  const std::string dir = test::temp_folder("z_up");
  ImportOptions o = biped_options(dir);
  const std::string y_toml = test::biped_skeleton_toml() + "[checks]\nheight_range = [0.5, 2]\n";
  o.skeleton = load_skeleton_config(test::write_text(dir + "/y.toml", y_toml));
  o.inputs = {test::write_text(dir + "/y.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  ImportSummary y_up, z_up;
  const std::vector<std::string> y_warnings = import_warnings(o, dir + "/y.mmdb", &y_up);  // 0% contacts
  EXPECT_EQ(warning_about(y_warnings, "up axis"), "");
  // Read as Y-up, the Z-up twin lies on its back and always faces along Z (so its trajectory
  // directions have no variance): a warning names the up axis before the import fails, and no
  // warning blames unit_scale.
  o.inputs = {test::write_text(dir + "/z.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f, true))};
  std::vector<std::string> warnings = warnings_until_done(o, dir + "/wrong.mmdb");
  const std::string axis = warning_about(warnings, "up axis");
  EXPECT_NE(axis.find("up axis: " + o.inputs[0] + ": the files look Z-up"), std::string::npos) << axis;
  EXPECT_NE(axis.find("set up_axis = \"z\""), std::string::npos) << axis;
  EXPECT_NE(axis.find("--up-axis z"), std::string::npos) << axis;
  for (const std::string& w : warnings) EXPECT_EQ(w.find("check unit_scale"), std::string::npos) << w;
  EXPECT_FALSE(fs::exists(dir + "/wrong.mmdb"));
  // With up_axis = "z" it imports as its Y-up twin, with the same warnings.
  o.skeleton = load_skeleton_config(test::write_text(dir + "/z.toml", "up_axis = \"z\"\n" + y_toml));
  EXPECT_EQ(o.skeleton.up_axis, UpAxis::Z);
  warnings = import_warnings(o, dir + "/z.mmdb", &z_up);
  ASSERT_EQ(warnings.size(), y_warnings.size());
  for (size_t i = 0; i < warnings.size(); ++i) EXPECT_EQ(warnings[i].substr(0, 40), y_warnings[i].substr(0, 40));
  EXPECT_NEAR(z_up.height.standing, y_up.height.standing, 1e-4f);
  EXPECT_NEAR(z_up.height.rest, y_up.height.rest, 1e-4f);
  EXPECT_EQ(z_up.contact_ratio, y_up.contact_ratio);
  std::string error;
  const auto a = Database::load_file(dir + "/y.mmdb", error), b = Database::load_file(dir + "/z.mmdb", error);
  ASSERT_TRUE(a && b) << error;
  ASSERT_EQ(a->frame_count(), b->frame_count());
  for (int f = 0; f < a->frame_count(); f += 7) {
    for (int d = 0; d < a->schema().dims; ++d) EXPECT_NEAR(raw_feature(*a, f, d), raw_feature(*b, f, d), 1e-3f) << f;
  }
  // A Y-up file read as Z-up gets the opposite hint; an axis other than y or z is a config error.
  o.inputs = {dir + "/y.bvh"};
  EXPECT_NE(warning_about(warnings_until_done(o, dir + "/yz.mmdb"), "up axis").find("the files look Y-up"),
            std::string::npos);
  const std::string bad = config_error(dir, "up_axis = \"x\"\n" + test::biped_skeleton_toml());
  EXPECT_NE(bad.find("bad.toml: 'up_axis' = \"x\" is not \"y\" or \"z\""), std::string::npos) << bad;
}

TEST(ForeignRigs, PoseBeforeTheTakeIsDroppedWithAWarningNamingTheFile) {
  const std::string dir = test::temp_folder("t_pose");
  ImportOptions o = biped_options(dir);
  const std::string circle = test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f);
  o.inputs = {test::write_text(dir + "/c.bvh", circle)};
  ImportSummary plain, trimmed;
  EXPECT_EQ(warning_about(import_warnings(o, dir + "/c.mmdb", &plain), o.inputs[0]), "");
  // The root 1.5 m behind the first frame of motion at 30 fps: 45 m/s.
  o.inputs = {test::write_text(dir + "/t.bvh", with_t_pose(circle, 150.0f))};
  const std::string warning = warning_about(import_warnings(o, dir + "/t.mmdb", &trimmed), o.inputs[0]);
  EXPECT_NE(warning.find(o.inputs[0] + ": dropped the first 1 frame, a pose before the take"), std::string::npos)
      << warning;
  EXPECT_NE(warning.find("from frame 0 to 1"), std::string::npos) << warning;
  EXPECT_EQ(trimmed.frames, plain.frames);
  EXPECT_NEAR(trimmed.height.standing, plain.height.standing, 1e-5f);
}

TEST(ForeignRigs, SimulationRootOfLmmSimOutputIsRemovedOnImport) {
  const std::string dir = test::temp_folder("simulation_root");
  ImportOptions o = biped_options(dir);  // no collapse list
  o.mirror = false;
  // What lmm-sim writes: the clip with the importer's simulation bone as its root.
  Skeleton skeleton;
  Clip clip;
  clip_from_bvh(parse_bvh(test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f), "c.bvh"), 0.01f, "c", skeleton, clip);
  SimulationBoneSettings simulation;
  simulation.left = {skeleton.find("UpperLeg_L")};
  simulation.right = {skeleton.find("UpperLeg_R")};
  add_simulation_bone(simulation, skeleton, clip);
  o.inputs = {test::write_text(dir + "/sim.bvh", write_bvh(bvh_from_clip(skeleton, clip, "ZXY", 0.01f)))};
  const ImportSummary s = import_database(o, dir + "/out.mmdb");
  EXPECT_EQ(s.joints, 7);
  EXPECT_EQ(database_joints(dir + "/out.mmdb"), "Simulation, Hips, Spine, UpperLeg_L, Foot_L, UpperLeg_R, Foot_R");
  // Anywhere else the name is reserved.
  o.inputs = {test::write_text(dir + "/spine.bvh",
                               replaced(test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f), "JOINT Spine", "JOINT Simulation"))};
  const std::string error = import_error(o, dir + "/spine.mmdb");
  EXPECT_NE(error.find("spine.bvh: joint 'Simulation' is a reserved name"), std::string::npos) << error;
  EXPECT_NE(error.find("not the root"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir + "/spine.mmdb"));
}

TEST(ForeignRigs, ConfigWithoutContactsWarnsThatNothingIsLabelled) {
  const std::string dir = test::temp_folder("no_contacts");
  ImportOptions o = biped_options(dir);
  const std::string toml = test::biped_skeleton_toml();
  o.skeleton = load_skeleton_config(test::write_text(dir + "/skel.toml", toml.substr(0, toml.find("[contacts]"))));
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  ImportSummary s;
  const std::string warning = warning_about(import_warnings(o, dir + "/out.mmdb", &s), "no contact labels");
  EXPECT_TRUE(s.contact_joints.empty());
  EXPECT_NE(warning.find("skel.toml has no [contacts] joints"), std::string::npos) << warning;
  EXPECT_NE(warning.find("--foot-lock"), std::string::npos) << warning;
}

TEST(ForeignRigs, StandingOnlyDataIsNotWarnedForFeetInContact) {
  const std::string dir = test::temp_folder("standing");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/sway.bvh", sway_bvh(150))};
  ImportSummary s;
  std::vector<std::string> warnings = import_warnings(o, dir + "/out.mmdb", &s);
  EXPECT_GT(s.contact_ratio, kMaxContactRatio);
  EXPECT_LT(s.moving_ratio, kStandingMovingRatio);
  EXPECT_EQ(warning_about(warnings, "contact labels"), "");
  // Moving data with feet labelled in contact nearly always is still warned about.
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  o.skeleton = biped_config(dir, "velocity_threshold = 0.3\nheight_threshold = 0.08",
                            "velocity_threshold = 100\nheight_threshold = 10");
  warnings = import_warnings(o, dir + "/out.mmdb", &s);
  EXPECT_GT(s.moving_ratio, 0.9);
  EXPECT_NE(warning_about(warnings, "contact labels").find("100% of frames"), std::string::npos);
}

TEST(ForeignRigs, TooShortClipIsABadFileNamingTheMinimum) {
  const std::string dir = test::temp_folder("short");
  const std::string out = dir + "/out.mmdb";
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f)),
              test::write_text(dir + "/one.bvh", test::circle_walk_bvh(150.0f, 300.0f, 1, 30.0f))};
  std::string error = import_error(o, out);
  EXPECT_NE(error.find("one.bvh: the file has 1 frame at 30 Hz: a clip needs at least 2 frames"), std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(out));
  import_skipping_one(o, out, "one.bvh");
  // Alone, too: named, not as a zero-variance feature group.
  o.inputs = {dir + "/one.bvh"};
  error = import_error(o, dir + "/alone.mmdb");
  EXPECT_NE(error.find("one.bvh: the file has 1 frame"), std::string::npos) << error;
  // Two frames 1 ms apart resample to one frame at 60 Hz.
  std::string fast = test::circle_walk_bvh(150.0f, 300.0f, 2, 1000.0f);
  o.inputs = {dir + "/c.bvh", test::write_text(dir + "/fast.bvh", fast)};
  error = import_error(o, out);
  EXPECT_NE(error.find("fast.bvh: 2 frames at 1000 Hz resample to 1 frame at 60 Hz: a clip needs at least 2 frames"),
            std::string::npos) << error;
}

TEST(ForeignRigs, MirrorErrorNamesTheUnpairedParents) {
  const std::string dir = test::temp_folder("mirror_parents");
  ImportOptions o = biped_options(dir);
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 60, 30.0f))};
  const std::string patterns = R"([["_L", "_R"]])";
  // The legs paired, the feet not: Foot_L has no partner under UpperLeg_R.
  o.skeleton = biped_config(dir, patterns, R"([["UpperLeg_L", "UpperLeg_R"]])");
  std::string error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("skel.toml [mirror] patterns: 'Foot_L' pairs with no joint, but its parent 'UpperLeg_L' "
                       "pairs with 'UpperLeg_R'"), std::string::npos) << error;
  // The feet paired, the legs not: the error names both legs.
  o.skeleton = biped_config(dir, patterns, R"([["Foot_L", "Foot_R"]])");
  error = import_error(o, dir + "/out.mmdb");
  EXPECT_NE(error.find("'Foot_L' pairs with 'Foot_R', but their parents 'UpperLeg_L' and 'UpperLeg_R' are not paired"),
            std::string::npos) << error;
  EXPECT_NE(error.find("pairs 'UpperLeg_L' with 'UpperLeg_R'"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir + "/out.mmdb"));
}

}  // namespace
