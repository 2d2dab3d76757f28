// Internal to lmm_training: the optimisation loop every trainer shares (checkpoints, resume,
// plateau decay, progress lines), defined in training_loop.cpp.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "lmm/training/config.hpp"
#include "lmm/training/models.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training {

using Terms = std::vector<std::pair<std::string, torch::Tensor>>;  // first entry: "total"

// Everything a generic loop needs from one model's trainer.
struct LoopSpec {
  std::string model;                           // checkpoint name, e.g. "autoencoder"
  torch::nn::Module* net = nullptr;            // parameters to optimise and checkpoint
  std::function<Terms()> step;                 // one batch: named loss terms, "total" first
  int64_t samples_per_step = 0;               // of the global batch
  double batch_share = 1.0;                    // this rank's share of each global batch (BatchShard::share)
  Network routed{nullptr};                     // SMoE network whose expert use is logged, if any
  bool adam = false;                           // Adam instead of Adan (Kleanthous & Martini 2023 Sec. 5)
};

// Sets LibTorch's intra-op threads and, when the BLAS is OpenBLAS, its own worker pool to
// `threads`: OpenBLAS otherwise keeps one spinning worker per core, which takes the core of a
// concurrent training process (docs/benchmarks.md#training-throughput).
void use_threads(int threads);

// Runs (or resumes from out_dir's checkpoint of spec.model) the optimisation loop of `spec` for
// c.steps steps and fills `report` (losses, seconds_wall, samples_per_s). Throws
// std::runtime_error on a non-finite loss or a checkpoint that cannot be written or read.
void run_loop(const TrainingConfig& c, const LoopSpec& spec, const TrainOptions& o, TrainReport& report);

namespace detail {

// Whether this process reports (one process, or rank 0 of a data-parallel run).
bool is_leader(const TrainOptions& o);

}  // namespace detail
}  // namespace lmm::training
