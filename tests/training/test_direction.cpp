// DirectionNet (Lee, Kwon & Lee 2023, Sec. VI-G): golden test of the runtime GRU evaluator against
// LibTorch on every kernel path, the bundle's checks, and the training windows' frame.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "lmm/asset/direction_net.hpp"
#include "lmm/training/direction.hpp"
#include "lmm/eval/direction_evaluator.hpp"
#include "lmm/eval/kernel_support.hpp"
#include "support/allocation_counter.hpp"

using namespace lmm;
using namespace lmm::training;

namespace {

constexpr int kWindows = 64;

// The paper's shape: 30 units, 4 s at 30 Hz, 2 s predicted.
DirectionModel seeded_model() {
  torch::manual_seed(7);
  DirectionModel model(30, 120, 59, 1.0 / 30.0);
  torch::NoGradGuard no_grad;
  // Twice LibTorch's initial weights: livelier dynamics, still not chaotic (at 3x, float rounding grows to
  // 1e-4 over the 60 predicted steps in any implementation).
  for (auto& p : model->parameters()) p.mul_(2.0);
  model->input_mean.copy_(torch::tensor({0.1, 0.5, 0.0, 0.8}));
  model->input_std.copy_(torch::tensor({1.5, 2.5, 0.6, 0.4}));
  return model;
}

// Paths that wander (points) and facings that turn slowly, [B, T, 2] each.
void random_windows(int64_t window, torch::Tensor& points, torch::Tensor& facings) {
  torch::manual_seed(11);
  points = (torch::randn({kWindows, window, 2}) * 0.05 + torch::tensor({0.0, 0.04})).cumsum(1);
  const torch::Tensor angle = (torch::randn({kWindows, window}) * 0.05).cumsum(1) + torch::rand({kWindows, 1}) * 6.28;
  facings = torch::stack({torch::sin(angle), torch::cos(angle)}, 2);
}

std::shared_ptr<const DirectionNet> bundle_of(DirectionModel& model, std::vector<uint8_t>& bytes) {
  std::string error;
  EXPECT_TRUE(build_direction_bundle(direction_values(model), bytes, error)) << error;
  auto net = DirectionNet::load_buffer(bytes.data(), bytes.size(), error);
  EXPECT_NE(net, nullptr) << error;
  return net;
}

}  // namespace

TEST(DirectionGolden, RuntimeGivesLibTorchFacingsOnEveryKernelPath) {
  DirectionModel model = seeded_model();
  std::vector<uint8_t> bytes;
  const auto net = bundle_of(model, bytes);
  ASSERT_NE(net, nullptr);
  torch::Tensor points, facings;
  random_windows(net->window(), points, facings);
  torch::Tensor expected;
  {
    torch::NoGradGuard no_grad;
    model->eval();
    const torch::Tensor out = model->forward(points, facings).narrow(1, net->present() + 1, net->future_steps());
    expected = (out / out.norm(2, -1, true)).contiguous();
  }
  const torch::Tensor p = points.contiguous(), f = facings.contiguous();
  const int future = net->future_steps() * 2;
  for (KernelPath path : available_kernel_paths()) {
    SCOPED_TRACE(kernel_path_name(path));
    DirectionEvaluator evaluator;
    std::string error;
    ASSERT_TRUE(evaluator.init(net, path, error)) << error;
    double worst = 0.0;
    std::vector<float> out(size_t(future), 0.0f);
    for (int b = 0; b < kWindows; ++b) {
      const float* points_b = p.data_ptr<float>() + size_t(b) * 2 * net->window();
      const float* facings_b = f.data_ptr<float>() + size_t(b) * 2 * net->window();
      test::start_counting_allocations();
      ASSERT_TRUE(evaluator.predict(points_b, facings_b, out.data()));
      EXPECT_EQ(test::stop_counting_allocations(), 0) << "predict allocated";
      const float* want = expected.data_ptr<float>() + size_t(b) * future;
      for (int i = 0; i < future; ++i) worst = std::max(worst, double(std::fabs(out[size_t(i)] - want[i])));
    }
    EXPECT_LT(worst, 1e-4) << "largest facing difference from LibTorch";
    std::printf("[ %s ] largest facing difference from LibTorch %.2e\n", kernel_path_name(path), worst);
  }
}

TEST(DirectionGolden, NonFiniteInputsAreRefusedAndLeaveTheOutput) {
  DirectionModel model = seeded_model();
  std::vector<uint8_t> bytes;
  const auto net = bundle_of(model, bytes);
  ASSERT_NE(net, nullptr);
  DirectionEvaluator evaluator;
  std::string error;
  std::vector<float> future(size_t(2 * net->future_steps()), 7.0f);
  std::vector<float> points(size_t(2 * net->window()), 0.0f), facings(size_t(2 * (net->present() + 1)), 0.0f);
  EXPECT_FALSE(evaluator.predict(points.data(), facings.data(), future.data())) << "uninitialised";
  ASSERT_TRUE(evaluator.init(net, KernelPath::Auto, error)) << error;
  points[17] = NAN;
  EXPECT_FALSE(evaluator.predict(points.data(), facings.data(), future.data()));
  EXPECT_EQ(future[0], 7.0f);
  points[17] = 0.0f;
  facings.back() = INFINITY;
  EXPECT_FALSE(evaluator.predict(points.data(), facings.data(), future.data()));
  facings.back() = 1.0f;
  EXPECT_TRUE(evaluator.predict(points.data(), facings.data(), future.data()));
  EXPECT_NEAR(std::hypot(future[0], future[1]), 1.0, 1e-5) << "facings are unit vectors";
}

TEST(DirectionBundle, BadValuesNameTheTensor) {
  DirectionModel model = seeded_model();
  DirectionValues values = direction_values(model);
  std::vector<uint8_t> bytes;
  std::string error;
  DirectionValues wrong = values;
  wrong.hidden_weight.pop_back();
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("gru.hidden.weight"), std::string::npos) << error;
  wrong = values;
  wrong.output_bias[1] = NAN;
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("output.bias"), std::string::npos) << error;
  wrong = values;
  wrong.input_std[2] = 0.0f;
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("direction.input_std"), std::string::npos) << error;
  wrong = values;
  wrong.present = wrong.window - 1;
  EXPECT_FALSE(build_direction_bundle(wrong, bytes, error));
  EXPECT_NE(error.find("present step"), std::string::npos) << error;
  ASSERT_TRUE(build_direction_bundle(values, bytes, error)) << error;
  for (size_t cut : {size_t(10), bytes.size() / 2, bytes.size() - 1}) {
    AlignedBuffer truncated(cut);
    std::copy(bytes.begin(), bytes.begin() + long(cut), truncated.data());
    EXPECT_EQ(DirectionNet::load_buffer(truncated.data(), cut, error), nullptr) << "cut at " << cut;
  }
}

TEST(DirectionData, WindowsAreInThePresentFrameAndPadTheClipStart) {
  // A root walking along +X facing +X: in the present frame it walks along +Z, facing +Z.
  DirectionData d;
  const int64_t n = 40;
  d.root = torch::stack({torch::arange(n, torch::kFloat32) * 0.1f, torch::zeros({n})}, 1);
  d.facing = torch::tensor({1.0f, 0.0f}).repeat({n, 1});
  d.stride = 2, d.window = 8, d.present = 3;
  torch::Tensor points, facings;
  direction_windows(d, torch::tensor({4}, torch::kInt64), torch::tensor({2}, torch::kInt64), points, facings);
  // Steps -3..4 are frames -2, 0, 2, 4, 6, 8, 10, 12; those before the clip's start (2) repeat it.
  const std::vector<float> expected_z = {-0.2f, -0.2f, -0.2f, 0.0f, 0.2f, 0.4f, 0.6f, 0.8f};
  for (int t = 0; t < 8; ++t) {
    EXPECT_NEAR(points[0][t][0].item<float>(), 0.0f, 1e-6) << "step " << t;
    EXPECT_NEAR(points[0][t][1].item<float>(), expected_z[size_t(t)], 1e-6) << "step " << t;
    EXPECT_NEAR(facings[0][t][1].item<float>(), 1.0f, 1e-6) << "step " << t;
  }
}
