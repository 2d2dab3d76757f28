#include "lmm/training/trainer.hpp"

#include <utility>

#include "data_parallel.hpp"
#include "lmm/asset/model.hpp"
#include "lmm/training/flat_index.hpp"
#include "lmm/training/tag_targets.hpp"
#include "trainer_data.hpp"
#include "training_loop.hpp"
#include "training_metrics.hpp"

namespace lmm::training {
namespace {

// A batch of projector training rows: noisy queries, their constraints and constraint codes (no
// columns without tags), and the nearest allowed frame of each.
struct ProjectorBatch {
  torch::Tensor query, constraints, input, nearest;
};

// The exact labels of projector queries: the nearest frame, or with tags the nearest frame the
// query's constraint allows.
class ProjectorLabels {
 public:
  // Over `features`, with each frame's `masks` of the `tags` tags and its `starts` (action_start_bits)
  // of the action tags `actions` (indices into the tags).
  // Queries whose constraint requires no tag exclude the tags `kept_out` (kept_out_tags).
  ProjectorLabels(const torch::Tensor& features, const std::vector<TagMask>& masks, const std::vector<TagMask>& starts,
                  int64_t tags, std::vector<int64_t> actions, TagMask kept_out)
      : tags_(tags), actions_(std::move(actions)), kept_out_(kept_out), all_(features.contiguous()) {
    if (tags == 0) {
      index_ = std::make_unique<FlatIndex>(all_.data_ptr<float>(), all_.size(0), all_.size(1));
      return;
    }
    std::vector<TagMask> with_starts(masks);
    for (size_t f = 0; f < with_starts.size(); ++f) with_starts[f] |= starts[f] << tags;
    constrained_ = std::make_unique<ConstrainedNearest>(all_, with_starts);
  }
  // Noisy queries around random frames (Sec. 5.6, Eq. 26-31), a share `constrained_share` of them
  // under a random constraint: `shard`'s rows of a batch of shard.global, labelled here.
  ProjectorBatch draw(const BatchShard& shard, double constrained_share, int threads) const {
    const int64_t count = shard.global, dims = all_.size(1);
    const torch::Tensor f = torch::randint(all_.size(0), {count}, torch::kInt64);
    ProjectorBatch b;
    b.query = shard.take(all_.index_select(0, f) + torch::rand({count, 1}) * torch::randn({count, dims})).contiguous();
    if (tags_ == 0) {
      b.input = b.query;
      b.nearest = torch::empty({shard.count}, torch::kInt64);
      index_->nearest_batch(b.query.data_ptr<float>(), shard.count, b.nearest.data_ptr<int64_t>(), threads);
      return b;
    }
    b.constraints = shard.take(constrained_->random_constraints(count, tags_, actions_, constrained_share, kept_out_));
    b.input = torch::cat({b.query, constraint_codes(b.constraints, tags_, int64_t(actions_.size()))}, 1);
    b.nearest = constrained_->nearest(b.query, b.constraints, threads);
    return b;
  }

 private:
  int64_t tags_;
  std::vector<int64_t> actions_;
  TagMask kept_out_;
  torch::Tensor all_;
  std::unique_ptr<FlatIndex> index_;                // without tags
  std::unique_ptr<ConstrainedNearest> constrained_;  // with tags
};

// How far predicted tag values (0/1 targets) are on the wrong side of their margin: below
// 1 - kTagMargin for a tag the target has, above kTagMargin for one it lacks (0 once both hold:
// read at one half, such a tag is right).
constexpr double kTagMargin = 0.25;
torch::Tensor tag_margin_loss(const torch::Tensor& predicted, const torch::Tensor& target) {
  return (torch::relu((1.0 - kTagMargin) - predicted) * target + torch::relu(predicted - kTagMargin) * (1.0 - target)).mean();
}

// How far predicted tag values are from satisfying their rows' constraints (sets [count, 3, tags]
// from the constraint code) by kTagMargin: a required tag below 1 - margin, the best of a required-any
// set below it, an excluded tag above margin. Unlike tag_margin_loss it does not care which
// allowed frame the tags are of: where the nearest allowed frame could have either of two tags,
// regressing to one of them halves both, while this asks for one of them whole.
torch::Tensor constraint_margin_loss(const torch::Tensor& predicted, const torch::Tensor& sets) {
  const torch::Tensor require = sets.select(1, 0), any = sets.select(1, 1), exclude = sets.select(1, 2);
  const torch::Tensor short_of = torch::relu((1.0 - kTagMargin) - predicted);
  const torch::Tensor best_of_any = (predicted - (1.0 - any) * 1e6).amax(1);
  const torch::Tensor any_loss = torch::relu((1.0 - kTagMargin) - best_of_any) * (any.sum(1) > 0).to(torch::kFloat32);
  return ((short_of * require).sum(1) + any_loss + (torch::relu(predicted - kTagMargin) * exclude).sum(1)).mean();
}

// Mean distance of the projected features from the queries over that of the exact nearest
// allowed frames' (1 = as close as exact matching).
double feature_error_ratio(const torch::Tensor& projected, const torch::Tensor& exact, const torch::Tensor& query) {
  return (projected - query).norm(2, 1).mean().item<double>() / (exact - query).norm(2, 1).mean().item<double>();
}

// The projector's held-out style figures on 1,000 fresh queries: feature error ratio and latent
// error unconstrained, and with tags the same under random constraints and the share of
// constrained projections whose tags (over one half) satisfy their constraint.
void report_projection_quality(Projector& projector, const ProjectorLabels& labels, const torch::Tensor& state,
                               int64_t latent, int64_t features, int64_t tags, int threads, TrainReport& report) {
  torch::NoGradGuard no_grad;
  projector->eval();
  for (const bool constrained : {false, true}) {
    if (constrained && tags == 0) break;
    torch::manual_seed(777);
    const ProjectorBatch b = labels.draw(BatchShard{1000, 0, 1000}, constrained ? 1.0 : 0.0, threads);
    const torch::Tensor predicted = projector->forward(b.input);
    const torch::Tensor target = state.index_select(0, b.nearest);
    const std::string suffix = constrained ? "_constrained" : "";
    report.metrics["projector_feature_error" + suffix] =
        feature_error_ratio(predicted.narrow(1, latent, features), target.narrow(1, latent, features), b.query);
    report.metrics["projector_latent_error" + suffix] =
        (predicted.narrow(1, 0, latent) - target.narrow(1, 0, latent)).abs().mean().item<double>();
    if (!constrained) continue;
    const torch::Tensor held = (predicted.narrow(1, latent + features, tags) > 0.5).contiguous();
    int64_t satisfied = 0;
    for (int64_t r = 0; r < held.size(0); ++r) {
      TagMask mask = 0;
      for (int64_t t = 0; t < tags; ++t) mask |= held.data_ptr<bool>()[r * tags + t] ? TagMask(1) << t : 0;
      satisfied += tag_constraint_of_row(b.constraints.data_ptr<int64_t>() + 3 * r, tags).allows(mask) ? 1 : 0;
    }
    report.metrics["projector_constraint_agreement"] = double(satisfied) / double(held.size(0));
  }
}

}  // namespace

TrainReport train_projector(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.projector);
  detail::LatentSetup setup = detail::latent_setup(c, db, o);
  const torch::Tensor& state = setup.state;
  const torch::Tensor& features = setup.d.features;
  const int64_t dims = state.size(1), latent = c.latent, f = features.size(1), tags = int64_t(c.tags.size());
  const int64_t inputs = f + constraint_code_width(c);
  Projector projector(inputs, dims, c.projector);
  {
    torch::NoGradGuard no_grad;
    projector->state_mean.copy_(state.mean(0));
    projector->state_std.copy_(state.std(0).clamp_min(1e-4));
    // 0/1 tags centred on one half, unit network outputs apart: standardised by their own spread, a
    // rare tag (0.4% of the frames) would need outputs of about 16 to be set, and was set too seldom.
    projector->state_mean.narrow(0, latent + f, tags).fill_(0.5);
    projector->state_std.narrow(0, latent + f, tags).fill_(0.5);
  }
  const ProjectorLabels labels(features, setup.tag_masks, action_start_bits(db, c.actions), tags, action_indices(c),
                              kept_out_tags(c));
  const BatchShard shard = detail::shard_of(o, c.batch);
  LoopSpec spec;
  spec.model = "projector";
  spec.net = projector.ptr().get();
  spec.routed = projector->net;
  spec.samples_per_step = c.batch;
  spec.batch_share = shard.share();
  spec.step = [&]() -> Terms {
    const ProjectorBatch b = labels.draw(shard, c.constrained_share, c.threads);
    const torch::Tensor target = state.index_select(0, b.nearest);
    const torch::Tensor predicted = projector->forward(b.input);
    // Features and tags (Sec. 5.6's feature term), latent, and the query distance of the features.
    const torch::Tensor feature_loss = (predicted.narrow(1, latent, dims - latent) - target.narrow(1, latent, dims - latent)).abs().mean();
    const torch::Tensor latent_loss = (predicted.narrow(1, 0, latent) - target.narrow(1, 0, latent)).abs().mean();
    const torch::Tensor distance = ((target.narrow(1, latent, f) - b.query).pow(2).sum(1) -
                                    (predicted.narrow(1, latent, f) - b.query).pow(2).sum(1)).abs().mean();
    const torch::Tensor balance = projector->net->load_balance(c.balance);
    torch::Tensor total = c.w_projector_features * feature_loss + c.w_projector_latent * latent_loss +
                          c.w_projector_distance * distance + c.w_load_balance * balance;
    Terms terms{{"total", total}, {"features", feature_loss}, {"latent", latent_loss}, {"query_distance", distance},
                {"load_balance", balance}};
    if (tags > 0) {
      const torch::Tensor predicted_tags = predicted.narrow(1, latent + f, tags);
      const torch::Tensor held = tag_margin_loss(predicted_tags, target.narrow(1, latent + f, tags));
      // The code's require / any / exclude columns (Model::constraint_code's layout) as [count, 3, tags].
      const torch::Tensor sets = b.input.narrow(1, f, kConstraintCodeWidth * tags)
                                     .reshape({-1, tags, kConstraintCodeWidth})
                                     .transpose(1, 2);
      const torch::Tensor satisfied = constraint_margin_loss(predicted_tags, sets);
      // The action tags' seconds left, in seconds: as a share of the features term alone too small
      // to enter a rare action's run where it starts (bow, 0.4% of the frames: 2.3 s into a 4.6 s run).
      const int64_t actions = int64_t(c.actions.size());
      const torch::Tensor seconds = actions == 0 ? torch::zeros({}) : (predicted.narrow(1, latent + f + tags, actions) -
                                                                       target.narrow(1, latent + f + tags, actions)).abs().mean();
      terms.front().second = total + c.w_projector_tags * (held + satisfied + seconds);
      terms.emplace_back("tags", held);
      terms.emplace_back("constraints", satisfied);
      terms.emplace_back("seconds_left", seconds);
    }
    return terms;
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (!detail::is_leader(o)) return report;
  report_projection_quality(projector, labels, state, latent, f, tags, c.threads, report);
  const torch::Tensor free_inputs = torch::cat({features, torch::zeros({features.size(0), inputs - f})}, 1);
  detail::report_expert_use_over(
      projector->net, free_inputs, [&](const torch::Tensor& rows) { projector->forward(rows); }, report);
  return report;
}

}  // namespace lmm::training
