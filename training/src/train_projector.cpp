#include "lmm/training/trainer.hpp"

#include "data_parallel.hpp"
#include "lmm/training/flat_index.hpp"
#include "trainer_data.hpp"
#include "training_loop.hpp"
#include "training_metrics.hpp"

namespace lmm::training {

TrainReport train_projector(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.projector);
  detail::LatentSetup setup = detail::latent_setup(c, db, o);
  const torch::Tensor& state = setup.state;
  const torch::Tensor& features = setup.d.features;
  const int64_t dims = state.size(1), latent = c.latent, n = features.size(0);
  Projector projector(features.size(1), dims, c.projector);
  {
    torch::NoGradGuard no_grad;
    projector->state_mean.copy_(state.mean(0));
    projector->state_std.copy_(state.std(0).clamp_min(1e-4));
  }
  const torch::Tensor contiguous = features.contiguous();
  const FlatIndex index(contiguous.data_ptr<float>(), n, features.size(1));
  // Noisy queries and the exact nearest frame of each (Sec. 5.6, Eq. 26-31): `shard`'s rows of a
  // batch of shard.global queries, labelled here.
  auto noisy_batch = [&](const BatchShard& shard, torch::Tensor& query, torch::Tensor& nearest) {
    const int64_t count = shard.global;
    const torch::Tensor f = torch::randint(n, {count}, torch::kInt64);
    query = shard.take(features.index_select(0, f) + torch::rand({count, 1}) * torch::randn({count, features.size(1)})).contiguous();
    nearest = torch::empty({shard.count}, torch::kInt64);
    index.nearest_batch(query.data_ptr<float>(), shard.count, nearest.data_ptr<int64_t>(), c.threads);
  };
  const BatchShard shard = detail::shard_of(o, c.batch);
  LoopSpec spec;
  spec.model = "projector";
  spec.net = projector.ptr().get();
  spec.routed = projector->net;
  spec.samples_per_step = c.batch;
  spec.batch_share = shard.share();
  spec.step = [&]() -> Terms {
    torch::Tensor query, nearest;
    noisy_batch(shard, query, nearest);
    const torch::Tensor target = state.index_select(0, nearest);
    const torch::Tensor predicted = projector->forward(query);
    const torch::Tensor feature_loss = (predicted.narrow(1, latent, dims - latent) - target.narrow(1, latent, dims - latent)).abs().mean();
    const torch::Tensor latent_loss = (predicted.narrow(1, 0, latent) - target.narrow(1, 0, latent)).abs().mean();
    const torch::Tensor distance = ((target.narrow(1, latent, dims - latent) - query).pow(2).sum(1) -
                                    (predicted.narrow(1, latent, dims - latent) - query).pow(2).sum(1)).abs().mean();
    const torch::Tensor balance = projector->net->load_balance(c.balance);
    const torch::Tensor total = c.w_projector_features * feature_loss + c.w_projector_latent * latent_loss +
                                c.w_projector_distance * distance + c.w_load_balance * balance;
    return {{"total", total}, {"features", feature_loss}, {"latent", latent_loss}, {"query_distance", distance},
            {"load_balance", balance}};
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (!detail::is_leader(o)) return report;
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(777);
    torch::Tensor query, nearest;
    noisy_batch(BatchShard{1000, 0, 1000}, query, nearest);
    projector->eval();
    const torch::Tensor projected = projector->forward(query).narrow(1, latent, dims - latent);
    const double ours = (projected - query).norm(2, 1).mean().item<double>();
    const double exact = (features.index_select(0, nearest) - query).norm(2, 1).mean().item<double>();
    report.metrics["projector_feature_error"] = ours / exact;
    report.metrics["projector_latent_error"] = (projector->forward(query).narrow(1, 0, latent) -
                                                setup.state.index_select(0, nearest).narrow(1, 0, latent)).abs().mean().item<double>();
  }
  detail::report_expert_use_over(
      projector->net, features, [&](const torch::Tensor& rows) { projector->forward(rows); }, report);
  return report;
}

}  // namespace lmm::training
