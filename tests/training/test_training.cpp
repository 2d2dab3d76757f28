#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "lmm/import/config.hpp"
#include "lmm/import/import.hpp"
#include "lmm/asset/skeleton.hpp"
#include "lmm/training/adan.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/export.hpp"
#include "lmm/training/layers.hpp"
#include "lmm/training/pose_data.hpp"
#include "lmm/training/tag_targets.hpp"
#include "lmm/training/trainer.hpp"
#include "support/synthetic_bvh.hpp"
#include "support/synthetic_database.hpp"

using namespace lmm;
using namespace lmm::training;
namespace fs = std::filesystem;

namespace {

// The error message of load_training_config(value), or "" when it loads.
std::string preset_error(const std::string& value, const std::string& configs) {
  try {
    load_training_config(value, configs);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Adan, OneStepMatchesHandComputation) {
  // p = 1, g = 2 at step 1: d = 0, m = 0.02 g, v = 0, n = 0.01 g^2; bias corrections
  // c1 = 0.02, c2 = 0.08, c3 = 0.01, so the update is lr * g / (|g| + eps) = lr (sign of g).
  torch::Tensor p = torch::ones({2}, torch::requires_grad());
  Adan adan({p}, AdanOptions(0.1).weight_decay(0.5));
  (p * torch::tensor({2.0f, -3.0f})).sum().backward();
  adan.step();
  // Then the decoupled decay: p / (1 + lr * wd) = p / 1.05.
  EXPECT_NEAR(p[0].item<float>(), (1.0f - 0.1f) / 1.05f, 1e-6f);
  EXPECT_NEAR(p[1].item<float>(), (1.0f + 0.1f) / 1.05f, 1e-6f);
  // Step 2 with g = (1, 1): d = (-1, 4).
  adan.zero_grad();
  p.sum().backward();
  adan.step();
  const double b1 = 0.98, b2 = 0.92, b3 = 0.99, lr = 0.1;
  for (int i = 0; i < 2; ++i) {
    const double g1 = i == 0 ? 2.0 : -3.0, g2 = 1.0, d = g2 - g1;
    const double m = b1 * (1 - b1) * g1 + (1 - b1) * g2;
    const double v = (1 - b2) * d;
    const double u1 = g1, u2 = g2 + b2 * d;
    const double n = b3 * (1 - b3) * u1 * u1 + (1 - b3) * u2 * u2;
    const double c1 = 1 - b1 * b1, c2 = 1 - b2 * b2, c3 = 1 - b3 * b3;
    const double p1 = i == 0 ? 0.9 / 1.05 : 1.1 / 1.05;
    const double expected = (p1 - lr * (m / c1 + b2 * v / c2) / (std::sqrt(n / c3) + 1e-8)) / 1.05;
    EXPECT_NEAR(p[i].item<float>(), expected, 1e-5) << i;
  }
}

TEST(Layers, LipschitzLinearBoundsRowsAndStartsAsPlainLinear) {
  torch::manual_seed(1);
  LipschitzLinear layer(8, 5);
  const torch::Tensor x = torch::randn({4, 8});
  // At initialisation softplus(c) equals the infinity norm: nothing is scaled.
  EXPECT_TRUE(torch::allclose(layer->forward(x), torch::nn::functional::linear(x, layer->weight, layer->bias), 1e-5, 1e-6));
  EXPECT_NEAR(layer->bound().item<float>(), layer->weight.abs().sum(1).max().item<float>(), 1e-5f);
  {
    torch::NoGradGuard no_grad;
    layer->c.fill_(-2.0f);  // bound softplus(-2) = 0.127
  }
  const torch::Tensor rows = layer->normalized_weight().abs().sum(1);
  EXPECT_LE(rows.max().item<float>(), layer->bound().item<float>() + 1e-6f);
}

TEST(Layers, SmoeRoutesToTwoExpertsLikeTheDenseReference) {
  torch::manual_seed(2);
  Smoe smoe(6, 8, std::vector<int64_t>{16}, 4, 2);
  const torch::Tensor x = torch::randn({50, 6});
  EXPECT_TRUE(torch::allclose(smoe->forward(x), smoe->forward_dense(x), 1e-5, 1e-6));
  const RoutingStats stats = smoe->last_stats();
  EXPECT_NEAR(stats.utilisation.sum().item<float>(), 2.0f, 1e-5f);  // each sample uses two experts
  EXPECT_GE(stats.load_balance.item<float>(), 0.0f);
  // Gradients reach the gate through the renormalised weights and the balance loss.
  (smoe->forward(x).sum() + stats.load_balance).backward();
  bool gate_grad = false;
  for (const auto& p : smoe->named_parameters()) {
    if (p.key().rfind("gate", 0) == 0) gate_grad = gate_grad || p.value().grad().abs().sum().item<float>() > 0.0f;
  }
  EXPECT_TRUE(gate_grad);
}

// Kleanthous & Martini 2023 Table 8: three inputs, two experts, top-1. Eq. 14's dot product
// <f, P> is 0.476 (below its claimed minimum of 1/2), Eq. 17's KL is small but positive.
TEST(Layers, SmoeBalanceLossesOfThePapersTable8) {
  Smoe smoe(2, 2, std::vector<int64_t>{4}, 1, 1);
  {
    torch::NoGradGuard no_grad;
    smoe->gate()->weight.copy_(torch::eye(2));
    smoe->gate()->bias.zero_();
  }
  const torch::Tensor p = torch::tensor({0.49, 0.51, 0.32, 0.68, 0.9, 0.1}, torch::kFloat32).reshape({3, 2});
  smoe->forward(p.log());  // gate logits log p: softmax gives p back
  const RoutingStats stats = smoe->last_stats();
  EXPECT_NEAR(stats.dispatch_balance.item<double>(), 2.0 * (0.57 / 3.0 + 0.43 * 2.0 / 3.0), 1e-6);
  EXPECT_NEAR(stats.load_balance.item<double>(), 0.57 * std::log(1.14) + 0.43 * std::log(0.86), 1e-6);
}

// The routed pass's gradients (every expert's and the gate's) equal those of the dense reference,
// whose unrouted outputs get no gradient; an expert no row is routed to gets none either. Both ways
// of running the experts: padded groups as batched matmuls (routing spread out) and one expert at a
// time (one expert's group far above the mean).
TEST(Layers, SmoeRoutedGradientsEqualTheDenseReference) {
  for (const bool skewed : {false, true}) {
    torch::manual_seed(3);
    Smoe smoe(6, 12, std::vector<int64_t>{16, 8}, 5, 2);
    // Row r leans on input r % 5, which routes it to experts r % 5 and r % 5 + 6: groups of at most
    // 2 (18 pairs over 12 experts), experts 5 and 11 get none. Skewed: expert 0 is every row's first
    // choice, a group of 9.
    torch::Tensor x = 0.1 * torch::randn({9, 6});
    {
      torch::NoGradGuard no_grad;
      smoe->gate()->weight.zero_();
      for (int64_t e = 0; e < 12; ++e) {
        smoe->gate()->weight[e][e % 6] = 10.0;
        smoe->gate()->bias[e] = e < 6 ? 0.0 : -1.0;
      }
      if (skewed) smoe->gate()->bias[0] = 20.0;
      for (int64_t r = 0; r < 9; ++r) x[r][r % 5] += 1.0;
    }
    const torch::Tensor target = torch::randn({9, 5});
    auto gradients = [&](bool dense) {
      smoe->zero_grad();
      ((dense ? smoe->forward_dense(x) : smoe->forward(x)) - target).pow(2).sum().backward();
      std::map<std::string, torch::Tensor> g;
      for (const auto& p : smoe->named_parameters()) {
        g[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : torch::zeros_like(p.value());
      }
      return g;
    };
    const auto routed = gradients(false);
    EXPECT_EQ(smoe->last_stats().padded, !skewed);
    const auto dense = gradients(true);
    int unused = 0;
    for (const auto& [name, g] : dense) {
      EXPECT_TRUE(torch::allclose(routed.at(name), g, 1e-5, 1e-6)) << name << (skewed ? ", skewed" : ", spread");
      unused += name.rfind("expert", 0) == 0 && name.find("layer0.weight") != std::string::npos && g.abs().sum().item<float>() == 0.0f;
    }
    EXPECT_GT(unused, 0) << "every expert got rows: the test does not cover an empty group";
  }
}

TEST(PoseData, RotationsAndForwardKinematicsMatchTheRuntime) {
  test::SyntheticDatabase synthetic;
  for (int f = 0; f < 12; ++f) {  // non-trivial rotations for the hips and foot
    const Quat q = quat_from_angle_axis(0.1f * f, normalize(Vec3{1, 2, 3}));
    for (int j = 1; j < 3; ++j) {
      float* r = &synthetic.rotations[size_t(f * 3 + j) * 4];
      r[0] = q.w, r[1] = q.x, r[2] = q.y, r[3] = q.z;
    }
  }
  const AlignedBuffer buffer = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> database = Database::load_buffer(buffer.data(), buffer.size(), error);
  ASSERT_NE(database, nullptr) << error;
  const Database& db = *database;
  const PoseData d = make_pose_data(db);
  EXPECT_EQ(d.layout.size(), 2 * 9 + 6 + 1);
  EXPECT_EQ(d.parents, (std::vector<int64_t>{-1, 0}));
  EXPECT_EQ(d.contact_joints, (std::vector<int64_t>{1}));
  for (int f : {0, 7, 11}) {
    Vec3 gp[3];
    Quat gr[3];
    Vec3 lp[3] = {Vec3{}, db.positions(f)[1], db.positions(f)[2]};
    Quat lr[3] = {Quat{}, db.rotations(f)[1], db.rotations(f)[2]};
    forward_kinematics(db.skeleton().parents.data(), 3, lp, lr, gp, gr);
    for (int j = 1; j < 3; ++j) {
      EXPECT_NEAR(d.model_positions[f][j - 1][0].item<float>(), gp[j].x, 1e-5f);
      EXPECT_NEAR(d.model_positions[f][j - 1][1].item<float>(), gp[j].y, 1e-5f);
      EXPECT_NEAR(d.model_positions[f][j - 1][2].item<float>(), gp[j].z, 1e-5f);
    }
  }
  // Hierarchical weights: the hips (one descendant) outweigh the foot locally, not in model space.
  EXPECT_GT(d.local_weights[0].item<float>(), d.local_weights[1].item<float>());
  EXPECT_LT(d.model_weights[0].item<float>(), d.model_weights[1].item<float>());
}

TEST(TrainingConfig, PresetsLoadAndUnknownKeysAreNamed) {
  const std::string configs = pipeline::default_config_dir();
  for (const char* name : {"tiny", "paper"}) {
    const TrainingConfig c = load_training_config(name, configs);
    EXPECT_EQ(c.name, name);
  }
  const TrainingConfig paper = load_training_config("paper", configs);
  EXPECT_EQ(paper.decoder.experts, 128);
  EXPECT_EQ(paper.stepper.experts, 64);
  EXPECT_EQ(paper.projector.expert_hidden, (std::vector<int64_t>{64, 64, 64, 64}));
  const std::string path = testing::TempDir() + "lmm_bad_preset.toml";
  std::ofstream(path) << "name = \"x\"\n[train]\nbatchsize = 3\n";
  const std::string bad_key = preset_error(path, configs);
  EXPECT_NE(bad_key.find("unknown key 'batchsize'"), std::string::npos) << bad_key;
  EXPECT_THROW(load_training_config("no-such-preset", configs), std::runtime_error);
}

TEST(TrainingConfig, TagsAndActionsTogetherFitOneMask) {
  const std::string configs = pipeline::default_config_dir();
  const std::string path = testing::TempDir() + "lmm_tags_preset.toml";
  std::string names, actions;
  for (int t = 0; t < 60; ++t) names += (t ? ", \"t" : "\"t") + std::to_string(t) + "\"";
  for (int a = 0; a < 5; ++a) actions += (a ? ", \"t" : "\"t") + std::to_string(a) + "\"";
  std::ofstream(path) << "extends = \"tiny\"\nname = \"x\"\n[tags]\nnames = [" << names << "]\nactions = [" << actions << "]\n";
  const std::string error = preset_error(path, configs);
  EXPECT_NE(error.find("at most 64 tags and actions together"), std::string::npos) << error;
}

TEST(TrainingConfig, TagNamesFollowTheNameRuleNamingFileAndLine) {
  const std::string configs = pipeline::default_config_dir();
  const std::string path = testing::TempDir() + "lmm_tag_names_preset.toml";
  const std::pair<const char*, const char*> cases[] = {
      {"names = [\"walk,run\"]", "[tags] names: tag 'walk,run' contains ','"},
      {"names = [\" wave \"]", "[tags] names: tag ' wave ' begins or ends with a space"},
      {"names = [\"none\"]", "[tags] names: tag 'none' is reserved"},
      {"names = [\"a\"]\nactions = [\"a|b\"]", "[tags] actions: tag 'a|b' contains '|'"},
      {"names = [\"a\"]\nenter_actions_freely = 2", "'enter_actions_freely' must be true or false"},
  };
  for (const auto& [tags, expected] : cases) {
    std::ofstream(path) << "extends = \"tiny\"\nname = \"x\"\n[tags]\n" << tags << "\n";
    const std::string error = preset_error(path, configs);
    EXPECT_NE(error.find(expected), std::string::npos) << tags << " -> " << error;
    EXPECT_NE(error.find("lmm_tag_names_preset.toml"), std::string::npos) << error;
  }
  std::ofstream(path) << "extends = \"tiny\"\nname = \"x\"\n[tags]\nnames = [\"a\", \"b\"]\nactions = [\"b\"]\n";
  const TrainingConfig c = load_training_config(path, configs);
  EXPECT_EQ(kept_out_tags(c), TagMask(2));
  std::ofstream(path) << "extends = \"tiny\"\nname = \"x\"\n[tags]\nnames = [\"a\", \"b\"]\nactions = [\"b\"]\n"
                         "enter_actions_freely = true\n";
  EXPECT_EQ(kept_out_tags(load_training_config(path, configs)), TagMask(0));
}

TEST(TrainingConfig, PresetTagsTheDatabaseLacksAreRefusedBeforeTraining) {
  const std::string configs = pipeline::default_config_dir();
  test::SyntheticDatabase synthetic;
  synthetic.tag_names = "walk\nidle\ndash\n";
  synthetic.tag_masks.assign(24, 0);
  for (int f = 0; f < 12; ++f) synthetic.tag_masks[2 * size_t(f)] = f < 8 ? 1 : 2;  // no frame holds dash
  const AlignedBuffer bytes = test::aligned_copy(synthetic.build());
  std::string error;
  const std::shared_ptr<const Database> db = Database::load_buffer(bytes.data(), bytes.size(), error);
  ASSERT_NE(db, nullptr) << error;
  const std::string path = testing::TempDir() + "lmm_tags_vs_db.toml";
  const auto refusal = [&](const std::string& tags) -> std::string {
    std::ofstream(path) << "extends = \"tiny\"\nname = \"x\"\n[tags]\n" << tags << "\n";
    try {
      check_preset_tags(load_training_config(path, configs), *db);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refusal("names = [\"walk\", \"idle\"]\nactions = [\"idle\"]"), "");
  const std::string unknown = refusal("names = [\"walk\", \"jump\"]");
  EXPECT_NE(unknown.find("lmm_tags_vs_db.toml [tags] names: unknown tag 'jump'"), std::string::npos) << unknown;
  const std::string unheld = refusal("names = [\"walk\", \"dash\"]\nactions = [\"dash\"]");
  EXPECT_NE(unheld.find("[tags] actions: no frame of the database holds 'dash'"), std::string::npos) << unheld;
}

TEST(TrainingConfig, NetworkSettingsReplaceTheTrainDefaults) {
  const std::string path = testing::TempDir() + "lmm_network_rates.toml";
  std::ofstream(path) << "name = \"x\"\n[train]\nlearning_rate = 0.01\nbatch = 64\n"
                         "[stepper]\nlearning_rate = 0.002\nbatch = 32\n";
  const TrainingConfig c = load_training_config(path, pipeline::default_config_dir());
  EXPECT_DOUBLE_EQ(for_network(c, c.stepper).learning_rate, 0.002);
  EXPECT_EQ(for_network(c, c.stepper).batch, 32);
  EXPECT_DOUBLE_EQ(for_network(c, c.decoder).learning_rate, 0.01);
  EXPECT_EQ(c.balance, LoadBalance::kKl);
  std::ofstream(path) << "name = \"x\"\n[loss]\nbalance = \"dispatch\"\n";
  EXPECT_EQ(load_training_config(path, pipeline::default_config_dir()).balance, LoadBalance::kDispatch);
  std::ofstream(path) << "name = \"x\"\n[loss]\nbalance = \"switch\"\n";
  EXPECT_THROW(load_training_config(path, pipeline::default_config_dir()), std::runtime_error);
  EXPECT_EQ(for_network(c, c.decoder).batch, 64);
}

TEST(TrainingConfig, StepperPoseTermIsOffByDefaultAndItsIntervalIsChecked) {
  const std::string configs = pipeline::default_config_dir();
  EXPECT_EQ(load_training_config("tiny", configs).w_stepper_pose, 0.0);
  EXPECT_DOUBLE_EQ(load_training_config("standard", configs).w_stepper_pose, 0.1);
  const std::string path = testing::TempDir() + "lmm_stepper_pose.toml";
  std::ofstream(path) << "name = \"x\"\n[loss]\nstepper_pose = 0.1\nstepper_pose_every = 0\n";
  const std::string error = preset_error(path, configs);
  EXPECT_NE(error.find("'stepper_pose_every' must be at least 1"), std::string::npos) << error;
}

TEST(TrainingConfig, SchedulesDecayTheRateToZeroAndUnknownOnesAreNamed) {
  TrainingConfig c;
  c.learning_rate = 0.01;
  c.schedule = "linear";
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(c, 0.0, 1.0), 0.01);
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(c, 0.25, 1.0), 0.0075);
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(c, 1.0, 1.0), 0.0);
  c.schedule = "cosine";
  EXPECT_NEAR(scheduled_learning_rate(c, 0.5, 1.0), 0.005, 1e-15);
  EXPECT_NEAR(scheduled_learning_rate(c, 0.25, 1.0), 0.005 * (1.0 + std::sqrt(0.5)), 1e-15);
  EXPECT_NEAR(scheduled_learning_rate(c, 2.0, 1.0), 0.0, 1e-15);  // past the end: clamped
  c.schedule = "plateau";
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(c, 0.5, 0.003), 0.003);
  const std::string path = testing::TempDir() + "lmm_bad_schedule.toml";
  std::ofstream(path) << "name = \"x\"\n[train]\nschedule = \"step\"\n";
  const std::string error = preset_error(path, pipeline::default_config_dir());
  EXPECT_NE(error.find("schedule: 'step' is not plateau, linear or cosine"), std::string::npos) << error;
}

TEST(TrainingConfig, StepperRolloutKeysAreCheckedAndNormalizeInputIsTheSteppersAlone) {
  const std::string configs = pipeline::default_config_dir();
  const std::string path = testing::TempDir() + "lmm_stepper_keys.toml";
  std::ofstream(path) << "name = \"x\"\n[train]\nfree_rollout = 90\n[stepper]\nnormalize_input = true\n";
  const TrainingConfig c = load_training_config(path, configs);
  EXPECT_EQ(c.free_rollout, 90);
  EXPECT_TRUE(c.stepper.normalize_input);
  EXPECT_FALSE(load_training_config("tiny", configs).stepper.normalize_input);
  std::ofstream(path) << "name = \"x\"\n[train]\nfree_rollout = -1\n";
  std::string error = preset_error(path, configs);
  EXPECT_NE(error.find("'free_rollout' must be at least 0"), std::string::npos) << error;
  std::ofstream(path) << "name = \"x\"\n[decoder]\nnormalize_input = true\n";
  error = preset_error(path, configs);
  EXPECT_NE(error.find("[decoder]: unknown key 'normalize_input'"), std::string::npos) << error;
}

TEST(TrainingConfig, AnnealLowersTheRateOverTheRunsLastShareAndNetworksMayOverrideIt) {
  TrainingConfig c;
  EXPECT_DOUBLE_EQ(anneal_factor(c, 0.99), 1.0);  // off by default
  c.anneal = 0.25;
  EXPECT_DOUBLE_EQ(anneal_factor(c, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(anneal_factor(c, 0.875), 0.5);
  EXPECT_DOUBLE_EQ(anneal_factor(c, 1.5), 0.0);  // past the end: clamped
  const std::string configs = pipeline::default_config_dir();
  const std::string path = testing::TempDir() + "lmm_anneal.toml";
  std::ofstream(path) << "name = \"x\"\n[train]\nanneal = 0.2\n[stepper]\nanneal = 0.4\n[projector]\nanneal = 0\n";
  const TrainingConfig preset = load_training_config(path, configs);
  EXPECT_DOUBLE_EQ(preset.anneal, 0.2);
  EXPECT_DOUBLE_EQ(for_network(preset, preset.decoder).anneal, 0.2);
  EXPECT_DOUBLE_EQ(for_network(preset, preset.stepper).anneal, 0.4);
  EXPECT_DOUBLE_EQ(for_network(preset, preset.projector).anneal, 0.0);
  for (const std::string table : {"train", "stepper"}) {
    std::ofstream(path) << "name = \"x\"\n[" << table << "]\nanneal = 1.0\n";
    const std::string error = preset_error(path, configs);
    EXPECT_NE(error.find("[" + table + "]: 'anneal' must be at least 0 and below 1"), std::string::npos) << error;
  }
}

// Makes `dir` the working directory for its lifetime.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& dir) : previous_(fs::current_path()) { fs::current_path(dir); }
  ~WorkingDirectory() { fs::current_path(previous_); }

 private:
  fs::path previous_;
};

TEST(TrainingConfig, NamesAreShippedPresetsEvenWhenTheWorkingDirectoryHoldsThatName) {
  const std::string configs = fs::absolute(pipeline::default_config_dir()).string();
  const std::string dir = test::temp_folder("cwd");
  fs::create_directories(dir + "/tiny");
  test::write_text(dir + "/paper", "");
  test::write_text(dir + "/empty.toml", "# only a comment\n");
  test::write_text(dir + "/mine.toml", "name = \"mine\"\n[train]\nsteps = 7\n");
  const WorkingDirectory cwd(dir);
  for (const char* name : {"tiny", "paper"}) {
    const TrainingConfig c = load_training_config(name, configs);
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(c.source, configs + "/training/" + name + ".toml");
  }
  // A value with '/' or ending in .toml is a path.
  EXPECT_EQ(load_training_config("mine.toml", configs).steps, 7);
  EXPECT_EQ(load_training_config("./mine.toml", configs).name, "mine");
  EXPECT_NE(preset_error("./tiny", configs).find("./tiny is not a file"), std::string::npos) << preset_error("./tiny", configs);
  EXPECT_NE(preset_error("empty.toml", configs).find("empty.toml: empty preset"), std::string::npos)
      << preset_error("empty.toml", configs);
  EXPECT_NE(preset_error("mine", configs).find("not a shipped preset"), std::string::npos) << preset_error("mine", configs);
}

TEST(RunManifest, WrittenOnceAndConcurrentWritersAgree) {
  const std::string configs = pipeline::default_config_dir();
  const TrainingConfig tiny = load_training_config("tiny", configs);
  for (int round = 0; round < 10; ++round) {  // stepper and projector starting at once, and more
    const std::string dir = test::temp_folder("run" + std::to_string(round));
    std::vector<std::string> errors(4);
    std::vector<std::thread> writers;
    for (std::string& error : errors) {
      writers.emplace_back([&] {
        try {
          write_run_manifest(dir, tiny, dir + "/db.mmdb");
        } catch (const std::runtime_error& e) {
          error = e.what();
        }
      });
    }
    for (std::thread& t : writers) t.join();
    for (const std::string& error : errors) EXPECT_EQ(error, "") << "round " << round;
    EXPECT_EQ(load_training_config(read_run_manifest(dir).preset, configs).name, "tiny");
  }
  // A folder keeps its preset and database: another one is an error naming the file.
  const std::string dir = test::temp_folder("run0");
  write_run_manifest(dir, tiny, dir + "/db.mmdb");
  auto error_of = [&](const TrainingConfig& config, const std::string& db) -> std::string {
    try {
      write_run_manifest(dir, config, db);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(tiny, dir + "/./db.mmdb"), "");  // the same database, spelled otherwise
  EXPECT_NE(error_of(load_training_config("ffn-tiny", configs), dir + "/db.mmdb").find("preset.toml holds another preset"),
            std::string::npos);
  EXPECT_NE(error_of(tiny, dir + "/other.mmdb").find("run.toml records another database"), std::string::npos);
  EXPECT_EQ(read_run_manifest(dir).database, fs::weakly_canonical(dir + "/db.mmdb").string());
}

}  // namespace
