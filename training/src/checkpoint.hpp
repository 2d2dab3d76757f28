// Internal to lmm_training: the checkpoint file format (a hashed blob around a LibTorch archive)
// and the training state a checkpoint holds, defined in checkpoint.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "lmm/training/distributed.hpp"
#include "training_loop.hpp"

namespace lmm::training::detail {

// Scalars of a training run that a checkpoint restores.
struct LoopState {
  int64_t step = 0;
  double best = INFINITY, epoch_sum = 0.0, smoothed = NAN;
  int64_t epoch_count = 0, bad_epochs = 0;
  std::map<std::string, double> sums, first, last;
};

// Reads checkpoint `path` (with `comm`: rank 0's file, sent to every rank) into `archive` after
// checking its header, size and hashes. Throws std::runtime_error naming `path` when it is damaged
// or not a checkpoint, or with `missing` (when not empty) when it does not exist.
void read_checkpoint_file(const std::string& path, torch::serialize::InputArchive& archive, Communicator* comm = nullptr,
                          const std::string& missing = {});

// Loads `module` from the "model" entry of `archive`; throws std::runtime_error naming `path` when
// a tensor's name or shape differs from the module's own (LibTorch would adopt the file's shapes).
void load_module_checked(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path);

// Writes the training state (spec.net, `optimizer`, `s`, the RNG) to `path` and reads it back;
// throws std::runtime_error naming `path` when it cannot be written, the previous checkpoint kept.
void save_checkpoint(const std::string& path, const LoopSpec& spec, const torch::optim::Optimizer& optimizer,
                     const LoopState& s, int world_size);

// Restores the training state from `path` (rank 0's file on every rank); throws std::runtime_error
// naming it when the file is missing, damaged, not this model's complete state or of another world size.
void load_checkpoint(const std::string& path, const LoopSpec& spec, torch::optim::Optimizer& optimizer, LoopState& s,
                     const std::vector<std::string>& terms, Communicator* comm);

}  // namespace lmm::training::detail
