// Adan (Xie et al. 2022, "Adan: Adaptive Nesterov Momentum Algorithm"), the optimiser of seed
// 004 Sec. 5, as a torch::optim::Optimizer with state that saves and loads with checkpoints.
#pragma once

#include <tuple>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>

namespace lmm::training {

// Hyper-parameters; betas are the decay factors of the three moments (PyTorch convention).
struct AdanOptions : public torch::optim::OptimizerCloneableOptions<AdanOptions> {
  AdanOptions(double lr = 1e-3);  // NOLINT: implicit like torch's own options
  TORCH_ARG(double, lr) = 1e-3;
  typedef std::tuple<double, double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.98, 0.92, 0.99);
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(double, weight_decay) = 0.0;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override;
  void set_lr(const double lr) override;
};

// Per-parameter state: step count, the three moments and the previous gradient.
struct AdanParamState : public torch::optim::OptimizerCloneableParamState<AdanParamState> {
  TORCH_ARG(int64_t, step) = 0;
  TORCH_ARG(torch::Tensor, exp_avg);
  TORCH_ARG(torch::Tensor, exp_avg_diff);
  TORCH_ARG(torch::Tensor, exp_avg_sq);
  TORCH_ARG(torch::Tensor, previous_grad);

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

// The Adan optimiser. One step, with g the gradient and d = g - previous g (0 at step 1):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) d;  u = g + b2 d;  n = b3 n + (1 - b3) u^2
//   p = (p - lr (m / c1 + b2 v / c2) / (sqrt(n / c3) + eps)) / (1 + lr wd)
// with bias corrections c_i = 1 - b_i^step.
class Adan : public torch::optim::Optimizer {
 public:
  // Optimises `params` with `options`.
  explicit Adan(std::vector<torch::Tensor> params, AdanOptions options = {});
  // Applies one update from the current gradients (parameters without gradient are skipped);
  // the parameters must be contiguous float32 CPU tensors (checked).
  torch::Tensor step(LossClosure closure = nullptr) override;
  // Writes the optimiser state to `archive`.
  void save(torch::serialize::OutputArchive& archive) const override;
  // Restores the optimiser state from `archive`.
  void load(torch::serialize::InputArchive& archive) override;

 private:
  template <typename Self, typename Archive>
  static void serialize(Self& self, Archive& archive) {
    torch::optim::serialize<AdanParamState, AdanOptions>(archive, self);
  }
};

}  // namespace lmm::training
