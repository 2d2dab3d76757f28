// Issue 17: phase features (Kleanthous & Martini 2023, Table 10's phase embedding): the `phase`
// schema kind, the shipped lipschitz41 schema, and re-featuring a database with a per-frame
// phase array (refeature_database).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "lmm/asset/database.hpp"
#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/import/phase_features.hpp"
#include "support/shipped_schema.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::pipeline;
namespace fs = std::filesystem;

namespace {

constexpr int kChannels = 3;
constexpr float kPhaseWeight = 2.0f;

// The biped test schema plus a phase group of kChannels channels and weight kPhaseWeight, written into `dir`.
FeatureSchemaConfig phase_schema(const std::string& dir) {
  return load_feature_config(test::write_text(
      dir + "/phase_features.toml", test::biped_features_toml() + "[[group]]\nname = \"gait_phase\"\nkind = \"phase\"\n" +
                                        "channels = " + std::to_string(kChannels) +
                                        "\nweight = " + std::to_string(kPhaseWeight) + "\n"));
}

// The message of the InputError `fn` throws ("" when it throws none).
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A circle walk and a straight walk imported (mirrored) with the biped schema into `dir`/db.mmdb.
std::shared_ptr<const Database> imported_walks(const std::string& dir) {
  ImportOptions o;
  o.skeleton = load_skeleton_config(test::write_text(dir + "/biped.toml", test::biped_skeleton_toml()));
  o.features = load_feature_config(test::write_text(dir + "/features.toml", test::biped_features_toml()));
  o.threads = 2;
  o.inputs = {test::write_text(dir + "/c.bvh", test::circle_walk_bvh(150.0f, 300.0f, 90, 30.0f)),
              test::write_text(dir + "/w.bvh", test::straight_walk_bvh(100.0f, 90, 30.0f))};
  import_database(o, dir + "/db.mmdb");
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(dir + "/db.mmdb", error);
  EXPECT_NE(db, nullptr) << error;
  return db;
}

// A synthetic phase embedding for every frame of `db`: per channel amplitude x (sin, cos) of a
// phase advancing at its own rate, offset per clip, so mirrored clips get rows of their own.
PhaseArray synthetic_phases(const Database& db, int channels = kChannels) {
  PhaseArray phases;
  phases.frames = db.frame_count();
  phases.channels = channels;
  for (int f = 0; f < db.frame_count(); ++f) {
    const int clip = clip_index(db, f);
    for (int c = 0; c < channels; ++c) {
      const float amplitude = 0.5f + 0.25f * float(c) + 0.1f * float(clip);
      const float phase = 0.07f * float((c + 1) * f) + 0.9f * float(clip);
      phases.values.push_back(amplitude * std::sin(phase));
      phases.values.push_back(amplitude * std::cos(phase));
    }
  }
  return phases;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Names of the files in `dir`.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<const Database> load(const std::string& path) {
  std::string error;
  std::shared_ptr<const Database> db = Database::load_file(path, error);
  EXPECT_NE(db, nullptr) << error;
  return db;
}

TEST(PhaseSchema, Lipschitz41IsLipschitz31PlusTheTenDimPhaseEmbedding) {
  const FeatureSchema s31 = test::shipped_schema("lipschitz31");
  const FeatureSchema s41 = test::shipped_schema("lipschitz41");
  EXPECT_EQ(s41.dims, 41);
  ASSERT_EQ(s41.groups.size(), s31.groups.size() + 1);
  for (size_t g = 0; g < s31.groups.size(); ++g) {
    EXPECT_EQ(s41.groups[g].name, s31.groups[g].name);
    EXPECT_EQ(s41.groups[g].kind, s31.groups[g].kind);
    EXPECT_EQ(s41.groups[g].items, s31.groups[g].items);
    EXPECT_EQ(s41.groups[g].first_dim, s31.groups[g].first_dim);
  }
  const FeatureGroup& phase = s41.groups.back();
  EXPECT_EQ(phase.kind, FeatureKind::Phase);
  EXPECT_EQ(phase.first_dim, 31);
  EXPECT_EQ(feature_group_dims(phase), 10);
  EXPECT_EQ(s41.phase_channels, 5);
  EXPECT_EQ(s41.trajectory_offsets, s31.trajectory_offsets);
}

TEST(PhaseSchema, RefusesAPhaseGroupWithoutChannelsOrWithChannelsOutOfRange) {
  const std::string dir = test::temp_folder("schema");
  const std::string head = "[[group]]\nname = \"p\"\nkind = \"phase\"\n";
  const auto error = [&](const std::string& body) {
    return error_of([&] { load_feature_config(test::write_text(dir + "/f.toml", head + body)); });
  };
  EXPECT_NE(error("").find("('p'): kind 'phase' needs 'channels' (an integer in [1, 64])"), std::string::npos)
      << error("");
  for (const char* bad : {"0", "65", "-3"}) {
    const std::string message = error(std::string("channels = ") + bad + "\n");
    EXPECT_NE(message.find(std::string("'channels' = ") + bad + " is outside [1, 64]"), std::string::npos) << message;
  }
  for (const char* bad : {"2.5", "\"5\""}) {
    const std::string message = error(std::string("channels = ") + bad + "\n");
    EXPECT_NE(message.find("'channels' must be an integer in [1, 64]"), std::string::npos) << message;
  }
  EXPECT_NE(error("channels = 5\nbones = [\"hips\"]\n").find("no 'bones' or 'seconds'"), std::string::npos);
  const std::string on_bones = error_of([&] {
    load_feature_config(test::write_text(
        dir + "/g.toml", "[[group]]\nname = \"b\"\nkind = \"bone_position\"\nbones = [\"hips\"]\nchannels = 5\n"));
  });
  EXPECT_NE(on_bones.find("'channels' belongs to kind 'phase' only"), std::string::npos) << on_bones;
  EXPECT_EQ(error("channels = 64\n"), "");
}

TEST(PhaseImport, RefusesAPhaseSchemaNamingTheGroupAndHowToGetPhases) {
  const std::string dir = test::temp_folder("import");
  ImportOptions o;
  o.skeleton = load_skeleton_config(test::write_text(dir + "/biped.toml", test::biped_skeleton_toml()));
  o.features = phase_schema(dir);
  o.inputs = {test::write_text(dir + "/w.bvh", test::straight_walk_bvh(100.0f, 90, 30.0f))};
  const std::string message = error_of([&] { import_database(o, dir + "/out.mmdb"); });
  EXPECT_NE(message.find("feature group 'gait_phase' (kind phase)"), std::string::npos) << message;
  EXPECT_NE(message.find("lmm-train phase"), std::string::npos) << message;
  EXPECT_NE(message.find("lmm-export --in DIR --phase"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir + "/out.mmdb"));
}

// Re-featuring with the import's own schema and no phases rebuilds the very same features.
TEST(Refeature, WithTheImportSchemaReproducesTheImportedFeatures) {
  const std::string dir = test::temp_folder("same");
  const std::shared_ptr<const Database> db = imported_walks(dir);
  ASSERT_NE(db, nullptr);
  const FeatureSchemaConfig schema = load_feature_config(dir + "/features.toml");
  const RefeatureSummary s = refeature_database(*db, schema, PhaseArray{}, dir + "/again.mmdb");
  EXPECT_EQ(s.phase_channels, 0);
  const std::shared_ptr<const Database> again = load(dir + "/again.mmdb");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->phase_channels(), 0);
  const size_t values = size_t(db->frame_count()) * size_t(db->schema().dims);
  EXPECT_TRUE(std::equal(db->features(0), db->features(0) + values, again->features(0)));
  EXPECT_TRUE(std::equal(db->feature_scale(), db->feature_scale() + db->schema().dims, again->feature_scale()));
}

// The phase group's dims are the stored array's rows (mirrored clips' frames included),
// normalised as every schema group is (mean offset, scale = mean std / weight); the other groups
// keep their imported values; re-featuring the result without phases keeps its phases.
TEST(Refeature, FillsThePhaseGroupFromThePhaseArrayAndStoresIt) {
  const std::string dir = test::temp_folder("phases");
  const std::shared_ptr<const Database> db = imported_walks(dir);
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->ranges()[1].mirrored);
  const PhaseArray phases = synthetic_phases(*db);
  const RefeatureSummary s = refeature_database(*db, phase_schema(dir), phases, dir + "/phase.mmdb");
  EXPECT_EQ(s.phase_channels, kChannels);
  EXPECT_EQ(s.feature_dims, db->schema().dims + 2 * kChannels);
  const std::shared_ptr<const Database> out = load(dir + "/phase.mmdb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->frame_count(), db->frame_count());
  ASSERT_EQ(out->phase_channels(), kChannels);
  const FeatureGroup& group = out->schema().groups.back();
  ASSERT_EQ(group.kind, FeatureKind::Phase);
  ASSERT_EQ(group.first_dim, db->schema().dims);
  const int width = 2 * kChannels, n = out->frame_count();

  // Expected normalisation from the array itself.
  std::vector<double> mean(size_t(width), 0.0), variance(size_t(width), 0.0);
  for (int f = 0; f < n; ++f) {
    for (int c = 0; c < width; ++c) mean[size_t(c)] += phases.values[size_t(f * width + c)] / double(n);
  }
  double mean_std = 0.0;
  for (int c = 0; c < width; ++c) {
    for (int f = 0; f < n; ++f) variance[size_t(c)] += std::pow(phases.values[size_t(f * width + c)] - mean[size_t(c)], 2) / n;
    mean_std += std::sqrt(variance[size_t(c)]) / width;
  }
  for (int c = 0; c < width; ++c) {
    const int d = group.first_dim + c;
    EXPECT_NEAR(out->feature_offset()[d], mean[size_t(c)], 1e-5);
    EXPECT_NEAR(out->feature_scale()[d], mean_std / kPhaseWeight, 1e-5);
  }
  for (int f = 0; f < n; ++f) {
    for (int c = 0; c < width; ++c) {
      const int d = group.first_dim + c;
      const float stored = phases.values[size_t(f * width + c)];
      ASSERT_EQ(out->phase(f)[c], stored) << "frame " << f;
      ASSERT_NEAR((stored - out->feature_offset()[d]) / out->feature_scale()[d], out->features(f)[d], 1e-4f)
          << "frame " << f << " column " << c;
    }
    for (int d = 0; d < db->schema().dims; ++d) ASSERT_EQ(out->features(f)[d], db->features(f)[d]) << f << " " << d;
  }

  refeature_database(*out, phase_schema(dir), PhaseArray{}, dir + "/kept.mmdb");
  const std::shared_ptr<const Database> kept = load(dir + "/kept.mmdb");
  ASSERT_NE(kept, nullptr);
  ASSERT_EQ(kept->phase_channels(), kChannels);
  EXPECT_TRUE(std::equal(out->phase(0), out->phase(0) + size_t(n * width), kept->phase(0)));
  EXPECT_TRUE(std::equal(out->features(0), out->features(0) + size_t(n) * size_t(out->schema().dims),
                         kept->features(0)));
}

// Every refused re-featuring names what is wrong and writes nothing: the target (here the
// database's own file) keeps its bytes and no temporary file is left.
TEST(Refeature, ErrorsNameTheFaultAndWriteNothing) {
  const std::string dir = test::temp_folder("errors");
  const std::shared_ptr<const Database> db = imported_walks(dir);
  ASSERT_NE(db, nullptr);
  const FeatureSchemaConfig schema = phase_schema(dir);
  const std::string target = dir + "/db.mmdb", before = file_bytes(target);
  const std::vector<std::string> files = files_in(dir);
  const int n = db->frame_count();
  const auto refeature = [&](const PhaseArray& phases) {
    return error_of([&] { refeature_database(*db, schema, phases, target); });
  };

  const std::string missing = refeature(PhaseArray{});
  EXPECT_NE(missing.find("feature group 'gait_phase' (kind phase) needs each frame's phases"), std::string::npos)
      << missing;
  EXPECT_NE(missing.find("lmm-train phase"), std::string::npos) << missing;

  PhaseArray short_array = synthetic_phases(*db);
  short_array.frames = n - 1;
  short_array.values.resize(size_t(n - 1) * 2 * kChannels);
  const std::string shape = refeature(short_array);
  EXPECT_NE(shape.find("shape [" + std::to_string(n - 1) + "][6]"), std::string::npos) << shape;
  EXPECT_NE(shape.find("expected [" + std::to_string(n) + "][6]"), std::string::npos) << shape;

  const std::string channels = refeature(synthetic_phases(*db, 2));
  EXPECT_NE(channels.find("shape [" + std::to_string(n) + "][4]"), std::string::npos) << channels;
  EXPECT_NE(channels.find("expected [" + std::to_string(n) + "][6]"), std::string::npos) << channels;

  PhaseArray inconsistent = synthetic_phases(*db);
  inconsistent.values.pop_back();
  EXPECT_NE(refeature(inconsistent).find("does not fit"), std::string::npos);

  const int bad_frame = n - 3;
  PhaseArray nan = synthetic_phases(*db);
  nan.values[size_t(bad_frame * 2 * kChannels + 4)] = std::nanf("");
  const std::string non_finite = refeature(nan);
  EXPECT_NE(non_finite.find("frame " + std::to_string(bad_frame) + " (clip '"), std::string::npos) << non_finite;
  EXPECT_NE(non_finite.find("column 4"), std::string::npos) << non_finite;

  EXPECT_EQ(file_bytes(target), before);
  EXPECT_EQ(files_in(dir), files);
}

}  // namespace
