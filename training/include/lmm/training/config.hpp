// Training presets (configs/training/*.toml): model sizes, optimiser, schedule and loss weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmm/asset/frame_annotations.hpp"

namespace lmm::training {

// The load-balancing loss of SMoE routing (Kleanthous & Martini 2023 Sec. 5.1).
enum class LoadBalance {
  kKl,        // KL divergence of the mean gate probabilities from uniform (Eq. 17, the paper's choice)
  kDispatch,  // N sum_i f_i P_i: routed share times mean probability per expert (Eq. 14-16)
};

// Shape of one network: an SMoE (experts > 0) or a plain MLP (experts == 0, the FFN baseline).
struct NetworkConfig {
  int64_t experts = 0;
  int64_t top_k = 2;
  std::vector<int64_t> expert_hidden;  // hidden sizes of each expert
  int64_t expert_out = 0;              // decoder only: expert output size (0 = network output)
  std::vector<int64_t> post_hidden;    // decoder only: Linear + GELU layers after the experts
  std::vector<int64_t> hidden;         // plain MLP hidden sizes (experts == 0)
  int64_t steps = 0;                   // training steps of this model (0 = [train] steps)
  int64_t batch = 0;                   // batch size of this model (0 = [train] batch)
  double learning_rate = 0.0;          // learning rate of this model (0 = [train] learning_rate)
  double anneal = -1.0;                // share of this model's run annealed (< 0 = [train] anneal)
  bool normalize_input = false;        // [stepper] only: standardise the state before the network
};

// DirectionNet (Lee, Kwon & Lee 2023, Sec. VI-G, VIII): a GRU over windows of the database's root
// trajectories and facings.
struct DirectionConfig {
  int64_t hidden = 30;            // GRU units (Sec. VI-G)
  double window_seconds = 4.0;    // window of path points (Sec. VI-G: 4-second segments)
  double future_seconds = 2.0;    // predicted facings after the present step (Sec. VI-G)
  double step_hz = 30.0;          // steps per second (the paper's 30 fps)
  int64_t steps = 3000;           // optimiser steps (Adam, Sec. VIII)
  int64_t batch = 256;            // windows per step
  double learning_rate = 1e-3;    // Adam's
  std::vector<std::string> holdout;  // clips whose name contains one of these are held out (validation)
};

// Periodic autoencoder (Starke, Mason & Komura 2022, DeepPhase): a window of character-space joint
// velocities centred on each frame, encoded to `channels` latent curves whose spectra give each
// channel's frequency, amplitude and offset, and a learned layer its phase.
struct PhaseConfig {
  int64_t channels = 5;          // latent phase channels (DeepPhase's 5; Kleanthous & Martini 2023 Table 10: 2 x 5 dims)
  double window_seconds = 2.0;   // window centred on the frame (DeepPhase: 2 s)
  double step_hz = 30.0;         // window samples per second (61 samples over 2 s, as DeepPhase)
  int64_t hidden = 32;           // channels between the two convolutions of the encoder and of the decoder
  int64_t kernel = 61;           // convolution kernel in window samples, odd (DeepPhase: the whole window)
  int64_t steps = 10000;         // optimiser steps (Adam)
  int64_t batch = 32;            // windows per step (DeepPhase)
  double learning_rate = 1e-4;   // Adam's (DeepPhase)
};

// Every setting of a preset. Defaults follow Kleanthous & Martini 2023 where it gives a value.
struct TrainingConfig {
  std::string source;  // file it came from
  std::string text;    // that file's contents (copied into training folders as preset.toml)
  std::string name;
  int64_t latent = 32;                      // Kleanthous & Martini 2023 Table 1
  std::vector<int64_t> encoder_hidden{512, 512, 512};
  bool lipschitz = true;                    // LipschitzLinear encoder (Kleanthous & Martini 2023 Sec. 3.2)
  NetworkConfig decoder, stepper, projector;
  DirectionConfig direction;
  PhaseConfig phase;

  uint64_t seed = 1;
  int threads = 2;
  int64_t batch = 12288;                    // Kleanthous & Martini 2023 Sec. 5.8
  int64_t steps = 30000;                    // 300 virtual epochs x 100 batches (Sec. 5.8)
  int64_t steps_per_epoch = 100;            // a virtual epoch (Sec. 5.8)
  double learning_rate = 0.02;              // Adan, Sec. 5
  double weight_decay = 0.0;
  std::string schedule = "plateau";         // plateau (Sec. 5) | linear | cosine: decay to 0 over the steps or the time budget
  double plateau_gamma = 0.99;              // lr decay per plateau (Sec. 5)
  int64_t plateau_patience = 3;             // virtual epochs without improvement
  double anneal = 0.0;                      // last share of a run (0 to < 1) whose learning rate falls linearly to 0
  double checkpoint_minutes = 5.0;

  // Autoencoder loss weights (Sec. 5.2-5.7).
  double w_position = 1.0, w_rotation = 1.0, w_velocity = 1.0, w_contact = 0.1,
         w_contact_velocity = 0.1, w_latent_l1 = 0.1, w_latent_l2 = 0.1, w_latent_velocity = 0.01,
         w_lipschitz = 0.001, w_load_balance = 0.01;
  LoadBalance balance = LoadBalance::kKl;   // [loss] balance = "kl" | "dispatch"
  // Stepper (Sec. 5.9) and projector (Sec. 5.6).
  int64_t rollout = 30;
  // Up to this many frames (a random count per batch) the stepper first rolls out without gradient,
  // so that the trained rollout starts from the stepper's own drifted states; 0 = from the database's.
  int64_t free_rollout = 0;
  double start_noise = 0.15;
  // Weight of the stepper's decoded-pose term: mean model-space joint error (cm) of the frozen
  // decoder's poses every stepper_pose_every rollout frames; 0 = the state losses alone (Sec. 5.9).
  double w_stepper_pose = 0.0;
  int64_t stepper_pose_every = 10;
  double w_projector_features = 1.0, w_projector_latent = 10.0, w_projector_distance = 0.3;
  // Weight of the projector's tag margin term ([loss] projector_tags; with [tags] only): predicted
  // tags on the right side of one half, so that projections satisfy the constraint they were given.
  double w_projector_tags = 10.0;
  // [tags]: database tags the state carries (one 0/1 dimension each after the features) and the
  // projector takes constraints over; none: the state and projector of before.
  std::vector<std::string> tags;
  // [tags] actions: those of `tags` that one-shot actions play; each adds a state dimension of
  // the seconds left in the frame's run of the tag (0 without it), which ends the action.
  std::vector<std::string> actions;
  // [tags] enter_actions_freely: projections whose constraint requires no tag may land on the
  // action tags' frames (default: they exclude them, as the database character's searches do).
  bool enter_actions_freely = false;
  double constrained_share = 0.5;  // share of projector training queries given a random constraint
};

// The tags projections requiring no tag exclude, as bits over c.tags: c.actions unless
// c.enter_actions_freely.
TagMask kept_out_tags(const TrainingConfig& c);
// The index in c.tags of each of c.actions.
std::vector<int64_t> action_indices(const TrainingConfig& c);
// Size of the state's tag part: the tags, then one remaining-seconds dimension per action tag.
inline int64_t tag_state_width(const TrainingConfig& c) { return int64_t(c.tags.size() + c.actions.size()); }

// The preset with the [train] steps, batch, learning rate and anneal replaced by `network`'s own, where it sets them.
TrainingConfig for_network(TrainingConfig config, const NetworkConfig& network);
// The preset with the [train] steps, batch and learning rate replaced by those of a network with a
// table of its own ([direction], [phase]).
TrainingConfig with_schedule(TrainingConfig config, int64_t steps, int64_t batch, double learning_rate);

// The learning rate at `progress` (0 to 1) of a run: c.schedule's decay of c.learning_rate to zero
// at the end ("linear", "cosine"), or `current` unchanged ("plateau": the loop decays it on plateaus).
double scheduled_learning_rate(const TrainingConfig& c, double progress, double current);
// The factor on the scheduled learning rate at `progress` (0 to 1): 1, then falling linearly to 0
// over the run's last c.anneal share (a final anneal after steps at the full rate).
double anneal_factor(const TrainingConfig& c, double progress);

// The preset file `name_or_path` names: itself when it contains a '/' or ends in ".toml" (a
// path), else the shipped config_dir/training/NAME.toml, whatever the working directory holds.
// Throws std::runtime_error when a name is empty or not a shipped preset.
std::string training_config_file(const std::string& name_or_path, const std::string& config_dir);

// Reads the preset training_config_file(name_or_path, config_dir); a preset with `extends = "NAME"`
// (or a path) is that preset with this file's keys written over it, tables merged key by key. Throws std::runtime_error
// naming the file when it is missing, not a regular file, unreadable or empty, and the unknown
// key, bad value or syntax error.
TrainingConfig load_training_config(const std::string& name_or_path, const std::string& config_dir);

}  // namespace lmm::training
