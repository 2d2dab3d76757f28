// Building blocks of the learned models (Kleanthous & Martini 2023 Sec. 3): the Lipschitz-bounded linear layer,
// the sparse mixture of experts with top-2 routing, and plain MLPs.
#pragma once

#include <functional>
#include <vector>

#include <torch/torch.h>

namespace lmm::training {

// Linear layer whose Lipschitz bound (infinity norm) is a learnable c (Kleanthous & Martini 2023 Eq. 4-7):
// W' = W * min(softplus(c) / max(sum_j |W_ij|, 1e-7), 1) row-wise; c starts at the value whose
// softplus is the infinity norm of the initial W.
class LipschitzLinearImpl : public torch::nn::Module {
 public:
  LipschitzLinearImpl(int64_t in, int64_t out);
  // y = x W'^T + b.
  torch::Tensor forward(const torch::Tensor& x);
  // The effective (normalised) weight W'.
  torch::Tensor normalized_weight() const;
  // softplus(c), this layer's Lipschitz bound (its product over layers is the Lipschitz loss).
  torch::Tensor bound() const;
  // Plain linear layer parameters (W, b) and the bound parameter c.
  torch::Tensor weight, bias, c;
};
TORCH_MODULE(LipschitzLinear);

// A stack of Linear (or LipschitzLinear) + GELU layers with a final linear layer.
class MlpImpl : public torch::nn::Module {
 public:
  // Layers in -> hidden[0] -> ... -> out; GELU after every layer but the last.
  MlpImpl(int64_t in, const std::vector<int64_t>& hidden, int64_t out, bool lipschitz);
  // Runs the stack.
  torch::Tensor forward(torch::Tensor x);
  // Product of the Lipschitz bounds of its LipschitzLinear layers (1 when there are none).
  torch::Tensor lipschitz_product() const;
  // Number of multiply-accumulates per sample.
  int64_t macs() const;
  // Each layer's effective weight [out, in] (Lipschitz scale folded in) and bias, in order.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> effective_layers() const;

 private:
  std::vector<torch::nn::Linear> linear_;
  std::vector<LipschitzLinear> lipschitz_;
};
TORCH_MODULE(Mlp);

// Routing statistics of the last SMoE forward pass.
struct RoutingStats {
  torch::Tensor load_balance;   // KL(mean gate probabilities || uniform), Kleanthous & Martini 2023 Eq. 17
  torch::Tensor dispatch_balance;  // N sum_i f_i P_i (Eq. 14 without alpha), f_i the share of the top-k routes
  torch::Tensor utilisation;    // [experts] fraction of samples routed to each expert (no grad)
  bool padded = false;          // the experts ran as one batched matmul per layer (SmoeImpl::forward)
};

// Sparse mixture of experts (Kleanthous & Martini 2023 Sec. 3.1, Eq. 2-3): a linear gate, softmax, the two
// largest probabilities renormalised to sum to one, and the weighted sum of those two experts'
// outputs. Each expert runs only on the samples routed to it; the second expert is never dropped.
class SmoeImpl : public torch::nn::Module {
 public:
  SmoeImpl(int64_t in, int64_t experts, const std::vector<int64_t>& hidden, int64_t out, int64_t top_k);
  // Routed forward pass; fills last_stats(). The rows are grouped by expert. While the largest
  // group is at most kMaxPadding times the mean, every group is padded to the largest and each layer
  // runs as one batched matmul over all experts (fewer, larger operations;
  // docs/benchmarks-training.md#training-throughput); otherwise each expert runs on its own group.
  torch::Tensor forward(const torch::Tensor& x);
  // The padding (grid rows over routed rows) up to which forward() batches the experts.
  static constexpr int64_t kMaxPadding = 4;
  // Every expert on every sample, then the same routing (reference for tests and benchmarks).
  torch::Tensor forward_dense(const torch::Tensor& x);
  // Statistics of the last forward pass.
  const RoutingStats& last_stats() const { return stats_; }
  // Multiply-accumulates per sample with top-k routing.
  int64_t macs() const;
  int64_t experts() const { return static_cast<int64_t>(experts_.size()); }
  // Experts per sample.
  int64_t top_k() const { return top_k_; }
  // The gating layer.
  torch::nn::Linear gate() const { return gate_; }
  // Expert `e`.
  Mlp expert(int64_t e) const { return experts_[size_t(e)]; }
  // The mean over the whole batch of a [experts] per-sample mean over this process's `rows` samples
  // (data-parallel training, where each rank holds a share of the batch). Null: the batch is all here.
  using BatchMean = std::function<torch::Tensor(const torch::Tensor& local_mean, int64_t rows)>;
  // Makes the load-balancing loss use the whole batch's mean routing distribution (its gradient
  // still flows through this process's samples only); null restores the local mean.
  void set_batch_mean(BatchMean batch_mean) { batch_mean_ = std::move(batch_mean); }

 private:
  std::pair<torch::Tensor, torch::Tensor> route(const torch::Tensor& x);
  // The experts' outputs for `sorted_rows` (the routed rows, grouped by expert: counts[e] rows of
  // expert e), one group after the other.
  torch::Tensor grouped_expert_outputs(const torch::Tensor& sorted_rows, const torch::Tensor& counts);
  // The same outputs, every group padded to `largest` rows and each layer one batched matmul.
  torch::Tensor padded_expert_outputs(const torch::Tensor& sorted_rows, const torch::Tensor& sorted_experts,
                                      const torch::Tensor& counts, int64_t largest);
  // Every expert's layer l as ([experts, in, out] weights, [experts, 1, out] biases), for baddbmm.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> stacked_expert_layers() const;
  torch::nn::Linear gate_{nullptr};
  std::vector<Mlp> experts_;
  int64_t top_k_ = 2;
  int64_t out_ = 0;
  RoutingStats stats_;
  BatchMean batch_mean_;
};
TORCH_MODULE(Smoe);

// Training throughput (forward + backward samples per second) of one SMoE layer with routed
// (grouped) experts and with every expert on every sample, on random inputs.
struct SmoeThroughput {
  double grouped_samples_per_s = 0.0;
  double dense_samples_per_s = 0.0;
};

// Measures SmoeThroughput for an SMoE of the given shape over `repetitions` batches.
SmoeThroughput measure_smoe_throughput(int64_t in, int64_t experts, const std::vector<int64_t>& hidden,
                                       int64_t out, int64_t batch, int repetitions);

}  // namespace lmm::training
