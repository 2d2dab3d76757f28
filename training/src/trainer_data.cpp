#include "trainer_data.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint.hpp"
#include "lmm/training/tag_targets.hpp"
#include "training_loop.hpp"

namespace lmm::training {
namespace detail {
namespace {

namespace fs = std::filesystem;

// How long data-parallel ranks wait for rank 0 to prepare the shared training data.
constexpr double kTrainingDataPreparationSeconds = 600.0;

// The trained autoencoder of o.out_dir (rank 0's) for this preset and database, in eval mode.
Autoencoder load_autoencoder(const TrainingConfig& c, const PoseData& d, int64_t encoder_in, const TrainOptions& o) {
  const std::string path = checkpoint_path(o.out_dir, "autoencoder");
  Autoencoder ae(encoder_in, d.features.size(1), d.layout.size(), c);
  torch::serialize::InputArchive archive;
  read_checkpoint_file(path, archive, o.communicator.get(), "no " + path + ": run 'lmm-train autoencoder' with this --out first");
  load_module_checked(*ae, archive, path);
  ae->eval();
  for (auto& p : ae->parameters()) p.set_requires_grad(false);
  return ae;
}

}  // namespace

torch::Tensor denormalize(const PoseData& d, const torch::Tensor& out) { return out * d.pose_std + d.pose_mean; }

torch::Tensor latents(Autoencoder& ae, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t s = 0; s < x.size(0); s += 8192) parts.push_back(ae->encoder->forward(x.narrow(0, s, std::min<int64_t>(8192, x.size(0) - s))));
  return torch::cat(parts, 0);
}

TrainingData training_data(const Database& db, const TrainOptions& o) {
  if (o.communicator == nullptr) return compute_training_data(db);
  // Preparing takes rank 0 about 19 s for all of bandai-loco: the others wait up to 10 minutes (a
  // rank that dies still stops them at once).
  const TrainingDataCache cache = training_data_cache(db, o.out_dir);
  o.communicator->run_on_leader([&] { prepare_training_data_cache(db, cache); }, kTrainingDataPreparationSeconds);
  TrainingData data = map_training_data(db, cache);
  if (o.log) o.log("training data mapped from " + data.mapped_from + ", shared by the ranks on this machine");
  return data;
}

LatentSetup latent_setup(const TrainingConfig& c, const Database& db, const TrainOptions& o) {
  torch::manual_seed(c.seed);
  use_threads(c.threads);
  fs::create_directories(o.out_dir);
  TrainingData data = training_data(db, o);
  LatentSetup s{std::move(data.d), std::move(data.x), {}, nullptr, {}};
  s.ae = load_autoencoder(c, s.d, s.x.size(1), o);
  s.state = torch::cat({latents(s.ae, s.x), s.d.features}, 1);
  if (!c.tags.empty()) {
    s.tag_masks = frame_tag_masks(db, c.tags);
    s.state = torch::cat({s.state, tag_state(db, s.tag_masks, c.tags, c.actions)}, 1);
  }
  return s;
}

}  // namespace detail

torch::Tensor encoder_inputs(const PoseData& d, torch::Tensor& mean, torch::Tensor& std) {
  const torch::Tensor x = torch::cat({d.pose, d.model_positions.reshape({d.pose.size(0), -1})}, 1);
  mean = x.mean(0);
  std = x.std(0).clamp_min(1e-4);
  return (x - mean) / std;
}

}  // namespace lmm::training
