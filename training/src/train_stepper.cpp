#include "lmm/training/trainer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "data_parallel.hpp"
#include "lmm/training/pose_data.hpp"
#include "trainer_data.hpp"
#include "training_loop.hpp"
#include "training_metrics.hpp"

namespace lmm::training {

TrainReport train_stepper(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.stepper);
  detail::LatentSetup setup = detail::latent_setup(c, db, o);
  const torch::Tensor& state = setup.state;
  const int64_t dims = state.size(1), latent = c.latent;
  const int64_t longest = c.free_rollout + c.rollout;
  const torch::Tensor starts = detail::rollout_starts(db, longest);
  if (starts.numel() == 0) {
    throw std::runtime_error("no clip is longer than the rollout of " + std::to_string(longest) + " frames (" +
                             std::to_string(c.free_rollout) + " free, " + std::to_string(c.rollout) + " trained)");
  }
  Stepper stepper(dims, c.stepper);
  const torch::Tensor deltas = state.narrow(0, 1, state.size(0) - 1) - state.narrow(0, 0, state.size(0) - 1);
  const torch::Tensor state_std = state.std(0).clamp_min(1e-4);
  {
    torch::NoGradGuard no_grad;
    stepper->delta_scale.copy_(deltas.index_select(0, setup.d.pair_starts).std(0).clamp_min(1e-5));
    if (c.stepper.normalize_input) {
      stepper->input_mean.copy_(state.mean(0));
      stepper->input_std.copy_(state_std);
    }
  }
  // Latent dimensions weigh twice the feature dimensions (Sec. 5.9).
  const torch::Tensor weights = torch::cat({torch::full({latent}, 2.0), torch::ones({dims - latent})});
  const torch::Tensor offsets = torch::arange(c.rollout + 1, torch::kInt64);
  LoopSpec spec;
  spec.model = "stepper";
  spec.net = stepper.ptr().get();
  spec.routed = stepper->net;
  spec.samples_per_step = c.batch * c.rollout;
  const BatchShard shard = detail::shard_of(o, c.batch);  // every rank draws the global batch and takes its rows
  spec.batch_share = shard.share();
  spec.step = [&]() -> Terms {
    const torch::Tensor start = starts.index_select(0, shard.take(torch::randint(starts.size(0), {c.batch}, torch::kInt64)));
    const int64_t free = c.free_rollout > 0 ? torch::randint(c.free_rollout + 1, {1}, torch::kInt64).item<int64_t>() : 0;
    torch::Tensor s = detail::rolled_out(
        stepper, state.index_select(0, start) + shard.take(torch::randn({c.batch, dims})) * (c.start_noise * state_std), free);
    const torch::Tensor f = start + free;  // the trained rollout's first frame
    const torch::Tensor frames = (f.unsqueeze(1) + offsets.unsqueeze(0)).reshape(-1);
    const torch::Tensor truth = state.index_select(0, frames).reshape({shard.count, c.rollout + 1, dims});
    torch::Tensor values = torch::zeros({}), changes = torch::zeros({}), balance = torch::zeros({});
    std::vector<torch::Tensor> decoded_states, decoded_frames;
    for (int64_t n = 0; n < c.rollout; ++n) {
      const torch::Tensor delta = stepper->forward(s);
      const torch::Tensor next = s + delta;
      const torch::Tensor target = truth.select(1, n + 1);
      values = values + (((next - target) / state_std).pow(2) * weights).mean();
      changes = changes + (((delta - (target - truth.select(1, n))) / stepper->delta_scale).pow(2) * weights).mean();
      balance = balance + stepper->net->load_balance(c.balance);
      if (c.w_stepper_pose > 0.0 && (n + 1) % c.stepper_pose_every == 0) {
        decoded_states.push_back(next);
        decoded_frames.push_back(f + (n + 1));
      }
      s = next;
    }
    values = values / double(c.rollout);
    changes = changes / double(c.rollout);
    balance = balance / double(c.rollout);
    Terms terms{{"total", values + changes + c.w_load_balance * balance}, {"values", values}, {"deltas", changes},
                {"load_balance", balance}};
    if (!decoded_states.empty()) {  // the decoded-pose term, when the preset weighs it
      const torch::Tensor decoded =
          detail::denormalize(setup.d, setup.ae->decode_state(torch::cat(decoded_states, 0)));
      const torch::Tensor truth_positions = setup.d.model_positions.index_select(0, torch::cat(decoded_frames, 0));
      const torch::Tensor pose_cm = (pose_to_model_positions(setup.d, decoded) - truth_positions).norm(2, -1).mean() * 100.0;
      terms.front().second = terms.front().second + c.w_stepper_pose * pose_cm;
      terms.emplace_back("pose_cm", pose_cm);
    }
    return terms;
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (!detail::is_leader(o)) return report;
  const int64_t fps = int64_t(std::lround(setup.d.fps));
  report.metrics["rollout_error_cm_0.5s"] = detail::rollout_error_cm(db, setup.d, setup.ae, stepper, state, fps / 2);
  report.metrics["rollout_error_cm_2s"] = detail::rollout_error_cm(db, setup.d, setup.ae, stepper, state, 2 * fps);
  stepper->eval();
  detail::report_expert_use_over(
      stepper->net, state, [&](const torch::Tensor& rows) { stepper->forward(rows); }, report);
  return report;
}

}  // namespace lmm::training
