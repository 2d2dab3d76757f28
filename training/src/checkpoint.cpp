#include "checkpoint.hpp"

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

#include "lmm/asset/blob.hpp"
#include "lmm/blob_writer.hpp"

namespace lmm::training {
namespace {

namespace fs = std::filesystem;

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

// The optimiser, schedule, loss averages and RNG state of a checkpoint `archive`.
void load_training_state(torch::serialize::InputArchive& archive, torch::optim::Optimizer& optimizer,
                         detail::LoopState& s, const std::vector<std::string>& terms) {
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

}  // namespace

namespace detail {

void read_checkpoint_file(const std::string& path, torch::serialize::InputArchive& archive, Communicator* comm,
                          const std::string& missing) {
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

}  // namespace detail

std::string checkpoint_path(const std::string& out_dir, const std::string& model) {
  return (fs::path(out_dir) / (model + ".pt")).string();
}

void load_checkpoint_module(torch::nn::Module& module, const std::string& path) {
  torch::serialize::InputArchive archive;
  detail::read_checkpoint_file(path, archive, nullptr, "no checkpoint " + path);
  detail::load_module_checked(module, archive, path);
}

}  // namespace lmm::training
