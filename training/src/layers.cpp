#include "lmm/training/layers.hpp"

#include <chrono>
#include <cmath>
#include <string>

namespace lmm::training {
namespace {

// Inverse of softplus: log(exp(y) - 1), stable for large y.
double inverse_softplus(double y) { return y > 20.0 ? y : std::log(std::expm1(y)); }

}  // namespace

LipschitzLinearImpl::LipschitzLinearImpl(int64_t in, int64_t out) {
  torch::nn::Linear init(in, out);  // torch's default initialisation
  weight = register_parameter("weight", init->weight.detach().clone());
  bias = register_parameter("bias", init->bias.detach().clone());
  const double inf_norm = weight.abs().sum(1).max().item<double>();
  c = register_parameter("c", torch::full({1}, inverse_softplus(inf_norm)));
}

torch::Tensor LipschitzLinearImpl::bound() const { return torch::softplus(c); }

torch::Tensor LipschitzLinearImpl::normalized_weight() const {
  const torch::Tensor row_sums = weight.abs().sum(1, /*keepdim=*/true).clamp_min(1e-7);
  const torch::Tensor scale = torch::clamp_max(bound() / row_sums, 1.0);
  return weight * scale;
}

torch::Tensor LipschitzLinearImpl::forward(const torch::Tensor& x) {
  return torch::nn::functional::linear(x, normalized_weight(), bias);
}

MlpImpl::MlpImpl(int64_t in, const std::vector<int64_t>& hidden, int64_t out, bool lipschitz) {
  std::vector<int64_t> sizes{in};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(out);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const std::string name = "layer" + std::to_string(i);
    if (lipschitz) {
      lipschitz_.push_back(register_module(name, LipschitzLinear(sizes[i], sizes[i + 1])));
    } else {
      linear_.push_back(register_module(name, torch::nn::Linear(sizes[i], sizes[i + 1])));
    }
  }
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  const size_t n = lipschitz_.empty() ? linear_.size() : lipschitz_.size();
  for (size_t i = 0; i < n; ++i) {
    x = lipschitz_.empty() ? linear_[i]->forward(x) : lipschitz_[i]->forward(x);
    if (i + 1 < n) x = torch::gelu(x);
  }
  return x;
}

torch::Tensor MlpImpl::lipschitz_product() const {
  torch::Tensor product = torch::ones({1});
  for (const LipschitzLinear& layer : lipschitz_) product = product * layer->bound();
  return product;
}

int64_t MlpImpl::macs() const {
  int64_t total = 0;
  for (const auto& l : linear_) total += l->weight.numel();
  for (const auto& l : lipschitz_) total += l->weight.numel();
  return total;
}

std::vector<std::pair<torch::Tensor, torch::Tensor>> MlpImpl::effective_layers() const {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> layers;
  for (const auto& l : linear_) layers.emplace_back(l->weight, l->bias);
  for (const auto& l : lipschitz_) layers.emplace_back(l->normalized_weight(), l->bias);
  return layers;
}

SmoeImpl::SmoeImpl(int64_t in, int64_t experts, const std::vector<int64_t>& hidden, int64_t out, int64_t top_k)
    : top_k_(top_k), out_(out) {
  TORCH_CHECK(experts >= top_k && top_k >= 1, "SMoE needs at least top_k experts");
  gate_ = register_module("gate", torch::nn::Linear(in, experts));
  for (int64_t e = 0; e < experts; ++e) {
    experts_.push_back(register_module("expert" + std::to_string(e), Mlp(in, hidden, out, false)));
  }
}

std::pair<torch::Tensor, torch::Tensor> SmoeImpl::route(const torch::Tensor& x) {
  const torch::Tensor probabilities = torch::softmax(gate_->forward(x), -1);
  auto [top, index] = probabilities.topk(top_k_, -1);
  const torch::Tensor weights = top / top.sum(-1, /*keepdim=*/true);  // Eq. 3 renormalisation
  // Eq. 17: KL divergence of the mean routing distribution from the uniform one.
  torch::Tensor mean = probabilities.mean(0);
  if (batch_mean_) mean = mean + (batch_mean_(mean.detach(), x.size(0)) - mean).detach();  // value global, gradient local
  const double experts = double(experts_.size());
  stats_.load_balance = (mean * (mean * experts).clamp_min(1e-12).log()).sum();
  {
    torch::NoGradGuard no_grad;
    stats_.utilisation = torch::zeros({int64_t(experts_.size())});
    stats_.utilisation.index_add_(0, index.reshape(-1), torch::ones({index.numel()}));
    stats_.utilisation /= double(x.size(0));
  }
  // Eq. 14-16 with f_i over the top-k routes (Eq. 15 counts the top-1 only); f_i carries no gradient.
  stats_.dispatch_balance = experts * (stats_.utilisation / double(top_k_) * mean).sum();
  return {weights, index};
}

torch::Tensor SmoeImpl::forward(const torch::Tensor& x) {
  auto [weights, index] = route(x);
  // The B x k (row, expert) pairs sorted by expert (stable: rows ascending within an expert), so
  // that one gather makes every expert's rows one contiguous slice and one index_add sums the
  // weighted outputs back into their rows.
  const torch::Tensor experts_of_pairs = index.reshape(-1);
  const auto [sorted_experts, order] = experts_of_pairs.sort(/*stable=*/true, 0, false);
  const torch::Tensor rows = order.div(index.size(1), "floor");
  const torch::Tensor counts = torch::bincount(experts_of_pairs, {}, int64_t(experts_.size()));
  const torch::Tensor sorted_rows = x.index_select(0, rows);
  const int64_t largest = counts.max().item<int64_t>();
  stats_.padded = largest * int64_t(experts_.size()) <= kMaxPadding * index.numel();
  const torch::Tensor outputs =
      stats_.padded ? padded_expert_outputs(sorted_rows, sorted_experts, counts, largest)
                    : grouped_expert_outputs(sorted_rows, counts);
  const torch::Tensor weighted = outputs * weights.reshape({-1, 1}).index_select(0, order);
  return torch::zeros({x.size(0), out_}, x.options()).index_add(0, rows, weighted);
}

torch::Tensor SmoeImpl::grouped_expert_outputs(const torch::Tensor& sorted_rows, const torch::Tensor& counts) {
  const std::vector<int64_t> sizes(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
  const std::vector<torch::Tensor> groups = sorted_rows.split_with_sizes(sizes);
  std::vector<torch::Tensor> outputs;
  for (size_t e = 0; e < groups.size(); ++e) {
    if (sizes[e] > 0) outputs.push_back(experts_[e]->forward(groups[e]));
  }
  return torch::cat(outputs);
}

torch::Tensor SmoeImpl::padded_expert_outputs(const torch::Tensor& sorted_rows, const torch::Tensor& sorted_experts,
                                              const torch::Tensor& counts, int64_t largest) {
  // Each pair's slot in an [experts, largest] grid; empty slots stay zero and are never read.
  const int64_t experts = int64_t(experts_.size()), pairs = sorted_rows.size(0);
  const torch::Tensor first_pair_of_expert = counts.cumsum(0) - counts;
  const torch::Tensor slots = sorted_experts * largest + torch::arange(pairs, counts.options()) -
                              first_pair_of_expert.index_select(0, sorted_experts);
  torch::Tensor h = torch::zeros({experts * largest, sorted_rows.size(1)}, sorted_rows.options())
                        .index_copy(0, slots, sorted_rows)
                        .view({experts, largest, sorted_rows.size(1)});
  const std::vector<std::pair<torch::Tensor, torch::Tensor>> layers = stacked_expert_layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    h = torch::baddbmm(layers[l].second, h, layers[l].first);
    if (l + 1 < layers.size()) h = torch::gelu(h);
  }
  return h.view({experts * largest, out_}).index_select(0, slots);
}

std::vector<std::pair<torch::Tensor, torch::Tensor>> SmoeImpl::stacked_expert_layers() const {
  std::vector<std::vector<torch::Tensor>> weights, biases;
  for (const Mlp& expert : experts_) {
    const auto layers = expert->effective_layers();
    weights.resize(layers.size());
    biases.resize(layers.size());
    for (size_t l = 0; l < layers.size(); ++l) {
      weights[l].push_back(layers[l].first);
      biases[l].push_back(layers[l].second);
    }
  }
  std::vector<std::pair<torch::Tensor, torch::Tensor>> stacked;
  for (size_t l = 0; l < weights.size(); ++l) {
    stacked.emplace_back(torch::stack(weights[l]).transpose(1, 2), torch::stack(biases[l]).unsqueeze(1));
  }
  return stacked;
}

torch::Tensor SmoeImpl::forward_dense(const torch::Tensor& x) {
  auto [weights, index] = route(x);
  stats_.padded = false;
  std::vector<torch::Tensor> all;
  for (auto& expert : experts_) all.push_back(expert->forward(x));
  const torch::Tensor stacked = torch::stack(all, 1);  // [B, E, out]
  const torch::Tensor picked = stacked.gather(1, index.unsqueeze(-1).expand({-1, -1, out_}));
  return (picked * weights.unsqueeze(-1)).sum(1);
}

int64_t SmoeImpl::macs() const {
  return gate_->weight.numel() + top_k_ * experts_.front()->macs();
}

SmoeThroughput measure_smoe_throughput(int64_t in, int64_t experts, const std::vector<int64_t>& hidden,
                                       int64_t out, int64_t batch, int repetitions) {
  Smoe smoe(in, experts, hidden, out, 2);
  const torch::Tensor x = torch::randn({batch, in});
  auto rate = [&](bool dense) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repetitions; ++r) {
      smoe->zero_grad();
      (dense ? smoe->forward_dense(x) : smoe->forward(x)).pow(2).mean().backward();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return double(batch) * repetitions / seconds;
  };
  rate(false);  // warm-up
  SmoeThroughput t;
  t.grouped_samples_per_s = rate(false);
  t.dense_samples_per_s = rate(true);
  return t;
}

}  // namespace lmm::training
