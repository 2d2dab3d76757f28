#include "data_parallel.hpp"

namespace lmm::training::detail {

StepAgreement agree_on_step(Communicator& comm, const Terms& terms, double share, bool stop, double leader_progress,
                            const std::vector<torch::Tensor>& parameters) {
  const int64_t count = int64_t(terms.size());
  std::vector<double> packed;
  for (const auto& term : terms) packed.push_back(term.second.item<double>() * share);
  packed.push_back(stop ? 1.0 : 0.0);
  packed.push_back(comm.rank() == 0 ? leader_progress : 0.0);
  for (const torch::Tensor& p : parameters) packed.push_back(p.grad().defined() ? 1.0 : 0.0);
  const torch::Tensor sums = torch::tensor(packed, torch::kFloat64);
  comm.all_reduce_sum({sums});
  const double* sum = sums.data_ptr<double>();
  StepAgreement agreed;
  agreed.values.assign(sum, sum + count);
  agreed.stop = sum[count] > 0.0;
  agreed.progress = sum[count + 1];
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor p = parameters[i];
    if (sum[count + 2 + int64_t(i)] > 0.0 && !p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
  }
  return agreed;
}

void sum_gradients(Communicator& comm, const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  comm.all_reduce_sum(grads);
}

GlobalRouting::GlobalRouting(torch::nn::Module& net, Communicator* comm) {
  if (comm == nullptr) return;
  for (const auto& module : net.modules()) {
    auto* smoe = dynamic_cast<SmoeImpl*>(module.get());
    if (smoe == nullptr) continue;
    smoe->set_batch_mean([comm](const torch::Tensor& local_mean, int64_t rows) {
      const torch::Tensor sums = torch::cat({local_mean * double(rows), torch::full({1}, double(rows), local_mean.options())});
      comm->all_reduce_sum({sums});
      return sums.narrow(0, 0, local_mean.size(0)) / sums.narrow(0, local_mean.size(0), 1);
    });
    smoes_.push_back(smoe);
  }
}

GlobalRouting::~GlobalRouting() {
  for (SmoeImpl* smoe : smoes_) smoe->set_batch_mean(nullptr);
}

BatchShard shard_of(const TrainOptions& o, int64_t global) {
  return o.communicator ? batch_shard(global, o.communicator->rank(), o.communicator->world_size())
                        : BatchShard{global, 0, global};
}

}  // namespace lmm::training::detail
