#include "lmm/training/adan.hpp"

#include <cmath>

#include <torch/serialize/archive.h>

namespace lmm::training {
namespace {

// One step's constants (see the header's equations).
struct AdanCoefficients {
  double b1, b2, b3, inv_c1, inv_c2, inv_c3, eps, lr, inv_decay;
};

// The whole update of one parameter in one pass over its elements: no temporaries and no
// per-operation dispatch, which for the hundreds of small expert tensors of an SMoE network cost
// more than the arithmetic (docs/benchmarks.md#training-throughput). The arithmetic is double:
// in float, Adan's normalisation amplified rounding 8x more (the data-parallel equivalence test).
void adan_update(float* p, const float* g, float* m, float* v, float* n, float* previous, int64_t count,
                 const AdanCoefficients& k) {
  for (int64_t i = 0; i < count; ++i) {
    const double grad = g[i], diff = grad - previous[i];
    const double mean = k.b1 * m[i] + (1.0 - k.b1) * grad;
    const double mean_diff = k.b2 * v[i] + (1.0 - k.b2) * diff;
    const double u = grad + k.b2 * diff;
    const double mean_sq = k.b3 * n[i] + (1.0 - k.b3) * u * u;
    const double update = (mean * k.inv_c1 + k.b2 * mean_diff * k.inv_c2) / (std::sqrt(mean_sq * k.inv_c3) + k.eps);
    p[i] = float((p[i] - k.lr * update) * k.inv_decay);
    m[i] = float(mean);
    v[i] = float(mean_diff);
    n[i] = float(mean_sq);
    previous[i] = g[i];
  }
}

}  // namespace

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
        fresh->previous_grad(grad.clone(torch::MemoryFormat::Contiguous));
        it = state_.emplace(c10::guts::to_string(p.unsafeGetTensorImpl()), std::move(fresh)).first;
      }
      auto& s = static_cast<AdanParamState&>(*it->second);
      s.step(s.step() + 1);
      const double step = double(s.step());
      const AdanCoefficients k{b1, b2, b3, 1.0 / (1.0 - std::pow(b1, step)), 1.0 / (1.0 - std::pow(b2, step)),
                               1.0 / (1.0 - std::pow(b3, step)), o.eps(), o.lr(), 1.0 / (1.0 + o.lr() * o.weight_decay())};
      TORCH_CHECK(p.scalar_type() == torch::kFloat && p.is_contiguous() && !p.is_cuda(),
                  "Adan: parameters must be contiguous float CPU tensors");
      const auto matches = [&](const torch::Tensor& t) { return t.is_contiguous() && t.numel() == p.numel(); };
      TORCH_CHECK(matches(s.exp_avg()) && matches(s.exp_avg_diff()) && matches(s.exp_avg_sq()) &&
                      matches(s.previous_grad()),
                  "Adan: optimiser state does not match its parameter (a checkpoint of another model?)");
      const torch::Tensor g = grad.contiguous();
      adan_update(p.data_ptr<float>(), g.data_ptr<float>(), s.exp_avg().data_ptr<float>(),
                  s.exp_avg_diff().data_ptr<float>(), s.exp_avg_sq().data_ptr<float>(),
                  s.previous_grad().data_ptr<float>(), p.numel(), k);
    }
  }
  return loss;
}

void Adan::save(torch::serialize::OutputArchive& archive) const { serialize(*this, archive); }

void Adan::load(torch::serialize::InputArchive& archive) { serialize(*this, archive); }

}  // namespace lmm::training
