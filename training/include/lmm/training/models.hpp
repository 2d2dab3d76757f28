// The learned motion matching networks of Kleanthous & Martini 2023 Sec. 4.2 (Tables 1-7) and their FFN
// baselines: encoder, decoder, stepper and projector.
#pragma once

#include <torch/torch.h>

#include "lmm/training/config.hpp"
#include "lmm/training/layers.hpp"

namespace lmm::training {

// One network: an SMoE (optionally followed by Linear + GELU post layers, the decoder of
// Table 2) or, with experts == 0, a plain MLP.
class NetworkImpl : public torch::nn::Module {
 public:
  NetworkImpl(int64_t in, int64_t out, const NetworkConfig& config);
  // Runs the network (the SMoE path routes each sample to its top-k experts).
  torch::Tensor forward(const torch::Tensor& x);
  // Load-balancing loss of the last forward pass in `form` (zero for a plain MLP).
  torch::Tensor load_balance(LoadBalance form = LoadBalance::kKl) const;
  // Expert utilisation of the last forward pass, or an undefined tensor for a plain MLP.
  torch::Tensor utilisation() const;
  // Multiply-accumulates per sample.
  int64_t macs() const;
  // The SMoE part (null for a plain MLP).
  Smoe smoe() const { return smoe_; }
  // The post layers after the SMoE, or the whole plain network (null for an SMoE alone).
  Mlp mlp() const { return mlp_; }

 private:
  Smoe smoe_{nullptr};
  Mlp mlp_{nullptr};  // post layers after the SMoE, or the whole plain network
};
TORCH_MODULE(Network);

// Encoder (Table 1, Lipschitz layers when configured) and decoder (Tables 2-3) of the pose
// autoencoder. Decoder output: normalised pose with raw contact logits in the contact slots.
struct AutoencoderImpl : public torch::nn::Module {
  AutoencoderImpl(int64_t encoder_in, int64_t features, int64_t pose_size, const TrainingConfig& config);
  // The decoder on states [N, latent + features (+ tags)]: tag dimensions are not its input.
  torch::Tensor decode_state(const torch::Tensor& state) { return decoder->forward(state.narrow(1, 0, decoder_inputs)); }
  Mlp encoder{nullptr};
  Network decoder{nullptr};
  int64_t decoder_inputs = 0;  // latent + features
};
TORCH_MODULE(Autoencoder);

// Stepper (Tables 4-5): state (latent ++ features ++ tags) -> the state's change over one frame. The
// network reads (state - input_mean) / input_std (0 and 1 unless [stepper] normalize_input) and
// predicts the change divided by `delta_scale` (per-dimension std of the changes).
struct StepperImpl : public torch::nn::Module {
  StepperImpl(int64_t state, const NetworkConfig& config);
  // The predicted change of `state` over one frame.
  torch::Tensor forward(const torch::Tensor& state);
  Network net{nullptr};
  torch::Tensor delta_scale, input_mean, input_std;  // buffers [state]
};
TORCH_MODULE(Stepper);

// Projector (Tables 6-7): a (noisy) feature query, with the constraint code of a tag constraint
// when the state has tags (write_constraint_code), -> the state of its nearest allowed database
// frame. The network predicts the standardised state; `state_mean` / `state_std` undo that.
struct ProjectorImpl : public torch::nn::Module {
  ProjectorImpl(int64_t inputs, int64_t state, const NetworkConfig& config);
  // The predicted state (latent ++ features ++ tags) for `query` (++ constraint code).
  torch::Tensor forward(const torch::Tensor& query);
  Network net{nullptr};
  torch::Tensor state_mean, state_std;  // buffers [state]
};
TORCH_MODULE(Projector);

}  // namespace lmm::training
