#include "training_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>

#include <dlfcn.h>

#include "checkpoint.hpp"
#include "data_parallel.hpp"
#include "lmm/training/adan.hpp"
#include "process_memory.hpp"

namespace lmm::training {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// " | experts used MIN-MAXx uniform": the share of the batch's rows routed to the least and the most
// used expert as multiples of uniform use (top_k / experts; lmm-eval reports the same over the database).
std::string utilisation_text(const Network& net) {
  if (!net || !net->utilisation().defined()) return "";
  const torch::Tensor u = net->utilisation();
  const double uniform = u.sum().item<double>() / double(u.numel());  // each row counts top_k times
  if (!(uniform > 0.0)) return "";
  char text[64];
  std::snprintf(text, sizeof text, " | experts used %.2f-%.2fx uniform", u.min().item<double>() / uniform,
                u.max().item<double>() / uniform);
  return text;
}

// Ends a virtual epoch: records first / last averages and applies the plateau decay
// (Kleanthous & Martini 2023 Sec. 5: lr *= gamma after `patience` epochs without improvement of the smoothed loss).
void end_epoch(const TrainingConfig& c, torch::optim::Optimizer& optimizer, detail::LoopState& s) {
  for (auto& [name, sum] : s.sums) {
    const double mean = sum / double(c.steps_per_epoch);
    if (!s.first.count(name)) s.first[name] = mean;
    s.last[name] = mean;
    sum = 0.0;
  }
  const double epoch = s.epoch_sum / double(c.steps_per_epoch);
  s.smoothed = std::isnan(s.smoothed) ? epoch : 0.7 * s.smoothed + 0.3 * epoch;
  s.epoch_sum = 0.0;
  ++s.epoch_count;
  if (s.smoothed < s.best) {
    s.best = s.smoothed;
    s.bad_epochs = 0;
  } else if (++s.bad_epochs >= c.plateau_patience && c.schedule == "plateau") {
    auto& options = optimizer.param_groups()[0].options();
    options.set_lr(options.get_lr() * c.plateau_gamma);
    s.bad_epochs = 0;
  }
}

// How far the run is, 0 to 1: the larger of its share of the steps and of the wall-time budget.
double run_progress(const TrainingConfig& c, const TrainOptions& o, int64_t step, double elapsed_seconds) {
  const double by_steps = double(step) / double(c.steps);
  const double by_time = o.max_minutes > 0.0 ? elapsed_seconds / (60.0 * o.max_minutes) : 0.0;
  return std::clamp(std::max(by_steps, by_time), 0.0, 1.0);
}

std::string progress_line(const LoopSpec& spec, const TrainingConfig& c, const detail::LoopState& s,
                          const Terms& terms, const std::vector<double>& values, double rate, double lr) {
  char head[160];
  const double eta = rate > 0.0 ? double(c.steps - s.step) * double(spec.samples_per_step) / rate : 0.0;
  std::snprintf(head, sizeof head, "%s step %lld/%lld loss %.5f lr %.5f %.0f samples/s ETA %.0f s |", spec.model.c_str(),
                static_cast<long long>(s.step), static_cast<long long>(c.steps), values.front(), lr,
                rate, eta);
  std::string line = head;
  for (size_t i = 1; i < terms.size(); ++i) {
    char part[64];
    std::snprintf(part, sizeof part, " %s %.4f", terms[i].first.c_str(), values[i]);
    line += part;
  }
  return line;
}

// The optimiser `spec` asks for over its network's parameters.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainingConfig& c, const LoopSpec& spec) {
  if (spec.adam) {
    return std::make_unique<torch::optim::Adam>(spec.net->parameters(), torch::optim::AdamOptions(c.learning_rate));
  }
  return std::make_unique<Adan>(spec.net->parameters(), AdanOptions(c.learning_rate).weight_decay(c.weight_decay));
}

// The loss terms' values of one process's batch.
std::vector<double> values_of(const Terms& terms) {
  std::vector<double> values;
  for (const auto& term : terms) values.push_back(term.second.item<double>());
  return values;
}

}  // namespace

namespace detail {

bool is_leader(const TrainOptions& o) { return !o.communicator || o.communicator->rank() == 0; }

}  // namespace detail

void use_threads(int threads) {
  at::set_num_threads(threads);
  // Looked up, not linked: LibTorch may sit on another BLAS, which has no such pool.
  using SetBlasThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetBlasThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

void run_loop(const TrainingConfig& c, const LoopSpec& spec, const TrainOptions& o, TrainReport& report) {
  const std::unique_ptr<torch::optim::Optimizer> owned_optimizer = make_optimizer(c, spec);
  torch::optim::Optimizer& optimizer = *owned_optimizer;
  Communicator* const comm = o.communicator.get();  // null: one process
  const bool leader = detail::is_leader(o);
  const int world_size = comm == nullptr ? 1 : comm->world_size();
  detail::LoopState s;
  const std::string path = checkpoint_path(o.out_dir, spec.model);
  if (o.resume) {
    std::vector<std::string> names;
    for (const auto& term : spec.step()) names.push_back(term.first);  // term names only
    optimizer.zero_grad();
    detail::load_checkpoint(path, spec, optimizer, s, names, comm);
    if (o.log && leader) o.log("resumed " + spec.model + " at step " + std::to_string(s.step));
  }
  const detail::GlobalRouting global_routing(*spec.net, comm);
  const std::vector<torch::Tensor> parameters = spec.net->parameters();
  const auto start = Clock::now();
  auto last_save = Clock::now(), last_log = Clock::now();
  const int64_t first_step = s.step;
  auto within_budget = [&](int64_t step) {
    return (o.stop_after < 0 || step - first_step < o.stop_after) &&
           (o.max_minutes <= 0.0 || seconds_since(start) < 60.0 * o.max_minutes) &&
           (o.stop_requested == nullptr || !o.stop_requested->load());
  };
  auto check_finite = [&](double total) {
    if (!std::isfinite(total)) {
      throw std::runtime_error(spec.model + ": loss is not finite at step " + std::to_string(s.step) +
                               "; stopped, last good checkpoint kept at " + path);
    }
  };
  double reduce_seconds = 0.0;  // in the step's all-reduces (agreement and gradients)
  double last_lr = optimizer.param_groups()[0].options().get_lr();  // the last step's, annealed
  bool go = s.step < c.steps && within_budget(s.step);
  while (go) {
    optimizer.zero_grad();
    const Terms terms = spec.step();
    std::vector<double> values;
    bool stop = false;
    double progress = run_progress(c, o, s.step, seconds_since(start));
    if (comm == nullptr) {
      values = values_of(terms);
      check_finite(values.front());
      terms.front().second.backward();
    } else {
      (terms.front().second * spec.batch_share).backward();
      const auto reduce_start = Clock::now();
      detail::StepAgreement agreed =
          detail::agree_on_step(*comm, terms, spec.batch_share, !within_budget(s.step + 1), progress, parameters);
      values = std::move(agreed.values);
      stop = agreed.stop;
      progress = agreed.progress;
      check_finite(values.front());
      detail::sum_gradients(*comm, parameters);
      reduce_seconds += seconds_since(reduce_start);
    }
    auto& options = optimizer.param_groups()[0].options();
    const double scheduled = scheduled_learning_rate(c, progress, options.get_lr());
    last_lr = scheduled * anneal_factor(c, progress);
    options.set_lr(last_lr);
    optimizer.step();
    options.set_lr(scheduled);  // the plateau decay and the checkpoints keep the rate before the anneal
    ++s.step;
    for (size_t i = 0; i < terms.size(); ++i) s.sums[terms[i].first] += values[i];
    s.epoch_sum += values.front();
    if (s.step % c.steps_per_epoch == 0) end_epoch(c, optimizer, s);
    const double elapsed = seconds_since(start);
    const double rate = double((s.step - first_step) * spec.samples_per_step) / std::max(elapsed, 1e-9);
    if (o.log && leader && (seconds_since(last_log) > 2.0 || s.step == c.steps)) {
      o.log(progress_line(spec, c, s, terms, values, rate, last_lr) +
            utilisation_text(spec.routed));
      last_log = Clock::now();
    }
    if (leader && seconds_since(last_save) > 60.0 * c.checkpoint_minutes) {
      detail::save_checkpoint(path, spec, optimizer, s, world_size);
      last_save = Clock::now();
    }
    go = s.step < c.steps && (comm == nullptr ? within_budget(s.step) : !stop);
  }
  const std::map<std::string, double> memory = detail::process_memory_mb();  // while every rank still maps the data
  if (leader) detail::save_checkpoint(path, spec, optimizer, s, world_size);
  report.steps = s.step;
  report.finished = s.step >= c.steps;
  report.first_losses = s.first;
  report.last_losses = s.last;
  const double wall = seconds_since(start);
  report.metrics["seconds_wall"] = wall;
  report.metrics["samples_per_s"] = double((s.step - first_step) * spec.samples_per_step) / std::max(wall, 1e-9);
  int64_t parameter_count = 0;
  for (const torch::Tensor& p : parameters) parameter_count += p.numel();
  report.metrics["parameters"] = double(parameter_count);
  report.metrics["learning_rate_last"] = last_lr;
  for (const auto& [name, mb] : memory) report.metrics["memory_" + name + "_mb"] = mb;
  if (comm != nullptr && s.step > first_step) {
    report.metrics["allreduce_ms_per_step"] = 1000.0 * reduce_seconds / double(s.step - first_step);
  }
}

}  // namespace lmm::training
