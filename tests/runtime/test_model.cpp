// Model bundles (*.lmmw) and the runtime evaluator: loading, metadata, every kernel path
// against an independent double-precision reference, batched == single, f16, no allocation
// per call, and the committed version-1 golden bundle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>

#include "lmm/blob_writer.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/eval/nn.hpp"
#include "lmm/motion/controller.hpp"
#include "support/allocation_counter.hpp"
#include "support/synthetic_model.hpp"

using namespace lmm;

namespace {

constexpr int kLatent = 4;
constexpr int kState = kLatent + test::kSyntheticFeatures;

struct LoadedModel {
  AlignedBuffer buffer;
  std::shared_ptr<const Model> model;
};

// Builds and loads a bundle of `values`; fails the test on any error.
void load(const ModelValues& values, bool half, LoadedModel& out) {
  std::string error;
  const std::vector<uint8_t> bytes = test::synthetic_bundle(values, half, error);
  ASSERT_FALSE(bytes.empty()) << error;
  out.buffer = test::aligned_copy(bytes);
  out.model = Model::load_buffer(out.buffer.data(), out.buffer.size(), error);
  ASSERT_NE(out.model, nullptr) << error;
}

std::vector<float> random_inputs(int rows, int size, uint32_t seed) {
  std::mt19937 rng(seed);
  return test::random_values(size_t(rows) * size, 2.5f, rng);
}

// The kernel paths this machine can run.
std::vector<KernelPath> paths() { return available_kernel_paths(); }

// Initialises `eval` for `model`; a fatal test failure (with the message) when it refuses.
void init(ModelEvaluator& eval, const std::shared_ptr<const Model>& model, int capacity, KernelPath path) {
  std::string error;
  ASSERT_TRUE(eval.init(model, capacity, path, error)) << error;
}

const char* name(KernelPath p) { return kernel_path_name(p); }

// Largest |runtime - reference| over `rows` inputs for decoder, stepper and projector outputs
// (raw networks and the denormalised evaluator results).
double max_error(const ModelValues& v, const Model& m, ModelEvaluator& eval, int rows) {
  double worst = 0.0;
  const std::vector<float> states = random_inputs(rows, kState, 11), queries = random_inputs(rows, 5, 12);
  std::vector<float> pose(size_t(m.pose_layout().size())), next(kState), projected(kState);
  for (int r = 0; r < rows; ++r) {
    const float* s = states.data() + size_t(r) * kState;
    const float* q = queries.data() + size_t(r) * 5;
    eval.decode(s, pose.data());
    eval.step(s, next.data());
    eval.project(q, projected.data());
    const std::vector<double> d = test::reference_network(v.decoder, s, kState);
    const std::vector<double> st = test::reference_network(v.stepper, s, kState);
    const std::vector<double> p = test::reference_network(v.projector, q, 5);
    const PoseVectorLayout& l = m.pose_layout();
    for (int i = 0; i < l.size(); ++i) {
      double expected = d[size_t(i)] * v.pose_std[size_t(i)] + v.pose_mean[size_t(i)];
      if (i >= l.contact()) expected = 1.0 / (1.0 + std::exp(-expected));
      worst = std::max(worst, std::abs(expected - pose[size_t(i)]));
    }
    for (int i = 0; i < kState; ++i) {
      worst = std::max(worst, std::abs(s[i] + st[size_t(i)] * v.delta_scale[size_t(i)] - next[size_t(i)]));
      worst = std::max(worst, std::abs(p[size_t(i)] * v.state_std[size_t(i)] + v.state_mean[size_t(i)] - projected[size_t(i)]));
    }
  }
  return worst;
}

TEST(Model, LoadsMetadataSkeletonSchemaAndSizes) {
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 1), false, lm));
  const Model& m = *lm.model;
  EXPECT_EQ(m.preset(), "synthetic");
  EXPECT_EQ(m.latent(), kLatent);
  EXPECT_EQ(m.feature_dims(), 5);
  EXPECT_EQ(m.state_size(), kState);
  EXPECT_EQ(m.pose_layout().size(), test::kSyntheticPose);
  EXPECT_EQ(m.skeleton().joint_count(), 3);
  EXPECT_EQ(m.skeleton().names[2], "Foot");
  EXPECT_EQ(m.contact_joints(), std::vector<int>{2});
  EXPECT_EQ(m.schema().groups.size(), 2u);
  EXPECT_FLOAT_EQ(m.fps(), 60.0f);
  EXPECT_EQ(m.decoder().experts, 6);
  EXPECT_EQ(m.decoder().top_k, 2);
  EXPECT_EQ(m.decoder().expert_out(), 8);
  EXPECT_EQ(m.projector().top_k, 3);
  EXPECT_FALSE(m.has_encoder());
  EXPECT_FALSE(m.half_precision());
  // Gate (9 x 6) + 2 experts (9x8 + 8x70 + 70x8) + post (8x130 + 130x25).
  EXPECT_EQ(m.decoder().macs(), 9 * 6 + 2 * (9 * 8 + 8 * 70 + 70 * 8) + 8 * 130 + 130 * 25);
  const int64_t params = m.decoder().parameter_count() + m.stepper().parameter_count() + m.projector().parameter_count();
  EXPECT_EQ(m.weight_bytes(), uint64_t(params) * 4);
}

// Issue 14: a bundle keeps its database's optional meta.unit_scale (the source BVH unit, for
// lmm-sim --model's BVH output); bundles of databases without it report 0.
TEST(Model, CarriesTheDatabaseSourceUnitScaleWhenItHasOne) {
  for (const std::vector<float>& unit : {std::vector<float>{}, std::vector<float>{0.001f}}) {
    test::SyntheticDatabase synthetic;
    synthetic.unit_scale = unit;
    const AlignedBuffer db_buffer = test::aligned_copy(synthetic.build());
    std::string error;
    const std::shared_ptr<const Database> db = Database::load_buffer(db_buffer.data(), db_buffer.size(), error);
    ASSERT_NE(db, nullptr) << error;
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(build_model_bundle(test::random_model_values(kLatent, 1), db->blob(), false, bytes, error)) << error;
    const AlignedBuffer buffer = test::aligned_copy(bytes);
    const std::shared_ptr<const Model> model = Model::load_buffer(buffer.data(), buffer.size(), error);
    ASSERT_NE(model, nullptr) << error;
    EXPECT_EQ(model->source_unit_scale(), unit.empty() ? 0.0f : unit[0]);
  }
}

TEST(Model, CarriesTheTrainingDataSpeedsWhenGivenAndRejectsBadOnes) {
  ModelValues values = test::random_model_values(kLatent, 2);
  LoadedModel without;
  load(values, false, without);
  EXPECT_FALSE(without.model->speeds().valid()) << "bundles exported without speeds keep the controller's";
  values.speeds = {1.1f, 0.9f, 0.8f, 2.6f, 2.0f, 1.7f};
  LoadedModel with;
  load(values, false, with);
  EXPECT_EQ(with.model->speeds().values(), values.speeds);
  ControllerSettings settings;
  with.model->speeds().apply(settings);
  EXPECT_EQ(settings.run_side, 2.0f);
  values.speeds[3] = -2.6f;
  std::string error;
  EXPECT_TRUE(test::synthetic_bundle(values, false, error).empty());
  EXPECT_NE(error.find("controller.speeds[3]"), std::string::npos) << error;
}

TEST(Model, EveryKernelPathMatchesTheDoublePrecisionReference) {
  for (const bool plain : {false, true}) {
    const ModelValues v = test::random_model_values(kLatent, 2, plain);
    LoadedModel lm;
    ASSERT_NO_FATAL_FAILURE(load(v, false, lm));
    for (KernelPath path : paths()) {
      ModelEvaluator eval;
      ASSERT_NO_FATAL_FAILURE(init(eval, lm.model, 16, path));
      EXPECT_EQ(eval.path(), path);
      EXPECT_LT(max_error(v, *lm.model, eval, 500), 2e-5) << name(path) << (plain ? " ffn" : " smoe");
    }
  }
}

TEST(Model, Avx2PathIsAvailableOnX86) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "this CPU has no AVX2/FMA";
  EXPECT_TRUE(avx2_available());
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 3), false, lm));
  ModelEvaluator eval;
  ASSERT_NO_FATAL_FAILURE(init(eval, lm.model, 1, KernelPath::Auto));
  EXPECT_EQ(eval.path(), avx512_available() ? KernelPath::Avx512 : KernelPath::Avx2);
#else
  GTEST_SKIP() << "not an x86-64 build";
#endif
}

TEST(Model, BatchedEqualsOneAtATimeBitForBitForEveryBatchSizeAndChunking) {
  const ModelValues v = test::random_model_values(kLatent, 4);
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(v, false, lm));
  const int pose = lm.model->pose_layout().size();
  for (KernelPath path : paths()) {
    ModelEvaluator single, batched;
    std::string error;
    ASSERT_TRUE(single.init(lm.model, 1, path, error)) << error;
    ASSERT_TRUE(batched.init(lm.model, 7, path, error)) << error;  // 300 rows: 43 chunks, a partial last one
    for (int rows : {1, 2, 5, 7, 64, 300}) {
      const std::vector<float> states = random_inputs(rows, kState, uint32_t(rows));
      const std::vector<float> queries = random_inputs(rows, 5, uint32_t(rows + 1));
      std::vector<float> poses(size_t(rows) * pose), next(size_t(rows) * kState), projected(size_t(rows) * kState);
      batched.decode_batch(states.data(), rows, poses.data());
      batched.step_batch(states.data(), rows, next.data());
      batched.project_batch(queries.data(), rows, projected.data());
      std::vector<float> one_pose(static_cast<size_t>(pose)), one_state(kState);
      double worst = 0.0;
      for (int r = 0; r < rows; ++r) {
        single.decode(states.data() + size_t(r) * kState, one_pose.data());
        for (int i = 0; i < pose; ++i) worst = std::max(worst, double(std::abs(one_pose[size_t(i)] - poses[size_t(r) * pose + i])));
        single.step(states.data() + size_t(r) * kState, one_state.data());
        for (int i = 0; i < kState; ++i) worst = std::max(worst, double(std::abs(one_state[size_t(i)] - next[size_t(r) * kState + i])));
        single.project(queries.data() + size_t(r) * 5, one_state.data());
        for (int i = 0; i < kState; ++i) worst = std::max(worst, double(std::abs(one_state[size_t(i)] - projected[size_t(r) * kState + i])));
      }
      EXPECT_EQ(worst, 0.0) << name(path) << " rows " << rows;  // crowds rely on it
    }
  }
}

TEST(Model, HalfPrecisionBundleIsHalfTheWeightsAndCloseToF32) {
  const ModelValues v = test::random_model_values(kLatent, 5);
  LoadedModel full, half;
  ASSERT_NO_FATAL_FAILURE(load(v, false, full));
  ASSERT_NO_FATAL_FAILURE(load(v, true, half));
  EXPECT_TRUE(half.model->half_precision());
  // Layers in f16, gates (routing) in f32.
  int64_t gate_values = 0;
  for (const NetworkWeights* net : {&full.model->decoder(), &full.model->stepper(), &full.model->projector()}) {
    gate_values += int64_t(net->gate.in + 1) * net->gate.out;
  }
  EXPECT_EQ(half.model->weight_bytes(), (full.model->weight_bytes() - 4 * gate_values) / 2 + 4 * gate_values);
  EXPECT_LT(half.buffer.size(), full.buffer.size());
  ModelEvaluator a, b;
  std::string error;
  ASSERT_TRUE(a.init(full.model, 1, KernelPath::Auto, error)) << error;
  ASSERT_TRUE(b.init(half.model, 1, KernelPath::Auto, error)) << error;
  const std::vector<float> states = random_inputs(200, kState, 9);
  std::vector<float> pa(test::kSyntheticPose), pb(test::kSyntheticPose);
  double worst = 0.0, differs = 0.0;
  for (int r = 0; r < 200; ++r) {
    a.decode(states.data() + size_t(r) * kState, pa.data());
    b.decode(states.data() + size_t(r) * kState, pb.data());
    for (size_t i = 0; i < pa.size(); ++i) {
      worst = std::max(worst, double(std::abs(pa[i] - pb[i])));
      differs += pa[i] != pb[i];
    }
  }
  EXPECT_LT(worst, 2e-2);  // f16 keeps 11 significant bits; the outputs are O(1)
  EXPECT_GT(differs, 0.0);  // the f16 bundle really holds rounded weights
}

// `v` with every layer weight and bias rounded to f16 and back (gates stay f32, as in f16 bundles).
ModelValues rounded_to_half(ModelValues v) {
  auto round = [](std::vector<float>& values) {
    for (float& x : values) x = half_to_float(float_to_half(x));
  };
  for (NetworkValues* net : {&v.decoder, &v.stepper, &v.projector, &v.encoder}) {
    for (std::vector<LayerValues>* layers : {&net->expert_layers, &net->mlp}) {
      for (LayerValues& l : *layers) {
        round(l.weight);
        round(l.bias);
      }
    }
  }
  return v;
}

// Issue 15: f16 weights stay f16 in memory and are widened in registers (exactly), so an f16
// bundle must give the same bits as an f32 bundle holding the rounded values, on every kernel
// path, one row at a time and batched. The networks' widths (4 to 130) reach every block and
// tail shape: full vectors, tails ending at the layer's last output, layers under 8 wide.
TEST(Model, HalfPrecisionBundleEqualsItsRoundedF32BundleBitForBitOnEveryPath) {
  for (const bool plain : {false, true}) {
    ModelValues v = test::random_model_values(kLatent, 6, plain, /*encoder=*/true);
    // Every class of finite half among the weights: zeros, subnormals, the smallest normal.
    const float special[] = {0.0f, -0.0f, 3.0e-8f, -4.5e-6f, 6.103515625e-5f, -1.5f};
    for (NetworkValues* net : {&v.decoder, &v.stepper, &v.projector, &v.encoder}) {
      for (LayerValues& l : net->mlp) std::copy(std::begin(special), std::end(special), l.weight.begin() + 1);
    }
    LoadedModel half, rounded;
    ASSERT_NO_FATAL_FAILURE(load(v, true, half));
    ASSERT_NO_FATAL_FAILURE(load(rounded_to_half(v), false, rounded));
    ASSERT_TRUE(half.model->half_precision());
    ASSERT_FALSE(rounded.model->half_precision());
    const int pose = rounded.model->pose_layout().size(), encoder_in = rounded.model->encoder().in;
    for (KernelPath path : paths()) {
      ModelEvaluator a, b;
      ASSERT_NO_FATAL_FAILURE(init(a, half.model, 64, path));
      ASSERT_NO_FATAL_FAILURE(init(b, rounded.model, 64, path));
      for (int rows : {1, 2, 3, 13, 64}) {
        const std::vector<float> states = random_inputs(rows, kState, uint32_t(rows) + 20);
        const std::vector<float> queries = random_inputs(rows, 5, uint32_t(rows) + 21);
        const std::vector<float> encoder_inputs = random_inputs(1, encoder_in, uint32_t(rows) + 22);
        std::vector<float> out_a(size_t(rows) * std::max(pose, kState)), out_b(out_a.size());
        auto expect_same = [&](const char* what, const std::function<void(ModelEvaluator&, float*)>& call) {
          call(a, out_a.data());
          call(b, out_b.data());
          EXPECT_EQ(out_a, out_b) << what << ", " << name(path) << (plain ? " ffn" : " smoe") << ", rows " << rows;
        };
        expect_same("decode", [&](ModelEvaluator& e, float* y) { e.decode_batch(states.data(), rows, y); });
        expect_same("step", [&](ModelEvaluator& e, float* y) { e.step_batch(states.data(), rows, y); });
        expect_same("project", [&](ModelEvaluator& e, float* y) { e.project_batch(queries.data(), rows, y); });
        expect_same("encode", [&](ModelEvaluator& e, float* y) { e.encode(encoder_inputs.data(), y); });
      }
    }
  }
}

TEST(Model, EncoderIsOptionalAndStandardisesItsInput) {
  const ModelValues v = test::random_model_values(kLatent, 6, false, true);
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(v, false, lm));
  ASSERT_TRUE(lm.model->has_encoder());
  ModelEvaluator eval;
  ASSERT_NO_FATAL_FAILURE(init(eval, lm.model, 1, KernelPath::Auto));
  const int in = lm.model->encoder().in;
  const std::vector<float> x = random_inputs(1, in, 3);
  std::vector<float> standardised(static_cast<size_t>(in)), latent(kLatent);
  for (int i = 0; i < in; ++i) standardised[size_t(i)] = (x[size_t(i)] - v.encoder_mean[size_t(i)]) / v.encoder_std[size_t(i)];
  ASSERT_TRUE(eval.encode(x.data(), latent.data()));
  const std::vector<double> expected = test::reference_network(v.encoder, standardised.data(), in);
  for (int i = 0; i < kLatent; ++i) EXPECT_NEAR(latent[size_t(i)], expected[size_t(i)], 2e-5);

  LoadedModel without;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 6), false, without));
  ModelEvaluator plain;
  ASSERT_NO_FATAL_FAILURE(init(plain, without.model, 1, KernelPath::Auto));
  EXPECT_FALSE(plain.encode(x.data(), latent.data()));
}

TEST(Model, EvaluationAllocatesNothing) {
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 7), false, lm));
  const std::vector<float> states = random_inputs(100, kState, 1);
  std::vector<float> poses(100 * test::kSyntheticPose), next(100 * kState);
  for (KernelPath path : paths()) {
    ModelEvaluator eval;
    ASSERT_NO_FATAL_FAILURE(init(eval, lm.model, 32, path));
    test::start_counting_allocations();
    eval.decode(states.data(), poses.data());
    eval.step(states.data(), next.data());
    eval.project(states.data(), next.data());
    eval.decode_batch(states.data(), 100, poses.data());
    eval.step_batch(states.data(), 100, next.data());
    eval.project_batch(states.data(), 100, next.data());
    EXPECT_EQ(test::stop_counting_allocations(), 0) << name(path);
  }
  LoadedModel with_encoder;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 7, false, true), false, with_encoder));
  ModelEvaluator eval;
  ASSERT_NO_FATAL_FAILURE(init(eval, with_encoder.model, 1, KernelPath::Auto));
  std::vector<float> latent(kLatent);
  test::start_counting_allocations();
  EXPECT_TRUE(eval.encode(poses.data(), latent.data()));
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}

TEST(Model, OutputsMayReplaceTheirInputs) {
  const ModelValues v = test::random_model_values(kLatent, 12);
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(v, false, lm));
  for (KernelPath path : paths()) {
    ModelEvaluator eval;
    ASSERT_NO_FATAL_FAILURE(init(eval, lm.model, 4, path));
    const std::vector<float> states = random_inputs(10, kState, 5);
    std::vector<float> separate(states.size()), in_place = states;
    ASSERT_TRUE(eval.step_batch(states.data(), 10, separate.data()));
    ASSERT_TRUE(eval.step_batch(in_place.data(), 10, in_place.data()));  // 3 chunks of up to 4 rows
    EXPECT_EQ(in_place, separate) << name(path);
    std::vector<float> one(states.begin(), states.begin() + kState), expected(kState);
    ASSERT_TRUE(eval.step(one.data(), expected.data()));
    ASSERT_TRUE(eval.step(one.data(), one.data()));
    EXPECT_EQ(one, expected) << name(path);
  }
}

// (Reloading a model under an evaluator is impossible since models are immutable assets; see
// test_asset_lifetime.cpp.)
TEST(Model, EvaluatorRefusesUntilInitialisedAndRejectsANullModel) {
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 13), false, lm));
  ModelEvaluator eval;
  std::string error;
  std::vector<float> state(kState, 0.1f), next(kState), pose(test::kSyntheticPose);
  EXPECT_FALSE(eval.step(state.data(), next.data()));  // never initialised
  EXPECT_FALSE(eval.decode(state.data(), pose.data()));
  ASSERT_TRUE(eval.init(lm.model, 1, KernelPath::Auto, error)) << error;
  EXPECT_TRUE(eval.step(state.data(), next.data()));
  EXPECT_TRUE(eval.decode(state.data(), pose.data()));

  ModelEvaluator unset;
  EXPECT_FALSE(unset.init(nullptr, 1, KernelPath::Auto, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
}

TEST(Model, TiedGateLogitsPickTheLowerExpertsOnEveryPath) {
  ModelValues v = test::random_model_values(kLatent, 14);
  std::fill(v.decoder.gate.weight.begin(), v.decoder.gate.weight.end(), 0.0f);
  std::fill(v.decoder.gate.bias.begin(), v.decoder.gate.bias.end(), 0.25f);  // every logit equal
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(v, false, lm));
  // The reference with experts 0 and 1, half each.
  ModelValues first_two = v;
  first_two.decoder.gate.bias[0] = first_two.decoder.gate.bias[1] = 1.0f;
  const std::vector<float> states = random_inputs(20, kState, 8);
  for (KernelPath path : paths()) {
    ModelEvaluator eval;
    ASSERT_NO_FATAL_FAILURE(init(eval, lm.model, 8, path));
    std::vector<float> raw(size_t(20) * test::kSyntheticPose);
    ASSERT_TRUE(eval.run(lm.model->decoder(), states.data(), 20, raw.data()));
    for (int r = 0; r < 20; ++r) {
      const std::vector<double> expected = test::reference_network(first_two.decoder, states.data() + size_t(r) * kState, kState);
      for (int i = 0; i < test::kSyntheticPose; ++i) {
        EXPECT_NEAR(raw[size_t(r) * test::kSyntheticPose + i], expected[size_t(i)], 2e-5) << name(path) << " row " << r;
      }
    }
  }
}

TEST(Model, BadBuildsAndMismatchesAreRejectedWithAMessage) {
  std::string error;
  ModelValues v = test::random_model_values(kLatent, 8);
  v.pose_std.pop_back();
  EXPECT_TRUE(test::synthetic_bundle(v, false, error).empty());
  EXPECT_NE(error.find("decoder.pose_std"), std::string::npos) << error;

  v = test::random_model_values(kLatent, 8);
  v.stepper.mlp.clear();
  v.stepper.expert_layers.back().out = 3;  // experts no longer produce the state size
  v.stepper.expert_layers.back().weight.resize(size_t(5) * 8 * 3);
  v.stepper.expert_layers.back().bias.resize(size_t(5) * 3);
  EXPECT_TRUE(test::synthetic_bundle(v, false, error).empty());
  EXPECT_NE(error.find("'stepper' outputs 3 values, expected 9"), std::string::npos) << error;

  v = test::random_model_values(kLatent, 8);
  v.decoder.gate.weight[3] = NAN;
  EXPECT_TRUE(test::synthetic_bundle(v, false, error).empty());
  EXPECT_NE(error.find("decoder.gate.weight"), std::string::npos) << error;

  v = test::random_model_values(kLatent, 8);
  v.projector.top_k = 5;  // more than its 4 experts
  EXPECT_TRUE(test::synthetic_bundle(v, false, error).empty());
  EXPECT_NE(error.find("projector.config"), std::string::npos) << error;

  v = test::random_model_values(kLatent, 8, true);
  v.stepper.top_k = 2;  // a plain MLP has no routing
  EXPECT_TRUE(test::synthetic_bundle(v, false, error).empty());
  EXPECT_NE(error.find("stepper.config"), std::string::npos) << error;

  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 8), false, lm));
  ModelEvaluator eval;
  EXPECT_FALSE(eval.init(lm.model, 0, KernelPath::Scalar, error));
  EXPECT_NE(error.find("capacity"), std::string::npos);
  EXPECT_FALSE(eval.init(lm.model, kMaxBatchCapacity + 1, KernelPath::Scalar, error));
}

TEST(Model, LoadFileNamesTheFileAndLeavesTheLoadedModelAlone) {
  LoadedModel lm;
  ASSERT_NO_FATAL_FAILURE(load(test::random_model_values(kLatent, 9), false, lm));
  std::string error;
  EXPECT_EQ(Model::load_file("/nonexistent/model.lmmw", error), nullptr);
  EXPECT_NE(error.find("/nonexistent/model.lmmw"), std::string::npos) << error;
  EXPECT_EQ(lm.model->latent(), kLatent);  // unchanged

  const std::string path = ::testing::TempDir() + "not-a-model.lmmw";
  const std::vector<uint8_t> database = test::SyntheticDatabase().build();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(database.data()), std::streamsize(database.size()));
  EXPECT_EQ(Model::load_file(path, error), nullptr);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("LMMW"), std::string::npos) << error;
  std::remove(path.c_str());
}

// The committed version-1 bundle still loads, matches the reference, and the writer still
// produces it byte for byte (a format change must bump kModelVersion and add a new golden
// file). Regenerate with LMM_WRITE_GOLDEN=1 only together with a version bump.
TEST(Model, CommittedVersion1GoldenBundle) {
  const std::string path = std::string(LMM_TEST_SOURCE_DIR) + "/data/golden-v1.lmmw";
  const ModelValues v = test::random_model_values(kLatent, 2026);
  std::string error;
  const std::vector<uint8_t> fresh = test::synthetic_bundle(v, false, error);
  ASSERT_FALSE(fresh.empty()) << error;
  if (std::getenv("LMM_WRITE_GOLDEN") != nullptr) {
    ASSERT_TRUE(write_file_atomic(path, fresh.data(), fresh.size(), error)) << error;
  }
  const std::shared_ptr<const Model> m = Model::load_file(path, error);
  ASSERT_NE(m, nullptr) << error;
  AlignedBuffer committed;
  ASSERT_TRUE(read_file(path, committed, error)) << error;
  EXPECT_TRUE(committed.size() == fresh.size() && std::equal(fresh.begin(), fresh.end(), committed.data()))
      << "the writer no longer reproduces " << path;
  ModelEvaluator eval;
  ASSERT_TRUE(eval.init(m, 1, KernelPath::Auto, error)) << error;
  EXPECT_LT(max_error(v, *m, eval, 50), 2e-5);
}

}  // namespace
