#include "lmm/training/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <dlfcn.h>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "lmm/asset/blob.hpp"
#include "lmm/blob_writer.hpp"
#include "lmm/training/adan.hpp"
#include "lmm/training/flat_index.hpp"
#include "lmm/training/models.hpp"
#include "lmm/training/pose_data.hpp"
#include "lmm/training/shared_data.hpp"
#include "training_loop.hpp"

namespace lmm::training {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kTwoPi = 6.283185307179586;

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

// Scalars of a training run that a checkpoint restores.
struct LoopState {
  int64_t step = 0;
  double best = INFINITY, epoch_sum = 0.0, smoothed = NAN;
  int64_t epoch_count = 0, bad_epochs = 0;
  std::map<std::string, double> sums, first, last;
};

torch::Tensor scalar(double v) { return torch::tensor(v, torch::kFloat64); }

// A checkpoint file is a blob (lmm/asset/blob.hpp) of this kind whose one hashed U8 tensor holds the
// LibTorch archive, so a damaged or truncated file is rejected before LibTorch parses it.
constexpr char kCheckpointKind[] = "LMCK";
constexpr uint32_t kCheckpointVersion = 1;
constexpr char kArchiveTensor[] = "torch_archive";

// Writes `archive` to `path` as a checkpoint blob through write_file_atomic: `path` keeps its old
// contents unless the new file is complete. Throws std::runtime_error naming `path`.
void write_checkpoint_file(const std::string& path, torch::serialize::OutputArchive& archive) {
  std::string bytes;
  try {
    archive.save_to([&](const void* data, size_t size) {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": cannot serialise the checkpoint: " + e.what_without_backtrace());
  }
  BlobBuilder builder;
  builder.add(kArchiveTensor, DType::U8, {bytes.size()}, bytes.data());
  std::vector<uint8_t> blob;
  std::string error;
  if (!builder.build(kCheckpointKind, kCheckpointVersion, true, blob, error) ||
      !write_file_atomic(path, blob.data(), blob.size(), error)) {
    throw std::runtime_error(error.rfind(path, 0) == 0 ? error : path + ": " + error);
  }
}

// The bytes of file `path`: read here, or with `comm` read by rank 0 and sent to every rank (the
// ranks need not share a filesystem). Throws std::runtime_error, on every rank, with `missing`
// when the file does not exist (and `missing` is not empty) or with read_file's message.
AlignedBuffer read_shared_file(const std::string& path, const std::string& missing, Communicator* comm) {
  auto read_here = [&] {
    if (!missing.empty() && !fs::exists(path)) throw std::runtime_error(missing);
    AlignedBuffer file;
    std::string error;
    if (!read_file(path, file, error)) throw std::runtime_error(error);
    return file;
  };
  if (comm == nullptr) return read_here();
  const std::string bytes = comm->broadcast_from_leader([&] {
    const AlignedBuffer file = read_here();
    return std::string(reinterpret_cast<const char*>(file.data()), file.size());
  });
  AlignedBuffer shared(bytes.size());
  std::memcpy(shared.data(), bytes.data(), bytes.size());
  return shared;
}

// Reads checkpoint `path` (through read_shared_file) into `archive` after checking its header,
// size and hashes. Throws std::runtime_error naming `path` when it is missing, damaged or not a
// checkpoint.
void read_checkpoint_file(const std::string& path, torch::serialize::InputArchive& archive, Communicator* comm = nullptr,
                          const std::string& missing = {}) {
  const AlignedBuffer file = read_shared_file(path, missing, comm);
  std::string error;
  BlobView blob;
  const TensorView* bytes = nullptr;
  if (!blob.open(file.data(), file.size(), kCheckpointKind, kCheckpointVersion, kCheckpointVersion, error) ||
      (bytes = blob.require(kArchiveTensor, DType::U8, 1, error)) == nullptr) {
    throw std::runtime_error(path + " is not an intact lmm-train checkpoint (" + error + ")");
  }
  try {
    archive.load_from(reinterpret_cast<const char*>(bytes->data), bytes->element_count);
  } catch (const c10::Error&) {
    throw std::runtime_error(path + " is not a readable checkpoint");
  }
}

// Writes the training state; throws std::runtime_error naming `path` when the file cannot be
// written (e.g. disk full), with the previous checkpoint at `path` kept.
void save_checkpoint(const std::string& path, const LoopSpec& spec, const torch::optim::Optimizer& optimizer,
                     const LoopState& s, int world_size) {
  torch::serialize::OutputArchive archive, model, optim, losses;
  spec.net->save(model);
  optimizer.save(optim);
  archive.write("model", model);
  archive.write("optimizer", optim);
  archive.write("step", torch::tensor(s.step));
  archive.write("best", scalar(s.best));
  archive.write("epoch_sum", scalar(s.epoch_sum));
  archive.write("smoothed", scalar(s.smoothed));
  archive.write("epoch_count", torch::tensor(s.epoch_count));
  archive.write("bad_epochs", torch::tensor(s.bad_epochs));
  archive.write("lr", scalar(optimizer.param_groups()[0].options().get_lr()));
  for (const auto& [name, v] : s.sums) losses.write("sum_" + name, scalar(v));
  for (const auto& [name, v] : s.first) losses.write("first_" + name, scalar(v));
  for (const auto& [name, v] : s.last) losses.write("last_" + name, scalar(v));
  archive.write("losses", losses);
  archive.write("rng", at::detail::getDefaultCPUGenerator().get_state());
  archive.write("world_size", torch::tensor(int64_t(world_size)));
  try {
    write_checkpoint_file(path, archive);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + "; training stopped at step " + std::to_string(s.step) +
                             ", the previous checkpoint (if any) is kept");
  }
  torch::serialize::InputArchive written;
  read_checkpoint_file(path, written);  // read back: what was written loads
}

// Loads `module` from the "model" entry of `archive`; throws when a tensor's name or shape
// differs from the module's own (LibTorch would otherwise adopt the file's shapes silently).
void load_module_checked(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& item : module.named_parameters()) expected.emplace_back(item.key(), item.value().sizes().vec());
  for (const auto& item : module.named_buffers()) expected.emplace_back(item.key(), item.value().sizes().vec());
  const std::string mismatch = path + " does not match this preset and database (was it trained with another "
                                      "--config or --db, or by an older lmmkit?)";
  torch::serialize::InputArchive model;
  try {
    archive.read("model", model);
    module.load(model);
  } catch (const c10::Error&) {
    throw std::runtime_error(mismatch);
  }
  size_t i = 0;
  for (const auto& item : module.named_parameters()) {
    if (expected[i].first != item.key() || expected[i].second != item.value().sizes().vec()) throw std::runtime_error(mismatch);
    ++i;
  }
  for (const auto& item : module.named_buffers()) {
    if (expected[i].first != item.key() || expected[i].second != item.value().sizes().vec()) throw std::runtime_error(mismatch);
    ++i;
  }
}

// The optimiser, schedule, loss averages and RNG state of a checkpoint `archive`.
void load_training_state(torch::serialize::InputArchive& archive, torch::optim::Optimizer& optimizer, LoopState& s,
                         const std::vector<std::string>& terms) {
  torch::serialize::InputArchive optim, losses;
  archive.read("optimizer", optim);
  optimizer.load(optim);
  auto value = [&](const char* key) {
    torch::Tensor t;
    archive.read(key, t);
    return t;
  };
  s.step = value("step").item<int64_t>();
  s.best = value("best").item<double>();
  s.epoch_sum = value("epoch_sum").item<double>();
  s.smoothed = value("smoothed").item<double>();
  s.epoch_count = value("epoch_count").item<int64_t>();
  s.bad_epochs = value("bad_epochs").item<int64_t>();
  optimizer.param_groups()[0].options().set_lr(value("lr").item<double>());
  archive.read("losses", losses);
  const std::pair<const char*, std::map<std::string, double>*> maps[] = {
      {"sum_", &s.sums}, {"first_", &s.first}, {"last_", &s.last}};
  for (const std::string& name : terms) {
    for (const auto& [prefix, map] : maps) {
      c10::IValue value;
      if (losses.try_read(prefix + name, value)) (*map)[name] = value.toTensor().item<double>();
    }
  }
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  generator.set_state(value("rng"));
}

// Throws std::runtime_error naming `path` when its checkpoint was written by a run of another
// world size than `world_size` (one without the entry: by a single process).
void check_world_size(torch::serialize::InputArchive& archive, int world_size, const std::string& path) {
  c10::IValue saved;
  const int64_t written = archive.try_read("world_size", saved) ? saved.toTensor().item<int64_t>() : 1;
  if (written != world_size) {
    throw std::runtime_error("--resume: " + path + " was written by a run of " + std::to_string(written) +
                             " rank(s); resume it with --world-size " + std::to_string(written) + " (this run has " +
                             std::to_string(world_size) + ")");
  }
}

// Restores the training state from `path` (rank 0's file on every rank); throws
// std::runtime_error naming it when the file is missing, damaged, does not hold this model's
// complete state or was written with another world size.
void load_checkpoint(const std::string& path, const LoopSpec& spec, torch::optim::Optimizer& optimizer, LoopState& s,
                     const std::vector<std::string>& terms, Communicator* comm) {
  torch::serialize::InputArchive archive;
  read_checkpoint_file(path, archive, comm, "--resume: no checkpoint " + path);
  check_world_size(archive, comm == nullptr ? 1 : comm->world_size(), path);
  load_module_checked(*spec.net, archive, path);
  try {
    load_training_state(archive, optimizer, s, terms);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + " does not hold a complete training state (" + e.what_without_backtrace() + ")");
  }
}

// Ends a virtual epoch: records first / last averages and applies the plateau decay
// (Kleanthous & Martini 2023 Sec. 5: lr *= gamma after `patience` epochs without improvement of the smoothed loss).
void end_epoch(const TrainingConfig& c, torch::optim::Optimizer& optimizer, LoopState& s) {
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

std::string progress_line(const LoopSpec& spec, const TrainingConfig& c, const LoopState& s, const Terms& terms,
                          const std::vector<double>& values, double rate, double lr) {
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

// Whether this process reports (one process, or rank 0 of a data-parallel run).
bool is_leader(const TrainOptions& o) { return !o.communicator || o.communicator->rank() == 0; }

// The loss terms' values of one process's batch.
std::vector<double> values_of(const Terms& terms) {
  std::vector<double> values;
  for (const auto& term : terms) values.push_back(term.second.item<double>());
  return values;
}

// What the ranks of a data-parallel run agree on after a step's backward pass.
struct StepAgreement {
  std::vector<double> values;  // loss terms over the global batch
  bool stop = false;           // some rank wants to stop after this step
  double progress = 0.0;       // rank 0's run progress (the learning-rate schedule's clock)
};

// One small all-reduce after the backward pass: the ranks' loss terms weighted by their share of
// the batch (the terms over the global batch: each is a mean over samples, or the same on every
// rank), whether any rank wants to stop, and which parameters have a gradient on some rank. Those
// get one on every rank (zeros where this rank has none), as a single process would give them.
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

// Sums the gradients of `parameters` across ranks (bucketed); each rank's loss was weighted by its
// share of the batch, so the sum is the gradient of the loss over the global batch.
void sum_gradients(Communicator& comm, const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  comm.all_reduce_sum(grads);
}

// While it lives, every SMoE of `net` computes its load-balancing loss from the routing
// distribution of the global batch (an all-reduce of the ranks' means per forward pass).
class GlobalRouting {
 public:
  GlobalRouting(torch::nn::Module& net, Communicator* comm) {
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
  ~GlobalRouting() {
    for (SmoeImpl* smoe : smoes_) smoe->set_batch_mean(nullptr);
  }
  GlobalRouting(const GlobalRouting&) = delete;
  GlobalRouting& operator=(const GlobalRouting&) = delete;

 private:
  std::vector<SmoeImpl*> smoes_;
};

// This process's memory now, in MiB, from /proc/self/smaps_rollup: "rss" (resident), "pss"
// (proportional: each shared page split among the processes mapping it), "private" and "shared"
// (resident pages mapped by this process only, or by others too); empty where it cannot be read.
std::map<std::string, double> process_memory_mb() {
  const std::pair<const char*, const char*> keys[] = {{"Rss:", "rss"}, {"Pss:", "pss"}, {"Private_Clean:", "private"},
                                                      {"Private_Dirty:", "private"}, {"Shared_Clean:", "shared"},
                                                      {"Shared_Dirty:", "shared"}};
  std::map<std::string, double> mb;
  std::ifstream rollup("/proc/self/smaps_rollup");
  for (std::string line; std::getline(rollup, line);) {  // "Rss:  1234 kB"; the first line is the address range
    std::istringstream fields(line);
    std::string key;
    double kb = 0.0;
    if (!(fields >> key >> kb)) continue;
    for (const auto& [field, name] : keys) {
      if (key == field) mb[name] += kb / 1024.0;
    }
  }
  return mb;
}

}  // namespace

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
  const bool leader = is_leader(o);
  const int world_size = comm == nullptr ? 1 : comm->world_size();
  LoopState s;
  const std::string path = checkpoint_path(o.out_dir, spec.model);
  if (o.resume) {
    std::vector<std::string> names;
    for (const auto& term : spec.step()) names.push_back(term.first);  // term names only
    optimizer.zero_grad();
    load_checkpoint(path, spec, optimizer, s, names, comm);
    if (o.log && leader) o.log("resumed " + spec.model + " at step " + std::to_string(s.step));
  }
  const GlobalRouting global_routing(*spec.net, comm);
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
      StepAgreement agreed = agree_on_step(*comm, terms, spec.batch_share, !within_budget(s.step + 1), progress,
                                           parameters);
      values = std::move(agreed.values);
      stop = agreed.stop;
      progress = agreed.progress;
      check_finite(values.front());
      sum_gradients(*comm, parameters);
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
      save_checkpoint(path, spec, optimizer, s, world_size);
      last_save = Clock::now();
    }
    go = s.step < c.steps && (comm == nullptr ? within_budget(s.step) : !stop);
  }
  const std::map<std::string, double> memory = process_memory_mb();  // while every rank still maps the data
  if (leader) save_checkpoint(path, spec, optimizer, s, world_size);
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

namespace {

// This process's shard of a global batch of `global` rows (all of it without a communicator).
BatchShard shard_of(const TrainOptions& o, int64_t global) {
  return o.communicator ? batch_shard(global, o.communicator->rank(), o.communicator->world_size())
                        : BatchShard{global, 0, global};
}

// Geodesic angle between rotation matrices [..., 3, 3] (Kleanthous & Martini 2023 Eq. 19), in radians.
torch::Tensor geodesic(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor trace = (a * b).sum({-2, -1});  // trace(a b^T), without a batched matmul
  return torch::acos(((trace - 1.0) / 2.0).clamp(-1.0 + 1e-6, 1.0 - 1e-6));
}

// Per-joint weighted mean over joints of per-joint errors [B, J].
torch::Tensor weighted(const torch::Tensor& per_joint, const torch::Tensor& weights) {
  return (per_joint * weights).mean();
}

// Decoder output to pose vectors: denormalised, contact slots kept as logits.
torch::Tensor denormalize(const PoseData& d, const torch::Tensor& out) { return out * d.pose_std + d.pose_mean; }

// Adds the rows each expert of `net` took in its last forward pass of `rows` rows to `total`
// (an empty tensor at first). Nothing for a network without experts.
void add_expert_use(const Network& net, int64_t rows, torch::Tensor& total) {
  if (!net || !net->utilisation().defined()) return;
  const torch::Tensor taken = net->utilisation() * double(rows);
  total = total.defined() ? total + taken : taken;
}

// expert_use_min / _max: the least and the most used expert of `total` (add_expert_use) as
// multiples of uniform use, as lmm-eval's *_expert_use_* over the database.
void report_expert_use(const torch::Tensor& total, TrainReport& report) {
  if (!total.defined()) return;
  const double uniform = total.sum().item<double>() / double(total.numel());
  if (!(uniform > 0.0)) return;
  report.metrics["expert_use_min"] = total.min().item<double>() / uniform;
  report.metrics["expert_use_max"] = total.max().item<double>() / uniform;
}

// report_expert_use of `net` when `forward` (which runs it) takes every row of `inputs`, in chunks.
template <typename Forward>
void report_expert_use_over(const Network& net, const torch::Tensor& inputs, const Forward& forward,
                            TrainReport& report) {
  torch::NoGradGuard no_grad;
  torch::Tensor expert_use;
  for (int64_t s = 0; s < inputs.size(0); s += 4096) {
    const int64_t b = std::min<int64_t>(4096, inputs.size(0) - s);
    forward(inputs.narrow(0, s, b));
    add_expert_use(net, b, expert_use);
  }
  report_expert_use(expert_use, report);
}

// Mean and 95th percentile of model-space joint position errors (cm) over all frames, and the
// decoder's expert use over them.
void decoder_metrics(const PoseData& d, Autoencoder& ae, const torch::Tensor& x, TrainReport& report) {
  torch::NoGradGuard no_grad;
  ae->eval();
  std::vector<torch::Tensor> errors;
  torch::Tensor expert_use;
  const int64_t n = x.size(0);
  for (int64_t s = 0; s < n; s += 4096) {
    const int64_t b = std::min<int64_t>(4096, n - s);
    const torch::Tensor z = ae->encoder->forward(x.narrow(0, s, b));
    const torch::Tensor pose = denormalize(d, ae->decoder->forward(torch::cat({z, d.features.narrow(0, s, b)}, 1)));
    add_expert_use(ae->decoder, b, expert_use);
    errors.push_back((pose_to_model_positions(d, pose) - d.model_positions.narrow(0, s, b)).norm(2, -1).reshape(-1));
  }
  report_expert_use(expert_use, report);
  const torch::Tensor all = torch::cat(errors) * 100.0;
  report.metrics["mean_joint_error_cm"] = all.mean().item<double>();
  // kthvalue: torch::quantile refuses inputs over 2^24 elements (large databases).
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(0.95 * double(all.numel()))));
  report.metrics["p95_joint_error_cm"] = std::get<0>(all.kthvalue(k)).item<double>();
  ae->train();
}

// The trained autoencoder of o.out_dir (rank 0's) for this preset and database, in eval mode.
Autoencoder load_autoencoder(const TrainingConfig& c, const PoseData& d, int64_t encoder_in, const TrainOptions& o) {
  const std::string path = checkpoint_path(o.out_dir, "autoencoder");
  Autoencoder ae(encoder_in, d.features.size(1), d.layout.size(), c);
  torch::serialize::InputArchive archive;
  read_checkpoint_file(path, archive, o.communicator.get(), "no " + path + ": run 'lmm-train autoencoder' with this --out first");
  load_module_checked(*ae, archive, path);
  ae->eval();
  for (auto& p : ae->parameters()) p.set_requires_grad(false);
  return ae;
}

// Latent of every frame [N, L] from the encoder.
torch::Tensor latents(Autoencoder& ae, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t s = 0; s < x.size(0); s += 8192) parts.push_back(ae->encoder->forward(x.narrow(0, s, std::min<int64_t>(8192, x.size(0) - s))));
  return torch::cat(parts, 0);
}

// Frames f whose clip continues for at least `length` more frames.
torch::Tensor rollout_starts(const Database& db, int64_t length) {
  std::vector<int64_t> starts;
  for (const DatabaseRange& r : db.ranges()) {
    for (int64_t f = r.start; f + length < r.stop; ++f) starts.push_back(f);
  }
  return torch::tensor(starts, torch::kInt64);
}

// The states `s` after `frames` steps of the stepper, without gradient.
torch::Tensor rolled_out(Stepper& stepper, torch::Tensor s, int64_t frames) {
  torch::NoGradGuard no_grad;
  for (int64_t n = 0; n < frames; ++n) s = s + stepper->forward(s);
  return s;
}

// Mean model-space joint error (cm) after rolling the stepper `frames` frames from 1,000
// seeded random starts and decoding; NaN when no clip is long enough.
double rollout_error_cm(const Database& db, const PoseData& d, Autoencoder& ae, Stepper& stepper,
                        const torch::Tensor& state, int64_t frames) {
  const torch::Tensor candidates = rollout_starts(db, frames);
  if (candidates.numel() == 0) return NAN;
  torch::NoGradGuard no_grad;
  std::mt19937 rng(12345);
  std::vector<int64_t> picks;
  for (int i = 0; i < 1000; ++i) picks.push_back(candidates[int64_t(rng() % uint64_t(candidates.numel()))].item<int64_t>());
  const torch::Tensor starts = torch::tensor(picks, torch::kInt64);
  stepper->eval();
  const torch::Tensor s = rolled_out(stepper, state.index_select(0, starts), frames);
  stepper->train();
  const torch::Tensor pose = denormalize(d, ae->decoder->forward(s));
  const torch::Tensor truth = d.model_positions.index_select(0, starts + frames);
  return (pose_to_model_positions(d, pose) - truth).norm(2, -1).mean().item<double>() * 100.0;
}

// How long data-parallel ranks wait for rank 0 to prepare the shared training data.
constexpr double kTrainingDataPreparationSeconds = 600.0;

// The training data of `db`: computed in this process, or, for a rank of a data-parallel run,
// mapped from the cache file the leader prepared in out_dir (shared by the ranks on its machine).
TrainingData training_data(const Database& db, const TrainOptions& o) {
  if (o.communicator == nullptr) return compute_training_data(db);
  // Preparing takes rank 0 about 19 s for all of bandai-loco: the others wait up to 10 minutes (a
  // rank that dies still stops them at once).
  const TrainingDataCache cache = training_data_cache(db, o.out_dir);
  o.communicator->run_on_leader([&] { prepare_training_data_cache(db, cache); }, kTrainingDataPreparationSeconds);
  TrainingData data = map_training_data(db, cache);
  if (o.log) o.log("training data mapped from " + data.mapped_from + ", shared by the ranks on this machine");
  return data;
}

// Everything stepper and projector training share: pose data, encoder inputs, the frozen
// autoencoder and the per-frame state (latent ++ features).
struct LatentSetup {
  PoseData d;
  torch::Tensor x, state;
  Autoencoder ae{nullptr};
};

LatentSetup latent_setup(const TrainingConfig& c, const Database& db, const TrainOptions& o) {
  torch::manual_seed(c.seed);
  use_threads(c.threads);
  fs::create_directories(o.out_dir);
  TrainingData data = training_data(db, o);
  LatentSetup s{std::move(data.d), std::move(data.x), {}, nullptr};
  s.ae = load_autoencoder(c, s.d, s.x.size(1), o);
  s.state = torch::cat({latents(s.ae, s.x), s.d.features}, 1);
  return s;
}

}  // namespace

torch::Tensor encoder_inputs(const PoseData& d, torch::Tensor& mean, torch::Tensor& std) {
  const torch::Tensor x = torch::cat({d.pose, d.model_positions.reshape({d.pose.size(0), -1})}, 1);
  mean = x.mean(0);
  std = x.std(0).clamp_min(1e-4);
  return (x - mean) / std;
}

void load_checkpoint_module(torch::nn::Module& module, const std::string& path) {
  torch::serialize::InputArchive archive;
  read_checkpoint_file(path, archive, nullptr, "no checkpoint " + path);
  load_module_checked(module, archive, path);
}

TrainReport train_stepper(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.stepper);
  LatentSetup setup = latent_setup(c, db, o);
  const torch::Tensor& state = setup.state;
  const int64_t dims = state.size(1), latent = c.latent;
  const int64_t longest = c.free_rollout + c.rollout;
  const torch::Tensor starts = rollout_starts(db, longest);
  if (starts.numel() == 0) {
    throw std::runtime_error("no clip is longer than the rollout of " + std::to_string(longest) + " frames (" +
                             std::to_string(c.free_rollout) + " free, " + std::to_string(c.rollout) + " trained)");
  }
  Stepper stepper(dims, c.stepper);
  const torch::Tensor deltas = state.narrow(0, 1, state.size(0) - 1) - state.narrow(0, 0, state.size(0) - 1);
  const torch::Tensor state_std = state.std(0).clamp_min(1e-4);
  {
    torch::NoGradGuard no_grad;
    stepper->delta_scale.copy_(deltas.index_select(0, setup.d.pair_starts).std(0).clamp_min(1e-5));
    if (c.stepper.normalize_input) {
      stepper->input_mean.copy_(state.mean(0));
      stepper->input_std.copy_(state_std);
    }
  }
  // Latent dimensions weigh twice the feature dimensions (Sec. 5.9).
  const torch::Tensor weights = torch::cat({torch::full({latent}, 2.0), torch::ones({dims - latent})});
  const torch::Tensor offsets = torch::arange(c.rollout + 1, torch::kInt64);
  LoopSpec spec;
  spec.model = "stepper";
  spec.net = stepper.ptr().get();
  spec.routed = stepper->net;
  spec.samples_per_step = c.batch * c.rollout;
  const BatchShard shard = shard_of(o, c.batch);  // every rank draws the global batch and takes its rows
  spec.batch_share = shard.share();
  spec.step = [&]() -> Terms {
    const torch::Tensor start = starts.index_select(0, shard.take(torch::randint(starts.size(0), {c.batch}, torch::kInt64)));
    const int64_t free = c.free_rollout > 0 ? torch::randint(c.free_rollout + 1, {1}, torch::kInt64).item<int64_t>() : 0;
    torch::Tensor s = rolled_out(
        stepper, state.index_select(0, start) + shard.take(torch::randn({c.batch, dims})) * (c.start_noise * state_std), free);
    const torch::Tensor f = start + free;  // the trained rollout's first frame
    const torch::Tensor frames = (f.unsqueeze(1) + offsets.unsqueeze(0)).reshape(-1);
    const torch::Tensor truth = state.index_select(0, frames).reshape({shard.count, c.rollout + 1, dims});
    torch::Tensor values = torch::zeros({}), changes = torch::zeros({}), balance = torch::zeros({});
    std::vector<torch::Tensor> decoded_states, decoded_frames;
    for (int64_t n = 0; n < c.rollout; ++n) {
      const torch::Tensor delta = stepper->forward(s);
      const torch::Tensor next = s + delta;
      const torch::Tensor target = truth.select(1, n + 1);
      values = values + (((next - target) / state_std).pow(2) * weights).mean();
      changes = changes + (((delta - (target - truth.select(1, n))) / stepper->delta_scale).pow(2) * weights).mean();
      balance = balance + stepper->net->load_balance(c.balance);
      if (c.w_stepper_pose > 0.0 && (n + 1) % c.stepper_pose_every == 0) {
        decoded_states.push_back(next);
        decoded_frames.push_back(f + (n + 1));
      }
      s = next;
    }
    values = values / double(c.rollout);
    changes = changes / double(c.rollout);
    balance = balance / double(c.rollout);
    Terms terms{{"total", values + changes + c.w_load_balance * balance}, {"values", values}, {"deltas", changes},
                {"load_balance", balance}};
    if (!decoded_states.empty()) {  // the decoded-pose term, when the preset weighs it
      const torch::Tensor decoded = denormalize(setup.d, setup.ae->decoder->forward(torch::cat(decoded_states, 0)));
      const torch::Tensor truth_positions = setup.d.model_positions.index_select(0, torch::cat(decoded_frames, 0));
      const torch::Tensor pose_cm = (pose_to_model_positions(setup.d, decoded) - truth_positions).norm(2, -1).mean() * 100.0;
      terms.front().second = terms.front().second + c.w_stepper_pose * pose_cm;
      terms.emplace_back("pose_cm", pose_cm);
    }
    return terms;
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (!is_leader(o)) return report;
  const int64_t fps = int64_t(std::lround(setup.d.fps));
  report.metrics["rollout_error_cm_0.5s"] = rollout_error_cm(db, setup.d, setup.ae, stepper, state, fps / 2);
  report.metrics["rollout_error_cm_2s"] = rollout_error_cm(db, setup.d, setup.ae, stepper, state, 2 * fps);
  stepper->eval();
  report_expert_use_over(stepper->net, state, [&](const torch::Tensor& rows) { stepper->forward(rows); }, report);
  return report;
}

TrainReport train_projector(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.projector);
  LatentSetup setup = latent_setup(c, db, o);
  const torch::Tensor& state = setup.state;
  const torch::Tensor& features = setup.d.features;
  const int64_t dims = state.size(1), latent = c.latent, n = features.size(0);
  Projector projector(features.size(1), dims, c.projector);
  {
    torch::NoGradGuard no_grad;
    projector->state_mean.copy_(state.mean(0));
    projector->state_std.copy_(state.std(0).clamp_min(1e-4));
  }
  const torch::Tensor contiguous = features.contiguous();
  const FlatIndex index(contiguous.data_ptr<float>(), n, features.size(1));
  // Noisy queries and the exact nearest frame of each (Sec. 5.6, Eq. 26-31): `shard`'s rows of a
  // batch of shard.global queries, labelled here.
  auto noisy_batch = [&](const BatchShard& shard, torch::Tensor& query, torch::Tensor& nearest) {
    const int64_t count = shard.global;
    const torch::Tensor f = torch::randint(n, {count}, torch::kInt64);
    query = shard.take(features.index_select(0, f) + torch::rand({count, 1}) * torch::randn({count, features.size(1)})).contiguous();
    nearest = torch::empty({shard.count}, torch::kInt64);
    index.nearest_batch(query.data_ptr<float>(), shard.count, nearest.data_ptr<int64_t>(), c.threads);
  };
  const BatchShard shard = shard_of(o, c.batch);
  LoopSpec spec;
  spec.model = "projector";
  spec.net = projector.ptr().get();
  spec.routed = projector->net;
  spec.samples_per_step = c.batch;
  spec.batch_share = shard.share();
  spec.step = [&]() -> Terms {
    torch::Tensor query, nearest;
    noisy_batch(shard, query, nearest);
    const torch::Tensor target = state.index_select(0, nearest);
    const torch::Tensor predicted = projector->forward(query);
    const torch::Tensor feature_loss = (predicted.narrow(1, latent, dims - latent) - target.narrow(1, latent, dims - latent)).abs().mean();
    const torch::Tensor latent_loss = (predicted.narrow(1, 0, latent) - target.narrow(1, 0, latent)).abs().mean();
    const torch::Tensor distance = ((target.narrow(1, latent, dims - latent) - query).pow(2).sum(1) -
                                    (predicted.narrow(1, latent, dims - latent) - query).pow(2).sum(1)).abs().mean();
    const torch::Tensor balance = projector->net->load_balance(c.balance);
    const torch::Tensor total = c.w_projector_features * feature_loss + c.w_projector_latent * latent_loss +
                                c.w_projector_distance * distance + c.w_load_balance * balance;
    return {{"total", total}, {"features", feature_loss}, {"latent", latent_loss}, {"query_distance", distance},
            {"load_balance", balance}};
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (!is_leader(o)) return report;
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(777);
    torch::Tensor query, nearest;
    noisy_batch(BatchShard{1000, 0, 1000}, query, nearest);
    projector->eval();
    const torch::Tensor projected = projector->forward(query).narrow(1, latent, dims - latent);
    const double ours = (projected - query).norm(2, 1).mean().item<double>();
    const double exact = (features.index_select(0, nearest) - query).norm(2, 1).mean().item<double>();
    report.metrics["projector_feature_error"] = ours / exact;
    report.metrics["projector_latent_error"] = (projector->forward(query).narrow(1, 0, latent) -
                                                setup.state.index_select(0, nearest).narrow(1, 0, latent)).abs().mean().item<double>();
  }
  report_expert_use_over(projector->net, features, [&](const torch::Tensor& rows) { projector->forward(rows); }, report);
  return report;
}

std::string checkpoint_path(const std::string& out_dir, const std::string& model) {
  return (fs::path(out_dir) / (model + ".pt")).string();
}

namespace {

// Latents of every frame from the encoder of out_dir's autoencoder checkpoint, loaded into `ae`,
// whose encoder then stays fixed (no gradients, so the optimiser leaves it alone).
torch::Tensor frozen_encoder_latents(Autoencoder& ae, const torch::Tensor& x, const TrainOptions& o) {
  if (!o.resume) throw std::runtime_error("freezing the encoder continues a trained autoencoder: resume from its checkpoint");
  const std::string path = checkpoint_path(o.out_dir, "autoencoder");
  torch::serialize::InputArchive archive;  // read by rank 0 and shared, as --resume reads it
  read_checkpoint_file(path, archive, o.communicator.get(), "no " + path + " to resume");
  load_module_checked(*ae, archive, path);
  for (auto& p : ae->encoder->parameters()) p.set_requires_grad(false);
  if (o.log) o.log("encoder frozen: training the decoder alone on its latents");
  return latents(ae, x);
}

}  // namespace

TrainReport train_autoencoder(const TrainingConfig& preset, const Database& db, const TrainOptions& o) {
  const TrainingConfig c = for_network(preset, preset.decoder);
  torch::manual_seed(c.seed);
  use_threads(c.threads);
  fs::create_directories(o.out_dir);
  const TrainingData data = training_data(db, o);
  const PoseData& d = data.d;
  const PoseLayout& l = d.layout;
  const torch::Tensor& x = data.x;
  Autoencoder ae(x.size(1), d.features.size(1), l.size(), c);
  const torch::Tensor frozen_latents = o.freeze_encoder ? frozen_encoder_latents(ae, x, o) : torch::Tensor();
  const torch::Tensor contact_index = torch::tensor(d.contact_joints, torch::kInt64);
  const double fps = d.fps;

  LoopSpec spec;
  spec.model = "autoencoder";
  spec.net = ae.ptr().get();
  spec.routed = ae->decoder;
  spec.samples_per_step = c.batch;
  const BatchShard pairs = shard_of(o, c.batch / 2);  // every rank draws the global batch and takes its pairs
  spec.batch_share = pairs.share();
  spec.step = [&]() -> Terms {
    const torch::Tensor i0 = d.pair_starts.index_select(0, pairs.take(torch::randint(d.pair_starts.size(0), {c.batch / 2}, torch::kInt64)));
    const torch::Tensor frames = torch::cat({i0, i0 + 1});  // [frame 0 of each pair..., frame 1...]
    const int64_t b = frames.size(0), half = b / 2;
    const torch::Tensor truth = d.pose.index_select(0, frames);
    const torch::Tensor z = o.freeze_encoder ? frozen_latents.index_select(0, frames) : ae->encoder->forward(x.index_select(0, frames));
    const torch::Tensor out = ae->decoder->forward(torch::cat({z, d.features.index_select(0, frames)}, 1));
    const torch::Tensor pose = denormalize(d, out);
    // Local positions (and root velocities) and rotations, hierarchically weighted (Sec. 5.2-5.3).
    const torch::Tensor lp = pose.narrow(1, l.positions(), 3 * l.joints).reshape({b, l.joints, 3});
    const torch::Tensor lt = truth.narrow(1, l.positions(), 3 * l.joints).reshape({b, l.joints, 3});
    const torch::Tensor root = (pose.narrow(1, l.root_velocity(), 6) - truth.narrow(1, l.root_velocity(), 6)).abs().mean();
    const torch::Tensor local_pos = weighted((lp - lt).abs().sum(-1), d.local_weights);
    const torch::Tensor r6 = pose.narrow(1, l.rotations(), 6 * l.joints).reshape({b, l.joints, 6});
    const torch::Tensor m_pred = matrices_from_6d(r6);
    const torch::Tensor m_true = matrices_from_6d(truth.narrow(1, l.rotations(), 6 * l.joints).reshape({b, l.joints, 6}));
    const torch::Tensor norms = (1.0 - r6.narrow(-1, 0, 3).norm(2, -1)).abs() + (1.0 - r6.narrow(-1, 3, 3).norm(2, -1)).abs();
    const torch::Tensor rotation = weighted(geodesic(m_pred, m_true) / kTwoPi + norms, d.local_weights);
    // Model space (Sec. 5.3) and velocities over the consecutive pair (Sec. 5.4).
    const torch::Tensor mp = model_space_positions(d.parents, lp, m_pred);
    const torch::Tensor mt = d.model_positions.index_select(0, frames);
    const torch::Tensor model_pos = weighted((mp - mt).abs().sum(-1), d.model_weights);
    auto velocity = [&](const torch::Tensor& p) { return (p.narrow(0, half, half) - p.narrow(0, 0, half)) * fps; };
    const torch::Tensor vel = (velocity(lp) - velocity(lt)).abs().mean() + (velocity(mp) - velocity(mt)).abs().mean();
    // Contacts (Sec. 5.5): BCE on the labels, and contact joints' velocity error where in contact.
    const torch::Tensor logits = pose.narrow(1, l.contact(), l.contacts);
    const torch::Tensor labels = truth.narrow(1, l.contact(), l.contacts);
    const torch::Tensor bce = torch::binary_cross_entropy_with_logits(logits, labels);
    const torch::Tensor cv_err = (velocity(mp.index_select(1, contact_index)) - velocity(mt.index_select(1, contact_index))).norm(2, -1);
    const torch::Tensor contact_velocity = (cv_err * labels.narrow(0, half, half)).mean();
    // Latent regularisation (Sec. 5.7).
    const torch::Tensor l1 = z.abs().mean(), l2 = z.pow(2).mean();
    const torch::Tensor latent_velocity = velocity(z).abs().mean();
    const torch::Tensor lipschitz = ae->encoder->lipschitz_product().squeeze();
    const torch::Tensor balance = ae->decoder->load_balance(c.balance);
    const torch::Tensor total = c.w_position * (local_pos + model_pos + root) + c.w_rotation * rotation +
                                c.w_velocity * vel + c.w_contact * bce + c.w_contact_velocity * contact_velocity +
                                c.w_latent_l1 * l1 + c.w_latent_l2 * l2 + c.w_latent_velocity * latent_velocity +
                                (c.lipschitz ? c.w_lipschitz * lipschitz : torch::zeros({})) + c.w_load_balance * balance;
    return {{"total", total},          {"position", local_pos + model_pos + root}, {"rotation", rotation},
            {"velocity", vel},         {"contact", bce},   {"contact_velocity", contact_velocity},
            {"latent_l1", l1},         {"latent_l2", l2},  {"latent_velocity", latent_velocity},
            {"load_balance", balance}};
  };
  TrainReport report;
  run_loop(c, spec, o, report);
  if (is_leader(o)) decoder_metrics(d, ae, x, report);
  return report;
}

}  // namespace lmm::training
