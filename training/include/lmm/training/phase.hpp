// Periodic autoencoder (Starke, Mason & Komura 2022, DeepPhase): a 1-D convolutional encoder turns
// a window of character-space joint velocities centred on a frame into `channels` latent curves;
// each curve's power spectrum gives its frequency, amplitude and offset, and a learned linear layer
// per channel its phase; a 1-D convolutional decoder reconstructs the window from the sinusoids
// A sin(2 pi (f t + phase)) + B alone (MSE, Adam). A frame's phase embedding, the 2 x channels
// matching features of Kleanthous & Martini 2023 Table 10, is A (sin 2 pi phase, cos 2 pi phase)
// per channel.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/training/config.hpp"
#include "lmm/training/trainer.hpp"

namespace lmm::training {

// Per-frame signals the autoencoder reads, with each frame's clip (windows never cross a clip).
struct PhaseData {
  torch::Tensor velocities;             // [N, D] f32: per frame, D signals (3 per joint for a database)
  torch::Tensor clip_first, clip_last;  // [N] int64: first and last frame of each frame's clip
  double fps = 60.0;                    // frames per second
};

// PhaseData of signals `velocities` [N, D] cut into clips `ranges` (which must cover the N frames in
// order). Throws std::runtime_error when the shapes or ranges do not fit or fps is not positive.
PhaseData phase_data(const torch::Tensor& velocities, const std::vector<DatabaseRange>& ranges, double fps);

// Character-space (simulation-bone space) velocities in m/s of every animated joint of `db`, by
// central differences within each clip (one-sided at its ends). Throws like make_pose_data.
PhaseData make_phase_data(const Database& db);

// Where a window's samples lie: `samples` (odd) samples `stride` frames apart, centred on the frame.
struct PhaseWindow {
  int64_t samples = 0;
  int64_t stride = 1;
  double sample_seconds = 0.0;  // stride / fps
};

// The window of `config` at `fps`: window_seconds x step_hz samples (rounded to odd), every
// round(fps / step_hz) frames (at least 1).
PhaseWindow phase_window(const PhaseConfig& config, double fps);

// Raw windows [B, D, T] centred on `frames` [B] (int64); samples beyond the clip repeat its edge frame.
torch::Tensor phase_windows(const PhaseData& data, const PhaseWindow& window, const torch::Tensor& frames);

// A curve's spectral parameters (DeepPhase), each [B, C].
struct Spectrum {
  torch::Tensor frequency;  // Hz: power-weighted mean of the positive frequencies
  torch::Tensor amplitude;  // 2 sqrt(sum of the positive frequencies' power) / T
  torch::Tensor offset;     // the DC term / T
};

// The spectrum of curves [B, C, T] sampled every `sample_seconds`, differentiable.
Spectrum spectral_parameters(const torch::Tensor& curves, double sample_seconds);

// A window's periodic parameters, each [B, C]; phase in cycles, in (-0.5, 0.5].
struct PhaseParameters : Spectrum {
  torch::Tensor phase;
};

// The autoencoder, with the input standardisation as buffers.
struct PhaseModelImpl : torch::nn::Module {
  PhaseModelImpl(int64_t inputs, const PhaseConfig& config, const PhaseWindow& window);
  // Latent curves [B, C, T] of raw windows [B, D, T].
  torch::Tensor curves(const torch::Tensor& windows);
  // Periodic parameters of raw windows [B, D, T].
  PhaseParameters encode(const torch::Tensor& windows);
  // The sinusoids [B, C, T] of `p`: A sin(2 pi (f t + phase)) + B, t in seconds from the window's centre.
  torch::Tensor sinusoids(const PhaseParameters& p) const;
  // Reconstruction [B, D, T] of the standardised window whose parameters are `p`.
  torch::Tensor decode(const PhaseParameters& p);
  // Raw windows [B, D, T] standardised with the buffers.
  torch::Tensor standardise(const torch::Tensor& windows) const;

  PhaseWindow window;
  torch::nn::Conv1d encoder_in{nullptr}, encoder_out{nullptr}, decoder_in{nullptr}, decoder_out{nullptr};
  torch::Tensor phase_weight, phase_bias;  // per channel a linear layer from its curve to (sx, sy): [C, 2, T], [C, 2]
  torch::Tensor input_mean, input_std;     // [D]
  torch::Tensor times;                     // [T] seconds from the window's centre (not saved)
};
TORCH_MODULE(PhaseModel);

// Trains `model` (built for `data` with config.phase) on random windows of `data` and writes
// options.out_dir/phase.pt (or resumes from it); metrics as phase_metrics plus the loop's.
TrainReport fit_phase(const TrainingConfig& config, const PhaseData& data, PhaseModel& model, const TrainOptions& options);

// fit_phase on make_phase_data(db): lmm-train phase.
TrainReport train_phase(const TrainingConfig& config, const Database& db, const TrainOptions& options);

// Parameters of the windows centred on `frames` [M] (every frame when undefined), in batches, [M, C] each.
PhaseParameters frame_phases(PhaseModel& model, const PhaseData& data, const torch::Tensor& frames = {});

// The phase embedding [M, 2C] of `p`: per channel c, columns 2c and 2c + 1 are A sin(2 pi phase) and A cos(2 pi phase).
torch::Tensor phase_embedding(const PhaseParameters& p);

// Measures `model` on `data`: phase_reconstruction_error (mean squared error of standardised
// windows, 4,096 seeded random frames), and over whole clips (about 20,000 frames, spread over the
// clips): phase_dominant_channel (largest mean amplitude), its median frequency
// phase_dominant_frequency_hz, the share of consecutive frames whose phase goes backwards in it
// phase_backward_share (wrapped step below 0) and its median step x fps phase_dominant_advance_hz
// (near the frequency when the phase advances with the motion).
std::map<std::string, double> phase_metrics(PhaseModel& model, const PhaseData& data);

// The model trained by `lmm-train phase --out dir` (dir/preset.toml, dir/phase.pt) for inputs like
// `data`'s. Throws std::runtime_error naming the file when it is missing, damaged or was trained
// on another skeleton or preset.
PhaseModel load_phase_model(const std::string& dir, const PhaseData& data);

}  // namespace lmm::training
