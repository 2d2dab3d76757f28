#include "lmm/training/adan.hpp"

#include <cmath>

#include <torch/serialize/archive.h>

namespace lmm::training {

AdanOptions::AdanOptions(double lr) : lr_(lr) {}

void AdanOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  archive.write("beta1", c10::IValue(std::get<0>(betas())));
  archive.write("beta2", c10::IValue(std::get<1>(betas())));
  archive.write("beta3", c10::IValue(std::get<2>(betas())));
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void AdanOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  c10::IValue b1, b2, b3;
  archive.read("beta1", b1);
  archive.read("beta2", b2);
  archive.read("beta3", b3);
  betas(std::make_tuple(b1.toDouble(), b2.toDouble(), b3.toDouble()));
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

double AdanOptions::get_lr() const { return lr(); }

void AdanOptions::set_lr(const double value) { lr(value); }

void AdanParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg_diff);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg_sq);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(previous_grad);
}

void AdanParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg_diff);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg_sq);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, previous_grad);
}

Adan::Adan(std::vector<torch::Tensor> params, AdanOptions options)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(params))},
                              std::make_unique<AdanOptions>(options)) {
  TORCH_CHECK(options.lr() >= 0.0 && options.eps() >= 0.0 && options.weight_decay() >= 0.0,
              "Adan: learning rate, eps and weight decay must be non-negative");
}

torch::Tensor Adan::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdanOptions&>(group.options());
    const double b1 = std::get<0>(o.betas()), b2 = std::get<1>(o.betas()), b3 = std::get<2>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const torch::Tensor grad = p.grad();
      auto it = state_.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      if (it == state_.end()) {
        auto fresh = std::make_unique<AdanParamState>();
        fresh->exp_avg(torch::zeros_like(p));
        fresh->exp_avg_diff(torch::zeros_like(p));
        fresh->exp_avg_sq(torch::zeros_like(p));
        fresh->previous_grad(grad.clone());
        it = state_.emplace(c10::guts::to_string(p.unsafeGetTensorImpl()), std::move(fresh)).first;
      }
      auto& s = static_cast<AdanParamState&>(*it->second);
      s.step(s.step() + 1);
      const torch::Tensor diff = grad - s.previous_grad();
      s.exp_avg().mul_(b1).add_(grad, 1.0 - b1);
      s.exp_avg_diff().mul_(b2).add_(diff, 1.0 - b2);
      const torch::Tensor u = grad + b2 * diff;
      s.exp_avg_sq().mul_(b3).addcmul_(u, u, 1.0 - b3);
      const double c1 = 1.0 - std::pow(b1, double(s.step()));
      const double c2 = 1.0 - std::pow(b2, double(s.step()));
      const double c3 = 1.0 - std::pow(b3, double(s.step()));
      const torch::Tensor denom = (s.exp_avg_sq() / c3).sqrt_().add_(o.eps());
      const torch::Tensor update = (s.exp_avg() / c1 + b2 * s.exp_avg_diff() / c2) / denom;
      p.add_(update, -o.lr()).div_(1.0 + o.lr() * o.weight_decay());
      s.previous_grad().copy_(grad);
    }
  }
  return loss;
}

void Adan::save(torch::serialize::OutputArchive& archive) const { serialize(*this, archive); }

void Adan::load(torch::serialize::InputArchive& archive) { serialize(*this, archive); }

}  // namespace lmm::training
