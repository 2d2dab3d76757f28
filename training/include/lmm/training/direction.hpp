// DirectionNet training (Lee, Kwon & Lee 2023, Sec. VI-G, VIII): a one-layer GRU and a linear layer
// that, along windows of a database's root trajectories (the "path") and facings, predict the
// facing at each step from the path point and the previous step's facing; trained with an L1
// loss and Adam, evaluated on held-out clips against the path-tangent facing (Sec. VI-E).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/direction_builder.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training {

// The GRU and output layer with the input standardisation and the window's shape as buffers,
// so that a checkpoint holds everything an export needs.
struct DirectionModelImpl : torch::nn::Module {
  DirectionModelImpl(int64_t hidden, int64_t window, int64_t present, double step_seconds);
  // Facings [B, T, 2] (unnormalised) of windows of path points [B, T, 2] in the present frame:
  // step t reads its point and the facing of step t - 1, taken from `facings` [B, T, 2] up to
  // the present step and from its own (normalised) prediction after it; step 0 reads facings[0].
  torch::Tensor forward(const torch::Tensor& points, const torch::Tensor& facings);
  int64_t window() const { return shape[0].item<int64_t>(); }
  int64_t present() const { return shape[1].item<int64_t>(); }

  torch::nn::GRUCell cell{nullptr};
  torch::nn::Linear output{nullptr};
  torch::Tensor input_mean, input_std;  // [4]
  torch::Tensor shape;                  // i64 [2]: window, present step
  torch::Tensor step_seconds;           // f64 [1]
};
TORCH_MODULE(DirectionModel);

// Windows of a database's clips: per frame its root position and facing on the ground (x, z), and
// the present frames of the training and held-out windows.
struct DirectionData {
  torch::Tensor root, facing;                // [N, 2]
  torch::Tensor train_present, train_start;  // [M]: present frame, its clip's first frame
  torch::Tensor held_present, held_start;    // the same for held-out clips
  int64_t stride = 1, window = 0, present = 0;  // frames per step, steps per window, present step
  double step_seconds = 0.0;
  std::vector<int64_t> query_steps;  // steps after the present one at the schema's future trajectory offsets
};

// Cuts `db` into windows of config.direction's shape; clips whose name contains one of
// config.direction.holdout are held out. Throws std::runtime_error when no clip has a window.
DirectionData make_direction_data(const Database& db, const DirectionConfig& config);

// Windows at `present` frames (clip starts `start`) in each present frame: points and facings [B, T, 2].
void direction_windows(const DirectionData& d, const torch::Tensor& present, const torch::Tensor& start,
                       torch::Tensor& points, torch::Tensor& facings);

// Mean facing errors (degrees) on the held-out windows at the query steps, of `model`, of the path
// tangent and of holding the present facing, for sideways / backward steps (tangent over 45
// degrees from the recorded facing) and forward ones, moving steps only (over 0.5 m/s):
// direction_error_deg_{sideways,forward}_{net,tangent,hold} and direction_samples_{sideways,forward}.
std::map<std::string, double> direction_metrics(DirectionModel& model, const DirectionData& d);

// Trains DirectionNet on `db` and writes out_dir/direction.pt; metrics as direction_metrics.
TrainReport train_direction(const TrainingConfig& config, const Database& db, const TrainOptions& options);

// The runtime values of `model` (input-major weights).
DirectionValues direction_values(DirectionModel& model);

// Exports out_dir/direction.pt (trained with the preset recorded in `in_dir`) to `out_path` as a
// DirectionNet bundle, atomically. Throws std::runtime_error naming the file at fault.
void export_direction(const std::string& in_dir, const std::string& out_path);

}  // namespace lmm::training
