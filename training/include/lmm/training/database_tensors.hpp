// A motion database (*.mmdb) as LibTorch tensors, the input of every trainer.
#pragma once

#include <string>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"

namespace lmm::training {

// Per-frame tensors of a database (float32, CPU). N frames, J joints, C contacts, D features.
struct DatabaseTensors {
  torch::Tensor positions;           // [N, J, 3] local positions
  torch::Tensor rotations;           // [N, J, 4] local rotations (w, x, y, z)
  torch::Tensor velocities;          // [N, J, 3] local velocities
  torch::Tensor angular_velocities;  // [N, J, 3] local angular velocities
  torch::Tensor contacts;            // [N, C] contact labels as 0 / 1
  torch::Tensor features;            // [N, D] normalised matching features
  torch::Tensor range_starts;        // [R] int64 first frame of each clip
  torch::Tensor range_stops;         // [R] int64 one past the last frame of each clip
};

// Copies the per-frame data of `db` into tensors (the database may be unloaded afterwards).
DatabaseTensors to_tensors(const Database& db);

}  // namespace lmm::training
