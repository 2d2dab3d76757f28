// Short real training runs of the tiny preset on a small subset of the Bandai data
// (normal-extra, 7 clips). Data from $LMM_DATA: fails in CI without it, skips elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/models.hpp"
#include "lmm/training/pose_data.hpp"
#include "lmm/training/trainer.hpp"
#include "support/bandai_data.hpp"
#include "support/synthetic_bvh.hpp"

using namespace lmm;
using namespace lmm::training;
namespace fs = std::filesystem;

namespace {

#define REQUIRE_SUBSET(db)                                                  \
  REQUIRE_BANDAI(db##_data, "normal-extra");                                \
  const std::string db##_path = test::temp_folder("subset") + "/subset.mmdb"; \
  test::import_bandai({db##_data + "/normal-extra"}, db##_path);            \
  std::shared_ptr<const Database> db##_asset;                               \
  {                                                                         \
    std::string error;                                                      \
    db##_asset = Database::load_file(db##_path, error);                     \
    ASSERT_NE(db##_asset, nullptr) << error;                                \
  }                                                                         \
  const Database& db = *db##_asset;

TrainingConfig tiny() { return load_training_config("tiny", pipeline::default_config_dir()); }

// The report's expert use over the database: the least used expert at most uniform use, the most
// at least uniform and at most every row (experts / top_k times uniform).
void expect_expert_use(const TrainReport& r, const NetworkConfig& net) {
  ASSERT_TRUE(r.metrics.count("expert_use_min") && r.metrics.count("expert_use_max"));
  const double least = r.metrics.at("expert_use_min"), most = r.metrics.at("expert_use_max");
  EXPECT_GE(least, 0.0);
  EXPECT_LE(least, 1.0 + 1e-6);
  EXPECT_GE(most, 1.0 - 1e-6);
  EXPECT_LE(most, double(net.experts) / double(net.top_k) + 1e-6);
}

TEST(TrainingRuns, TinyAutoencoderReducesEveryLossTerm) {
  REQUIRE_SUBSET(db);
  TrainOptions o;
  o.out_dir = test::temp_folder("ae");
  const TrainReport r = train_autoencoder(tiny(), db, o);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.steps, 200);
  ASSERT_FALSE(r.last_losses.empty());
  for (const auto& [term, last] : r.last_losses) {
    if (term == "load_balance") {
      // Starts near 0 (routing is near uniform at initialisation); it must stay small.
      EXPECT_LT(last, 0.2) << term;
      continue;
    }
    EXPECT_LT(last, r.first_losses.at(term)) << term;
  }
  EXPECT_GT(r.metrics.at("mean_joint_error_cm"), 0.0);
  EXPECT_LT(r.metrics.at("mean_joint_error_cm"), 10.0);
  EXPECT_GE(r.metrics.at("p95_joint_error_cm"), r.metrics.at("mean_joint_error_cm"));
  expect_expert_use(r, tiny().decoder);
  EXPECT_TRUE(fs::exists(checkpoint_path(o.out_dir, "autoencoder")));
}

TEST(TrainingRuns, ResumedRunEqualsUninterruptedRun) {
  REQUIRE_SUBSET(db);
  TrainOptions whole, part;
  whole.out_dir = test::temp_folder("whole");
  part.out_dir = test::temp_folder("part");
  const TrainReport a = train_autoencoder(tiny(), db, whole);
  part.stop_after = 70;  // mid-epoch
  const TrainReport stopped = train_autoencoder(tiny(), db, part);
  EXPECT_EQ(stopped.steps, 70);
  EXPECT_FALSE(stopped.finished);
  part.stop_after = -1;
  part.resume = true;
  const TrainReport b = train_autoencoder(tiny(), db, part);
  EXPECT_EQ(b.steps, a.steps);
  for (const auto& [term, value] : a.last_losses) EXPECT_NEAR(b.last_losses.at(term), value, 1e-4 * (1.0 + std::fabs(value))) << term;
  EXPECT_NEAR(b.metrics.at("mean_joint_error_cm"), a.metrics.at("mean_joint_error_cm"), 1e-3);
}

TEST(TrainingRuns, LinearScheduleAndAnnealDecayTheRateToTheirLastStepsShare) {
  REQUIRE_SUBSET(db);
  TrainingConfig c = with_schedule(tiny(), 40, tiny().batch, 0.004);
  c.schedule = "linear";
  TrainOptions o;
  o.out_dir = test::temp_folder("linear");
  const TrainReport r = train_autoencoder(c, db, o);
  EXPECT_EQ(r.steps, 40);
  EXPECT_NEAR(r.metrics.at("learning_rate_last"), 0.004 / 40.0, 1e-12);  // step 40 runs at progress 39/40
  c.schedule = "plateau";  // 40 steps: no plateau is long enough to decay the rate
  o.out_dir = test::temp_folder("plateau");
  const TrainReport whole = train_autoencoder(c, db, o);
  EXPECT_DOUBLE_EQ(whole.metrics.at("learning_rate_last"), 0.004);
  c.anneal = 0.5;  // steps 21-40 at 0.004 x (40 - step + 1) / 20
  o.out_dir = test::temp_folder("anneal");
  const TrainReport annealed = train_autoencoder(c, db, o);
  EXPECT_NEAR(annealed.metrics.at("learning_rate_last"), 0.004 / 20.0, 1e-12);
  EXPECT_NE(annealed.metrics.at("mean_joint_error_cm"), whole.metrics.at("mean_joint_error_cm"));
  // Stopped within the anneal and resumed: the checkpoint keeps the rate before the anneal.
  o.out_dir = test::temp_folder("anneal-resumed");
  o.stop_after = 30;
  train_autoencoder(c, db, o);
  o.stop_after = -1;
  o.resume = true;
  const TrainReport resumed = train_autoencoder(c, db, o);
  EXPECT_NEAR(resumed.metrics.at("learning_rate_last"), 0.004 / 20.0, 1e-12);
  EXPECT_NEAR(resumed.metrics.at("mean_joint_error_cm"), annealed.metrics.at("mean_joint_error_cm"), 1e-3);
}

TEST(TrainingRuns, NonFiniteLossStopsAndKeepsTheLastCheckpoint) {
  REQUIRE_SUBSET(db);
  TrainOptions o;
  o.out_dir = test::temp_folder("nan");
  TrainingConfig c = tiny();
  c.steps = 20;
  train_autoencoder(c, db, o);  // a good checkpoint at step 20
  const auto good_size = fs::file_size(checkpoint_path(o.out_dir, "autoencoder"));
  c.steps = 400;
  c.learning_rate = 1e30;  // a fresh run that diverges before its first periodic checkpoint
  try {
    train_autoencoder(c, db, o);
    FAIL() << "expected the run to stop";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("autoencoder.pt"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(checkpoint_path(o.out_dir, "autoencoder")), good_size);
}

// XORs `mask` into the byte at `offset` of `path`.
void flip_byte(const std::string& path, std::streamoff offset, uint8_t mask) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(offset);
  const uint8_t byte = uint8_t(file.get()) ^ mask;
  file.seekp(offset);
  file.put(char(byte));
  ASSERT_TRUE(file.good()) << path;
}

// The message of what `action` throws, or "" when it does not throw.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TrainingRuns, DamagedCheckpointIsRejectedByResumeAndLoadNamingTheFile) {
  REQUIRE_SUBSET(db);
  TrainOptions o;
  o.out_dir = test::temp_folder("damaged");
  o.stop_after = 5;
  train_autoencoder(tiny(), db, o);
  const std::string path = checkpoint_path(o.out_dir, "autoencoder");
  const std::streamoff size = std::streamoff(fs::file_size(path));
  const PoseData d = make_pose_data(db);
  torch::Tensor mean, std;
  Autoencoder ae(encoder_inputs(d, mean, std).size(1), d.features.size(1), d.layout.size(), tiny());
  auto load_error = [&] { return error_of([&] { load_checkpoint_module(*ae, path); }); };
  const std::string damaged = path + " is not an intact lmm-train checkpoint";
  // One bit in the middle (weights): --resume and loading (lmm-export's path) name the file.
  flip_byte(path, size / 2, 0x40);
  o.resume = true;
  const std::string resume_error = error_of([&] { train_autoencoder(tiny(), db, o); });
  EXPECT_NE(resume_error.find(damaged), std::string::npos) << resume_error;
  EXPECT_NE(load_error().find(damaged), std::string::npos) << load_error();
  flip_byte(path, size / 2, 0x40);
  EXPECT_EQ(load_error(), "");  // restored: it is the flipped bit that is caught
  // One bit in the last byte, and a truncated file.
  flip_byte(path, size - 1, 0x40);
  EXPECT_NE(load_error().find(damaged), std::string::npos) << load_error();
  flip_byte(path, size - 1, 0x40);
  fs::resize_file(path, std::uintmax_t(size - 1));
  EXPECT_NE(load_error().find(damaged), std::string::npos) << load_error();
}

// Every parameter of `module` flattened into one vector.
torch::Tensor flat_parameters(torch::nn::Module& module) {
  std::vector<torch::Tensor> parts;
  for (const torch::Tensor& p : module.parameters()) parts.push_back(p.detach().reshape(-1).clone());
  return torch::cat(parts);
}

TEST(TrainingRuns, FrozenEncoderKeepsTheLatentsAndTrainsTheDecoder) {
  REQUIRE_SUBSET(db);
  TrainOptions o;
  o.out_dir = test::temp_folder("frozen");
  o.freeze_encoder = true;
  EXPECT_NE(error_of([&] { train_autoencoder(tiny(), db, o); }).find("resume"), std::string::npos);
  EXPECT_FALSE(fs::exists(checkpoint_path(o.out_dir, "autoencoder")));  // refused before anything is written
  o.freeze_encoder = false;
  o.stop_after = 100;
  const TrainReport joint = train_autoencoder(tiny(), db, o);
  const PoseData d = make_pose_data(db);
  torch::Tensor mean, std;
  const int64_t inputs = encoder_inputs(d, mean, std).size(1);
  Autoencoder before(inputs, d.features.size(1), d.layout.size(), tiny());
  Autoencoder after(inputs, d.features.size(1), d.layout.size(), tiny());
  load_checkpoint_module(*before, checkpoint_path(o.out_dir, "autoencoder"));
  o.stop_after = -1;
  o.resume = o.freeze_encoder = true;
  const TrainReport frozen = train_autoencoder(tiny(), db, o);
  EXPECT_EQ(frozen.steps, 200);
  load_checkpoint_module(*after, checkpoint_path(o.out_dir, "autoencoder"));
  EXPECT_TRUE(torch::equal(flat_parameters(*before->encoder), flat_parameters(*after->encoder)));
  EXPECT_FALSE(torch::equal(flat_parameters(*before->decoder), flat_parameters(*after->decoder)));
  EXPECT_LT(frozen.metrics.at("mean_joint_error_cm"), joint.metrics.at("mean_joint_error_cm"));
}

// The message of train_stepper's error for `c`, or "" when it trains.
std::string stepper_error(const TrainingConfig& c, const Database& db, const TrainOptions& o) {
  try {
    train_stepper(c, db, o);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TrainingRuns, TinyStepperAndProjectorLearnFromTheAutoencoder) {
  REQUIRE_SUBSET(db);
  TrainOptions o;
  o.out_dir = test::temp_folder("all");
  EXPECT_THROW(train_stepper(tiny(), db, o), std::runtime_error);  // needs the autoencoder first
  train_autoencoder(tiny(), db, o);
  // With the decoded-pose term every 4 of its 8 rollout frames, after up to 8 free frames, on
  // standardised states.
  TrainingConfig posed = tiny();
  posed.w_stepper_pose = 0.1;
  posed.stepper_pose_every = 4;
  posed.free_rollout = 8;
  posed.stepper.normalize_input = true;
  const TrainReport stepper = train_stepper(posed, db, o);
  ASSERT_TRUE(stepper.last_losses.count("pose_cm"));  // checked below to fall like the other terms
  {
    const PoseData d = make_pose_data(db);
    Stepper saved(posed.latent + d.features.size(1), posed.stepper);
    load_checkpoint_module(*saved, checkpoint_path(o.out_dir, "stepper"));
    const torch::Tensor features_std = d.features.std(0).clamp_min(1e-4);
    // The features' spread, which differs by dimension (the matching weights), not the identity's 1.
    EXPECT_TRUE(saved->input_std.narrow(0, posed.latent, features_std.size(0)).allclose(features_std, 1e-4));
  }
  const TrainReport projector = train_projector(tiny(), db, o);
  for (const TrainReport* r : {&stepper, &projector}) {
    EXPECT_TRUE(r->finished);
    for (const auto& [term, last] : r->last_losses) {
      if (term != "load_balance") {
        EXPECT_LT(last, r->first_losses.at(term)) << term;
      }
    }
  }
  EXPECT_GT(stepper.metrics.at("rollout_error_cm_2s"), stepper.metrics.at("rollout_error_cm_0.5s"));
  EXPECT_LT(stepper.metrics.at("rollout_error_cm_2s"), 50.0);
  EXPECT_GT(projector.metrics.at("projector_feature_error"), 0.5);  // ratio to the exact neighbour's
  EXPECT_LT(projector.metrics.at("projector_feature_error"), 3.0);
  expect_expert_use(stepper, tiny().stepper);
  expect_expert_use(projector, tiny().projector);
  // A preset with other sizes does not fit the saved autoencoder: a clear error.
  TrainingConfig other = tiny();
  other.latent = 12;
  std::string error = stepper_error(other, db, o);
  EXPECT_NE(error.find("does not match"), std::string::npos) << error;
  TrainingConfig too_long = tiny();  // no clip is that long
  too_long.free_rollout = 100000;
  error = stepper_error(too_long, db, o);
  EXPECT_NE(error.find("(100000 free, 8 trained)"), std::string::npos) << error;
}

}  // namespace
