// Golden tests: LibTorch models (seeded random weights of several presets, and tiny / ffn-tiny
// weights trained here, tiny also with gameplay tags) -> export -> the dependency-free runtime, on
// 1,000 random and 1,000 database inputs per network. f32: every output within 1e-4 of LibTorch on every kernel path;
// f16: decoded joint positions within 1 mm. Data from $LMM_DATA (fails in CI without it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "lmm/import/config.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/training/export.hpp"
#include "support/c_character_poses.hpp"
#include "lmm/training/tag_targets.hpp"
#include "lmm/training/trainer.hpp"
#include "support/bandai_data.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::training;
namespace fs = std::filesystem;

namespace {

constexpr int kInputs = 1000;  // per kind (random / database)

TrainingConfig preset(const std::string& name) { return load_training_config(name, pipeline::default_config_dir()); }

// A subset database (normal-extra) imported once per test binary run.
struct Subset {
  std::string path;
  std::shared_ptr<const Database> db;
};

const Subset* subset() {
  static Subset* s = [] {
    const std::string data = test::bandai_folder("normal-extra");
    if (data.empty()) return static_cast<Subset*>(nullptr);
    auto* out = new Subset;
    out->path = test::temp_folder("export-subset") + "/subset.mmdb";
    test::import_bandai({data + "/normal-extra"}, out->path);
    std::string error;
    out->db = Database::load_file(out->path, error);
    if (out->db == nullptr) return static_cast<Subset*>(nullptr);
    return out;
  }();
  return s;
}

#define REQUIRE_SUBSET()                                                                       \
  REQUIRE_BANDAI(bandai_root, "normal-extra");                                                 \
  const Subset* data = subset();                                                               \
  ASSERT_NE(data, nullptr) << "could not import normal-extra";

// Inputs of both kinds stacked: kInputs random rows (N(0, 1)), then kInputs database rows.
struct Inputs {
  torch::Tensor states;    // [2000, latent + features + the preset's tag part]
  torch::Tensor queries;   // [2000, features + constraint code]
  torch::Tensor encoder;   // [2000, pose + 3J] raw encoder inputs
};

Inputs make_inputs(TrainedModels m, const PoseData& d, const TrainingConfig& c, const Database& db) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(99);
  const int64_t n = d.pose.size(0), features = d.features.size(1), tags = int64_t(c.tags.size());
  const torch::Tensor frames = torch::randint(n, {kInputs}, torch::kInt64);
  torch::Tensor mean, std;
  const torch::Tensor x = encoder_inputs(d, mean, std).index_select(0, frames);
  const torch::Tensor latent = m.autoencoder->encoder->forward(x);
  const torch::Tensor db_features = d.features.index_select(0, frames);
  const int64_t state = latent.size(1) + features + tag_state_width(c);
  torch::Tensor db_state = torch::cat({latent, db_features}, 1), db_query = db_features;
  const int64_t code = constraint_code_width(c);
  torch::Tensor random_code = torch::zeros({kInputs, code});
  if (tags > 0) {
    const std::vector<TagMask> masks = frame_tag_masks(db, c.tags);
    db_state = torch::cat({db_state, tag_state(db, masks, c.tags, c.actions).index_select(0, frames)}, 1);
    const torch::Tensor constraints = ConstrainedNearest(d.features, masks).random_constraints(kInputs, tags, {}, 0.8, 0);
    db_query = torch::cat({db_query, constraint_codes(constraints, tags, int64_t(c.actions.size()))}, 1);
    random_code = (torch::rand({kInputs, code}) < 0.3).to(torch::kFloat32);
  }
  const torch::Tensor raw = torch::cat({d.pose, d.model_positions.reshape({n, -1})}, 1).index_select(0, frames);
  return {torch::cat({torch::randn({kInputs, state}), db_state}),
          torch::cat({torch::cat({torch::randn({kInputs, features}), random_code}, 1), db_query}),
          torch::cat({raw + torch::randn_like(raw) * 0.01, raw})};
}

// LibTorch's decoded pose: denormalised, sigmoid on the contact logits.
torch::Tensor torch_decode(TrainedModels m, const PoseData& d, const torch::Tensor& states) {
  torch::Tensor pose = m.autoencoder->decode_state(states) * d.pose_std + d.pose_mean;
  const int64_t c = d.layout.contact();
  pose.narrow(1, c, d.layout.contacts).sigmoid_();
  return pose;
}

// Runs `fn(in_row, out_row)` over every row (or the batched form when `batched`).
torch::Tensor runtime_rows(const torch::Tensor& in, int64_t out_cols,
                           const std::function<void(const float*, int, float*)>& batch, bool batched) {
  const torch::Tensor x = in.contiguous();
  torch::Tensor y = torch::zeros({x.size(0), out_cols});
  if (batched) {
    batch(x.data_ptr<float>(), int(x.size(0)), y.data_ptr<float>());
  } else {
    for (int64_t r = 0; r < x.size(0); ++r) batch(x[r].data_ptr<float>(), 1, y[r].data_ptr<float>());
  }
  return y;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Loads `bytes` and checks every network against LibTorch on every kernel path, one row at a
// time and batched. f32: within 1e-4; f16: decoded joint positions within 1 mm.
void expect_runtime_matches(const std::vector<uint8_t>& bytes, TrainedModels m, const PoseData& d,
                            const TrainingConfig& c, const Database& db, bool half, const std::string& what) {
  const AlignedBuffer buffer = [&] {
    AlignedBuffer b(bytes.size());
    std::copy(bytes.begin(), bytes.end(), b.data());
    return b;
  }();
  std::string error;
  const std::shared_ptr<const Model> model = Model::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(model, nullptr) << what << ": " << error;
  ASSERT_EQ(model->half_precision(), half);
  torch::NoGradGuard no_grad;
  const Inputs in = make_inputs(m, d, c, db);
  const torch::Tensor pose = torch_decode(m, d, in.states);
  const torch::Tensor next = in.states + m.stepper->forward(in.states);
  const torch::Tensor projected = m.projector->forward(in.queries);
  torch::Tensor encoder_mean, encoder_std;
  encoder_inputs(d, encoder_mean, encoder_std);
  const torch::Tensor latent = m.autoencoder->encoder->forward((in.encoder - encoder_mean) / encoder_std);
  for (KernelPath path : available_kernel_paths()) {
    ModelEvaluator eval;
    ASSERT_TRUE(eval.init(model, 128, path, error)) << error;
    for (bool batched : {false, true}) {
      const std::string where = what + " " + kernel_path_name(path) + (batched ? " batched" : " single");
      const torch::Tensor rt_pose = runtime_rows(in.states, pose.size(1), [&](const float* x, int n, float* y) { eval.decode_batch(x, n, y); }, batched);
      if (half) {
        const torch::Tensor error = (pose_to_model_positions(d, rt_pose) - pose_to_model_positions(d, pose)).abs() * 1000.0;
        const double random_mm = error.narrow(0, 0, kInputs).max().item<double>();
        const double database_mm = error.narrow(0, kInputs, kInputs).max().item<double>();
        std::printf("%s: f16 joint position error max %.4f mm (database inputs), %.4f mm (random inputs)\n",
                    where.c_str(), database_mm, random_mm);
        EXPECT_LE(database_mm, 1.0) << where << ": decoded joint positions (mm), database inputs";
        EXPECT_LE(random_mm, 1.0) << where << ": decoded joint positions (mm), random inputs";
        continue;
      }
      const torch::Tensor rt_next = runtime_rows(in.states, next.size(1), [&](const float* x, int n, float* y) { eval.step_batch(x, n, y); }, batched);
      const torch::Tensor rt_projected = runtime_rows(in.queries, projected.size(1), [&](const float* x, int n, float* y) { eval.project_batch(x, n, y); }, batched);
      std::printf("%s: f32 max |runtime - LibTorch| decoder %.2e, stepper %.2e, projector %.2e\n", where.c_str(),
                  max_diff(rt_pose, pose), max_diff(rt_next, next), max_diff(rt_projected, projected));
      EXPECT_LE(max_diff(rt_pose, pose), 1e-4) << where << ": decoder";
      EXPECT_LE(max_diff(rt_next, next), 1e-4) << where << ": stepper";
      EXPECT_LE(max_diff(rt_projected, projected), 1e-4) << where << ": projector";
    }
    if (half || !model->has_encoder()) continue;
    const torch::Tensor rt_latent = runtime_rows(in.encoder, latent.size(1), [&](const float* x, int, float* y) { eval.encode(x, y); }, false);
    EXPECT_LE(max_diff(rt_latent, latent), 1e-4) << what << ": encoder";
  }
}

// Random (seeded, LibTorch-initialised) weights of `name`, exported in memory; the stepper reads
// its states standardised by a random mean and scale (0.1 to 2: random inputs over a smaller
// scale, as real latents have, would leave the f32 tolerance to large outputs' rounding).
void check_random_preset(const std::string& name, const Subset& data) {
  const TrainingConfig config = preset(name);
  const PoseData d = make_pose_data(*data.db);
  const TrainedModels m = initial_models(config, d, 7);
  {
    torch::NoGradGuard no_grad;
    m.stepper->input_mean.copy_(torch::randn_like(m.stepper->input_mean) * 0.1);
    m.stepper->input_std.copy_(torch::exp(std::log(0.1) + torch::rand_like(m.stepper->input_std) * std::log(20.0)));
  }
  const ModelValues values = model_values(m, config, d, true);
  expect_runtime_matches(bundle_bytes(values, *data.db, false), m, d, config, *data.db, false, name + " random f32");
  expect_runtime_matches(bundle_bytes(values, *data.db, true), m, d, config, *data.db, true, name + " random f16");
}

TEST(ExportGolden, RandomWeightsOfEveryPresetShapeMatchLibTorch) {
  REQUIRE_SUBSET();
  for (const char* name : {"tiny", "ffn-tiny", "paper", "ffn-paper"}) check_random_preset(name, *data);
}

// Trains `name` (autoencoder, stepper, projector) on the subset, exports the folder with
// lmm-export's code path (f32 and f16 files) and compares with the trained modules.
// `folder` (when not null) receives the training folder (its model.lmmw: the f32 bundle).
void check_trained_preset(const TrainingConfig& config, const Subset& data, std::string* folder = nullptr) {
  const std::string name = config.name;
  TrainOptions o;
  o.out_dir = test::temp_folder("export-" + name);
  train_autoencoder(config, *data.db, o);
  train_stepper(config, *data.db, o);
  train_projector(config, *data.db, o);
  write_run_manifest(o.out_dir, config, data.path);
  const PoseData d = make_pose_data(*data.db);
  const TrainedModels m = load_trained_models(config, d, o.out_dir);
  for (const bool half : {false, true}) {
    ExportOptions e;
    e.in_dir = o.out_dir;
    e.out_path = o.out_dir + (half ? "/model-f16.lmmw" : "/model.lmmw");
    e.half = half;
    e.with_encoder = true;
    const ExportSummary s = export_bundle(e);
    EXPECT_EQ(s.preset, name);
    AlignedBuffer file;
    std::string error;
    ASSERT_TRUE(read_file(e.out_path, file, error)) << error;
    EXPECT_EQ(file.size(), s.file_bytes);
    expect_runtime_matches(std::vector<uint8_t>(file.data(), file.data() + file.size()), m, d, config, *data.db, half,
                           name + (half ? " trained f16" : " trained f32"));
  }
  if (folder != nullptr) *folder = o.out_dir;
}

void check_trained_preset(const std::string& name, const Subset& data) { check_trained_preset(preset(name), data); }

TEST(ExportGolden, TrainedTinyMatchesLibTorch) {
  REQUIRE_SUBSET();
  check_trained_preset("tiny", *data);
}

TEST(ExportGolden, TrainedTaggedTinyMatchesLibTorchAndCarriesItsTags) {
  REQUIRE_SUBSET();
  const std::string path = test::temp_folder("tiny-tags") + "/tiny-tags.toml";
  std::ofstream(path) << "extends = \"tiny\"\nname = \"tiny-tags\"\n[tags]\nnames = [\"standing\", \"walk\", \"run\"]\n"
                         "actions = [\"walk\"]\n";
  const TrainingConfig config = load_training_config(path, pipeline::default_config_dir());
  ASSERT_EQ(config.tags.size(), 3u);
  std::string folder;
  check_trained_preset(config, *data, &folder);
  std::string error;
  const std::shared_ptr<const Model> model = Model::load_file(folder + "/model.lmmw", error);
  ASSERT_NE(model, nullptr) << error;
  EXPECT_EQ(model->tags().names(), config.tags);
  EXPECT_EQ(model->action_tags(), TagMask(2));
  EXPECT_EQ(model->kept_out_tags(), TagMask(2)) << "a free projection leaves the action's states out";
  EXPECT_EQ(model->state_size(), int(config.latent) + model->feature_dims() + 4);
  ASSERT_EQ(model->event_names().size(), 2u + 6u);
  EXPECT_EQ(model->event_names()[0], "foot_plant_l");  // configs/skeletons/bandai.toml's, found at the contacts' starts
  EXPECT_EQ(model->event_names()[2 + 2 * 1 + 1], "leave_walk");
  // Its character locks its feet through the C API as the C++ one does (lmm_character_set_foot_lock).
  const test::LockRun run = test::learned_foot_lock_against_cpp(folder + "/model.lmmw");
  EXPECT_GT(run.differing, 50);  // the legs bend
  EXPECT_GT(run.held_contacts, 50);
}

TEST(ExportGolden, TrainedFfnTinyMatchesLibTorch) {
  REQUIRE_SUBSET();
  check_trained_preset("ffn-tiny", *data);
}

TEST(Export, MissingManifestCheckpointOrDatabaseIsAClearErrorAndWritesNothing) {
  REQUIRE_SUBSET();
  const std::string dir = test::temp_folder("export-errors");
  ExportOptions e;
  e.in_dir = dir;
  e.out_path = dir + "/model.lmmw";
  auto expect_error = [&](const std::string& fragment) {
    try {
      export_bundle(e);
      ADD_FAILURE() << "expected an error containing '" << fragment << "'";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
    EXPECT_FALSE(fs::exists(e.out_path));
  };
  expect_error("run.toml");
  write_run_manifest(dir, preset("tiny"), data->path);
  expect_error("autoencoder.pt");
  e.database = dir + "/missing.mmdb";
  expect_error("missing.mmdb");
}

}  // namespace
