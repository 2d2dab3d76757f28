// From trained checkpoints (or freshly initialised modules) to runtime model bundles (*.lmmw):
// Lipschitz scales folded into the weights, weights transposed to the runtime's input-major
// layout, normalisation statistics, skeleton and schema attached (Kleanthous & Martini 2023 Sec. 3, 6.2).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lmm/asset/database.hpp"
#include "lmm/model_builder.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/models.hpp"
#include "lmm/training/pose_data.hpp"

namespace lmm::training {

// The values of `tensor` as f32, row-major.
std::vector<float> float_values(const torch::Tensor& tensor);

// The networks of one training run.
struct TrainedModels {
  Autoencoder autoencoder{nullptr};
  Stepper stepper{nullptr};
  Projector projector{nullptr};
};

// Modules of `config`'s sizes for `data`, with LibTorch's default (seeded) initialisation and
// default statistics: random weights for timing and tests.
TrainedModels initial_models(const TrainingConfig& config, const PoseData& data, uint64_t seed);

// The trained modules of `dir` (autoencoder.pt, stepper.pt, projector.pt). Throws
// std::runtime_error naming the missing or mismatching checkpoint.
TrainedModels load_trained_models(const TrainingConfig& config, const PoseData& data, const std::string& dir);

// The runtime values of `models`: per network its layers (effective weights), the decoder's
// pose statistics from `data`, the stepper's and projector's buffers, and the encoder with
// its input statistics when `with_encoder`.
ModelValues model_values(const TrainedModels& models, const TrainingConfig& config, const PoseData& data,
                         bool with_encoder);

// Where a training run's inputs are recorded: DIR/run.toml names the database and DIR/preset.toml
// is a copy of the preset, so lmm-export needs only the folder.
struct RunManifest {
  std::string database;  // absolute path of the *.mmdb
  std::string preset;    // path of the preset copy
};

// Writes DIR/preset.toml (a copy of config.source) and DIR/run.toml (the database's canonical
// path) once, atomically: a file that exists must hold the same text (concurrent lmm-train runs of
// one folder agree). Throws std::runtime_error naming the file when it cannot be written or holds
// another preset or database.
void write_run_manifest(const std::string& dir, const TrainingConfig& config, const std::string& database_path);

// Reads DIR/run.toml. Throws std::runtime_error naming the file or key when it is missing or bad.
RunManifest read_run_manifest(const std::string& dir);

// What lmm-export does.
struct ExportOptions {
  std::string in_dir;        // training folder (checkpoints + manifest)
  std::string out_path;      // bundle to write (atomically)
  std::string database;      // overrides the manifest's database when not empty
  bool half = false;         // f16 weights
  bool with_encoder = false; // include the encoder
  std::function<void(const std::string&)> log;  // progress lines
};

// What was exported.
struct ExportSummary {
  uint64_t file_bytes = 0;
  uint64_t weight_bytes = 0;
  int64_t decoder_macs = 0, stepper_macs = 0, projector_macs = 0;
  std::string preset;
};

// Exports the checkpoints of options.in_dir to options.out_path. Throws std::runtime_error
// naming the file at fault; writes no output file on failure.
ExportSummary export_bundle(const ExportOptions& options);

// Serialises `values` for `db` (f16 weights when `half`) with the database's measured walk and run
// speeds (Database::speeds()); throws std::runtime_error on a mismatch between the values and
// the database.
std::vector<uint8_t> bundle_bytes(const ModelValues& values, const Database& db, bool half);

}  // namespace lmm::training
