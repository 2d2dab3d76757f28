// Internal to lmm_training: the metrics the trainers report after training (expert use, decoder
// joint errors, stepper rollout errors), defined in training_metrics.cpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/training/models.hpp"
#include "lmm/training/pose_data.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training::detail {

// Adds the rows each expert of `net` took in its last forward pass of `rows` rows to `total`
// (an empty tensor at first). Nothing for a network without experts.
void add_expert_use(const Network& net, int64_t rows, torch::Tensor& total);

// expert_use_min / _max: the least and the most used expert of `total` (add_expert_use) as
// multiples of uniform use, as lmm-eval's *_expert_use_* over the database.
void report_expert_use(const torch::Tensor& total, TrainReport& report);

// report_expert_use of `net` when `forward` (which runs it) takes every row of `inputs`, in chunks.
template <typename Forward>
void report_expert_use_over(const Network& net, const torch::Tensor& inputs, const Forward& forward,
                            TrainReport& report) {
  torch::NoGradGuard no_grad;
  torch::Tensor expert_use;
  for (int64_t s = 0; s < inputs.size(0); s += 4096) {
    const int64_t b = std::min<int64_t>(4096, inputs.size(0) - s);
    forward(inputs.narrow(0, s, b));
    add_expert_use(net, b, expert_use);
  }
  report_expert_use(expert_use, report);
}

// Mean and 95th percentile of model-space joint position errors (cm) over all frames, and the
// decoder's expert use over them.
void decoder_metrics(const PoseData& d, Autoencoder& ae, const torch::Tensor& x, TrainReport& report);

// Frames f whose clip continues for at least `length` more frames.
torch::Tensor rollout_starts(const Database& db, int64_t length);

// The states `s` after `frames` steps of the stepper, without gradient.
torch::Tensor rolled_out(Stepper& stepper, torch::Tensor s, int64_t frames);

// Mean model-space joint error (cm) after rolling the stepper `frames` frames from 1,000
// seeded random starts and decoding; NaN when no clip is long enough.
double rollout_error_cm(const Database& db, const PoseData& d, Autoencoder& ae, Stepper& stepper,
                        const torch::Tensor& state, int64_t frames);

}  // namespace lmm::training::detail
