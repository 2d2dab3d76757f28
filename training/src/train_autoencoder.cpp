#include "lmm/training/trainer.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "checkpoint.hpp"
#include "data_parallel.hpp"
#include "lmm/training/pose_data.hpp"
#include "trainer_data.hpp"
#include "training_loop.hpp"
#include "training_metrics.hpp"

namespace lmm::training {
namespace {

namespace fs = std::filesystem;

constexpr double kTwoPi = 6.283185307179586;

// Geodesic angle between rotation matrices [..., 3, 3] (Kleanthous & Martini 2023 Eq. 19), in radians.
torch::Tensor geodesic(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor trace = (a * b).sum({-2, -1});  // trace(a b^T), without a batched matmul
  return torch::acos(((trace - 1.0) / 2.0).clamp(-1.0 + 1e-6, 1.0 - 1e-6));
}

// Per-joint weighted mean over joints of per-joint errors [B, J].
torch::Tensor weighted(const torch::Tensor& per_joint, const torch::Tensor& weights) {
  return (per_joint * weights).mean();
}

// Latents of every frame from the encoder of out_dir's autoencoder checkpoint, loaded into `ae`,
// whose encoder then stays fixed (no gradients, so the optimiser leaves it alone).
torch::Tensor frozen_encoder_latents(Autoencoder& ae, const torch::Tensor& x, const TrainOptions& o) {
  if (!o.resume) throw std::runtime_error("freezing the encoder continues a trained autoencoder: resume from its checkpoint");
  const std::string path = checkpoint_path(o.out_dir, "autoencoder");
  torch::serialize::InputArchive archive;  // read by rank 0 and shared, as --resume reads it
  detail::read_checkpoint_file(path, archive, o.communicator.get(), "no " + path + " to resume");
  detail::load_module_checked(*ae, archive, path);
  for (auto& p : ae->encoder->parameters()) p.set_requires_grad(false);
  if (o.log) o.log("encoder frozen: training the decoder alone on its latents");
  return detail::latents(ae, x);
}

}  // namespace

TrainReport train_autoencoder(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.decoder);
  torch::manual_seed(c.seed);
  use_threads(c.threads);
  fs::create_directories(o.out_dir);
  const TrainingData data = detail::training_data(db, o);
  const PoseData& d = data.d;
  const PoseLayout& l = d.layout;
  const torch::Tensor& x = data.x;
  Autoencoder ae(x.size(1), d.features.size(1), l.size(), c);
  const torch::Tensor frozen_latents = o.freeze_encoder ? frozen_encoder_latents(ae, x, o) : torch::Tensor();
  const torch::Tensor contact_index = torch::tensor(d.contact_joints, torch::kInt64);
  const double fps = d.fps;

  LoopSpec spec;
  spec.model = "autoencoder";
  spec.net = ae.ptr().get();
  spec.routed = ae->decoder;
  spec.samples_per_step = c.batch;
  const BatchShard pairs = detail::shard_of(o, c.batch / 2);  // every rank draws the global batch and takes its pairs
  spec.batch_share = pairs.share();
  spec.step = [&]() -> Terms {
    const torch::Tensor i0 = d.pair_starts.index_select(0, pairs.take(torch::randint(d.pair_starts.size(0), {c.batch / 2}, torch::kInt64)));
    const torch::Tensor frames = torch::cat({i0, i0 + 1});  // [frame 0 of each pair..., frame 1...]
    const int64_t b = frames.size(0), half = b / 2;
    const torch::Tensor truth = d.pose.index_select(0, frames);
    const torch::Tensor z = o.freeze_encoder ? frozen_latents.index_select(0, frames) : ae->encoder->forward(x.index_select(0, frames));
    const torch::Tensor out = ae->decoder->forward(torch::cat({z, d.features.index_select(0, frames)}, 1));
    const torch::Tensor pose = detail::denormalize(d, out);
    // Local positions (and root velocities) and rotations, hierarchically weighted (Sec. 5.2-5.3).
    const torch::Tensor lp = pose.narrow(1, l.positions(), 3 * l.joints).reshape({b, l.joints, 3});
    const torch::Tensor lt = truth.narrow(1, l.positions(), 3 * l.joints).reshape({b, l.joints, 3});
    const torch::Tensor root = (pose.narrow(1, l.root_velocity(), 6) - truth.narrow(1, l.root_velocity(), 6)).abs().mean();
    const torch::Tensor local_pos = weighted((lp - lt).abs().sum(-1), d.local_weights);
    const torch::Tensor r6 = pose.narrow(1, l.rotations(), 6 * l.joints).reshape({b, l.joints, 6});
    const torch::Tensor m_pred = matrices_from_6d(r6);
    const torch::Tensor m_true = matrices_from_6d(truth.narrow(1, l.rotations(), 6 * l.joints).reshape({b, l.joints, 6}));
    const torch::Tensor norms = (1.0 - r6.narrow(-1, 0, 3).norm(2, -1)).abs() + (1.0 - r6.narrow(-1, 3, 3).norm(2, -1)).abs();
    const torch::Tensor rotation = weighted(geodesic(m_pred, m_true) / kTwoPi + norms, d.local_weights);
    // Model space (Sec. 5.3) and velocities over the consecutive pair (Sec. 5.4).
    const torch::Tensor mp = model_space_positions(d.parents, lp, m_pred);
    const torch::Tensor mt = d.model_positions.index_select(0, frames);
    const torch::Tensor model_pos = weighted((mp - mt).abs().sum(-1), d.model_weights);
    auto velocity = [&](const torch::Tensor& p) { return (p.narrow(0, half, half) - p.narrow(0, 0, half)) * fps; };
    const torch::Tensor vel = (velocity(lp) - velocity(lt)).abs().mean() + (velocity(mp) - velocity(mt)).abs().mean();
    // Contacts (Sec. 5.5): BCE on the labels, and contact joints' velocity error where in contact.
    const torch::Tensor logits = pose.narrow(1, l.contact(), l.contacts);
    const torch::Tensor labels = truth.narrow(1, l.contact(), l.contacts);
    const torch::Tensor bce = torch::binary_cross_entropy_with_logits(logits, labels);
    const torch::Tensor cv_err = (velocity(mp.index_select(1, contact_index)) - velocity(mt.index_select(1, contact_index))).norm(2, -1);
    const torch::Tensor contact_velocity = (cv_err * labels.narrow(0, half, half)).mean();
    // Latent regularisation (Sec. 5.7).
    const torch::Tensor l1 = z.abs().mean(), l2 = z.pow(2).mean();
    const torch::Tensor latent_velocity = velocity(z).abs().mean();
    const torch::Tensor lipschitz = ae->encoder->lipschitz_product().squeeze();
    const torch::Tensor balance = ae->decoder->load_balance(c.balance);
    const torch::Tensor total = c.w_position * (local_pos + model_pos + root) + c.w_rotation * rotation +
                                c.w_velocity * vel + c.w_contact * bce + c.w_contact_velocity * contact_velocity +
                                c.w_latent_l1 * l1 + c.w_latent_l2 * l2 + c.w_latent_velocity * latent_velocity +
                                (c.lipschitz ? c.w_lipschitz * lipschitz : torch::zeros({})) + c.w_load_balance * balance;
    return {{"total", total},          {"position", local_pos + model_pos + root}, {"rotation", rotation},
            {"velocity", vel},         {"contact", bce},   {"contact_velocity", contact_velocity},
            {"latent_l1", l1},         {"latent_l2", l2},  {"latent_velocity", latent_velocity},
            {"load_balance", balance}};
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (detail::is_leader(o)) detail::decoder_metrics(d, ae, x, report);
  return report;
}

}  // namespace lmm::training
