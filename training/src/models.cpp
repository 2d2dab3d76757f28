#include "lmm/training/models.hpp"

namespace lmm::training {

NetworkImpl::NetworkImpl(int64_t in, int64_t out, const NetworkConfig& c) {
  if (c.experts == 0) {
    mlp_ = register_module("mlp", Mlp(in, c.hidden, out, false));
    return;
  }
  const bool post = c.expert_out > 0;
  smoe_ = register_module("smoe", Smoe(in, c.experts, c.expert_hidden, post ? c.expert_out : out, c.top_k));
  if (post) mlp_ = register_module("post", Mlp(c.expert_out, c.post_hidden, out, false));
}

torch::Tensor NetworkImpl::forward(const torch::Tensor& x) {
  if (!smoe_) return mlp_->forward(x);
  const torch::Tensor y = smoe_->forward(x);
  return mlp_ ? mlp_->forward(y) : y;
}

torch::Tensor NetworkImpl::load_balance(LoadBalance form) const {
  if (!smoe_) return torch::zeros({});
  return form == LoadBalance::kDispatch ? smoe_->last_stats().dispatch_balance : smoe_->last_stats().load_balance;
}

torch::Tensor NetworkImpl::utilisation() const {
  return smoe_ ? smoe_->last_stats().utilisation : torch::Tensor();
}

int64_t NetworkImpl::macs() const {
  return (smoe_ ? smoe_->macs() : 0) + (mlp_ ? mlp_->macs() : 0);
}

AutoencoderImpl::AutoencoderImpl(int64_t encoder_in, int64_t features, int64_t pose_size,
                                 const TrainingConfig& config) {
  encoder = register_module("encoder", Mlp(encoder_in, config.encoder_hidden, config.latent, config.lipschitz));
  decoder = register_module("decoder", Network(config.latent + features, pose_size, config.decoder));
  decoder_inputs = config.latent + features;
}

StepperImpl::StepperImpl(int64_t state, const NetworkConfig& config) {
  net = register_module("net", Network(state, state, config));
  delta_scale = register_buffer("delta_scale", torch::ones({state}));
  input_mean = register_buffer("input_mean", torch::zeros({state}));
  input_std = register_buffer("input_std", torch::ones({state}));
}

torch::Tensor StepperImpl::forward(const torch::Tensor& state) {
  return net->forward((state - input_mean) / input_std) * delta_scale;
}

ProjectorImpl::ProjectorImpl(int64_t inputs, int64_t state, const NetworkConfig& config) {
  net = register_module("net", Network(inputs, state, config));
  state_mean = register_buffer("state_mean", torch::zeros({state}));
  state_std = register_buffer("state_std", torch::ones({state}));
}

torch::Tensor ProjectorImpl::forward(const torch::Tensor& query) {
  return net->forward(query) * state_std + state_mean;
}

}  // namespace lmm::training
