// Internal to lmm_training: the data the trainers share (the training data, decoded poses, and for
// stepper and projector the frozen autoencoder's per-frame states), defined in trainer_data.cpp.
#pragma once

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/models.hpp"
#include "lmm/training/pose_data.hpp"
#include "lmm/training/shared_data.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training::detail {

// Decoder output to pose vectors: denormalised, contact slots kept as logits.
torch::Tensor denormalize(const PoseData& d, const torch::Tensor& out);

// Latent of every frame [N, L] from the encoder.
torch::Tensor latents(Autoencoder& ae, const torch::Tensor& x);

// The training data of `db`: computed in this process, or, for a rank of a data-parallel run,
// mapped from the cache file the leader prepared in out_dir (shared by the ranks on its machine).
TrainingData training_data(const Database& db, const TrainOptions& o);

// Everything stepper and projector training share: pose data, encoder inputs, the frozen
// autoencoder, the per-frame state (latent ++ features ++ the preset's tags as 0/1) and the
// frames' masks of those tags (tag_targets.hpp; empty without [tags]).
struct LatentSetup {
  PoseData d;
  torch::Tensor x, state;
  Autoencoder ae{nullptr};
  std::vector<TagMask> tag_masks;
};

// Seeds and threads the run, makes out_dir and loads the training data, out_dir's trained
// autoencoder and the state of every frame. Throws std::runtime_error when there is no autoencoder.
LatentSetup latent_setup(const TrainingConfig& c, const Database& db, const TrainOptions& o);

}  // namespace lmm::training::detail
