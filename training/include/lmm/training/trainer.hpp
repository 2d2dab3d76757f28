// Trainers for the autoencoder, stepper and projector (Kleanthous & Martini 2023 Sec. 5) with atomic, hashed
// checkpoints, resume, plateau learning-rate decay, live progress and final metrics.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/distributed.hpp"
#include "lmm/training/pose_data.hpp"

namespace lmm::training {

// How one lmm-train run behaves besides the preset.
struct TrainOptions {
  std::string out_dir;        // checkpoints and metrics go here
  bool resume = false;        // continue from out_dir's checkpoint of this model
  bool freeze_encoder = false;  // autoencoder, with resume: keep the checkpoint's encoder, train the decoder alone
  int64_t stop_after = -1;    // stop (with a checkpoint) after this many steps of this run
  double max_minutes = 0.0;   // > 0: also stop (with a checkpoint) after this much wall time
  const std::atomic<bool>* stop_requested = nullptr;  // set (e.g. by SIGINT): checkpoint and stop
  std::function<void(const std::string&)> log;  // progress lines
  // The data-parallel run this process is a rank of (null: one process). Each rank takes its share
  // of every global batch, the ranks sum their gradients, and rank 0 alone writes checkpoints.
  std::shared_ptr<Communicator> communicator;
};

// What a run measured: loss terms averaged over its first and last virtual epochs, and the
// model's final metrics (e.g. mean_joint_error_cm, samples_per_s, seconds_wall).
struct TrainReport {
  int64_t steps = 0;  // optimiser steps done in total (including resumed ones)
  std::map<std::string, double> first_losses, last_losses, metrics;
  bool finished = false;  // reached the preset's step count
};

// Trains the pose autoencoder on `db` and writes out_dir/autoencoder.pt; with freeze_encoder, goes on
// training its decoder on the latents of the checkpoint's fixed encoder, so that stepper and
// projector can train on those latents at the same time. Throws std::runtime_error on bad input, a
// non-finite loss (the last good checkpoint is kept) or freeze_encoder without resume.
TrainReport train_autoencoder(const TrainingConfig& config, const Database& db, const TrainOptions& options);

// Trains the stepper (Kleanthous & Martini 2023 Sec. 5.9: autoregressive rollouts with start noise) on the
// latents of out_dir/autoencoder.pt and writes out_dir/stepper.pt; metrics include
// rollout_error_cm_0.5s and rollout_error_cm_2s. Throws std::runtime_error like the others.
TrainReport train_stepper(const TrainingConfig& config, const Database& db, const TrainOptions& options);

// Trains the projector (Kleanthous & Martini 2023 Sec. 5.6: noisy queries labelled by exact FAISS nearest
// neighbours) and writes out_dir/projector.pt; metrics include projector_feature_error (mean
// distance of the projected features to the query, relative to the exact nearest neighbour's).
TrainReport train_projector(const TrainingConfig& config, const Database& db, const TrainOptions& options);

// Standardised encoder inputs [N, P + 3J] (pose vector ++ model-space positions) of every
// frame, and the per-column mean and std (clamped at 1e-4) used to standardise them.
torch::Tensor encoder_inputs(const PoseData& d, torch::Tensor& mean, torch::Tensor& std);

// Loads the trained weights of checkpoint `path` into `module`. Throws std::runtime_error naming
// `path` when the file is missing, unreadable or damaged (its size or hashes do not match), or
// its tensors' names or shapes differ from the module's.
void load_checkpoint_module(torch::nn::Module& module, const std::string& path);

// Path of a model's checkpoint in `out_dir`.
std::string checkpoint_path(const std::string& out_dir, const std::string& model);

}  // namespace lmm::training
