// Internal to lmm_training: what the ranks of a data-parallel run agree on around each step (loss
// terms, stopping, gradients, SMoE routing) and each rank's share of a batch, defined in data_parallel.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "lmm/training/distributed.hpp"
#include "lmm/training/layers.hpp"
#include "training_loop.hpp"

namespace lmm::training::detail {

// What the ranks of a data-parallel run agree on after a step's backward pass.
struct StepAgreement {
  std::vector<double> values;  // loss terms over the global batch
  bool stop = false;           // some rank wants to stop after this step
  double progress = 0.0;       // rank 0's run progress (the learning-rate schedule's clock)
};

// One small all-reduce after the backward pass: the ranks' loss terms weighted by `share` (the
// terms over the global batch), whether any rank wants to stop, and rank 0's progress; parameters
// with a gradient on some rank get one (zeros) on every rank, as a single process would give them.
StepAgreement agree_on_step(Communicator& comm, const Terms& terms, double share, bool stop, double leader_progress,
                            const std::vector<torch::Tensor>& parameters);

// Sums the gradients of `parameters` across ranks (bucketed): with each rank's loss weighted by its
// share of the batch, the sum is the gradient of the loss over the global batch.
void sum_gradients(Communicator& comm, const std::vector<torch::Tensor>& parameters);

// While it lives, every SMoE of `net` computes its load-balancing loss from the routing
// distribution of the global batch (an all-reduce of the ranks' means per forward pass).
class GlobalRouting {
 public:
  // Hooks the SMoEs of `net` up to `comm` (nothing with a null `comm`).
  GlobalRouting(torch::nn::Module& net, Communicator* comm);
  // Unhooks them: each computes its loss from its own batch again.
  ~GlobalRouting();
  GlobalRouting(const GlobalRouting&) = delete;
  GlobalRouting& operator=(const GlobalRouting&) = delete;

 private:
  std::vector<SmoeImpl*> smoes_;
};

// This process's shard of a global batch of `global` rows (all of it without a communicator).
BatchShard shard_of(const TrainOptions& o, int64_t global);

}  // namespace lmm::training::detail
