#include "training_metrics.hpp"

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "trainer_data.hpp"

namespace lmm::training::detail {

void add_expert_use(const Network& net, int64_t rows, torch::Tensor& total) {
  if (!net || !net->utilisation().defined()) return;
  const torch::Tensor taken = net->utilisation() * double(rows);
  total = total.defined() ? total + taken : taken;
}

void report_expert_use(const torch::Tensor& total, TrainReport& report) {
  if (!total.defined()) return;
  const double uniform = total.sum().item<double>() / double(total.numel());
  if (!(uniform > 0.0)) return;
  report.metrics["expert_use_min"] = total.min().item<double>() / uniform;
  report.metrics["expert_use_max"] = total.max().item<double>() / uniform;
}

void decoder_metrics(const PoseData& d, Autoencoder& ae, const torch::Tensor& x, TrainReport& report) {
  torch::NoGradGuard no_grad;
  ae->eval();
  std::vector<torch::Tensor> errors;
  torch::Tensor expert_use;
  const int64_t n = x.size(0);
  for (int64_t s = 0; s < n; s += 4096) {
    const int64_t b = std::min<int64_t>(4096, n - s);
    const torch::Tensor z = ae->encoder->forward(x.narrow(0, s, b));
    const torch::Tensor pose = denormalize(d, ae->decoder->forward(torch::cat({z, d.features.narrow(0, s, b)}, 1)));
    add_expert_use(ae->decoder, b, expert_use);
    errors.push_back((pose_to_model_positions(d, pose) - d.model_positions.narrow(0, s, b)).norm(2, -1).reshape(-1));
  }
  report_expert_use(expert_use, report);
  const torch::Tensor all = torch::cat(errors) * 100.0;
  report.metrics["mean_joint_error_cm"] = all.mean().item<double>();
  // kthvalue: torch::quantile refuses inputs over 2^24 elements (large databases).
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(0.95 * double(all.numel()))));
  report.metrics["p95_joint_error_cm"] = std::get<0>(all.kthvalue(k)).item<double>();
  ae->train();
}

torch::Tensor rollout_starts(const Database& db, int64_t length) {
  std::vector<int64_t> starts;
  for (const DatabaseRange& r : db.ranges()) {
    for (int64_t f = r.start; f + length < r.stop; ++f) starts.push_back(f);
  }
  return torch::tensor(starts, torch::kInt64);
}

torch::Tensor rolled_out(Stepper& stepper, torch::Tensor s, int64_t frames) {
  torch::NoGradGuard no_grad;
  for (int64_t n = 0; n < frames; ++n) s = s + stepper->forward(s);
  return s;
}

double rollout_error_cm(const Database& db, const PoseData& d, Autoencoder& ae, Stepper& stepper,
                        const torch::Tensor& state, int64_t frames) {
  const torch::Tensor candidates = rollout_starts(db, frames);
  if (candidates.numel() == 0) return NAN;
  torch::NoGradGuard no_grad;
  std::mt19937 rng(12345);
  std::vector<int64_t> picks;
  for (int i = 0; i < 1000; ++i) picks.push_back(candidates[int64_t(rng() % uint64_t(candidates.numel()))].item<int64_t>());
  const torch::Tensor starts = torch::tensor(picks, torch::kInt64);
  stepper->eval();
  const torch::Tensor s = rolled_out(stepper, state.index_select(0, starts), frames);
  stepper->train();
  const torch::Tensor pose = denormalize(d, ae->decode_state(s));
  const torch::Tensor truth = d.model_positions.index_select(0, starts + frames);
  return (pose_to_model_positions(d, pose) - truth).norm(2, -1).mean().item<double>() * 100.0;
}

}  // namespace lmm::training::detail
