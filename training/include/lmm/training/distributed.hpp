// Data-parallel training over LibTorch's c10d, like PyTorch's DistributedDataParallel: every rank
// holds the model and a share of each global batch, and the ranks sum their gradients through a
// Gloo process group that meets at a TCP store served by rank 0.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace lmm::training {

// Where this process sits in a data-parallel run (world_size 1: a single process).
struct DistributedSettings {
  int world_size = 1;
  int rank = 0;
  std::string master_host = "127.0.0.1";  // rank 0's address, where it serves the TCP store
  int master_port = 29500;
  double timeout_seconds = 30.0;          // how long a rank waits for the others before it gives up
};

// The options as given on the command line; an empty string is an option not given.
struct DistributedArgs {
  std::string world_size, rank, master;  // --world-size N, --rank R, --master HOST:PORT
};

// The settings from `args`, where each option not given comes from the environment variables
// WORLD_SIZE, RANK and MASTER_ADDR + MASTER_PORT (`env` looks one up; null when unset). Throws
// std::invalid_argument naming the option or variable and the accepted range: a world size below
// 1, a rank outside 0..N-1, a rank without a world size (or the reverse), a port outside 1..65535.
DistributedSettings resolve_distributed(const DistributedArgs& args,
                                        const std::function<const char*(const char*)>& env);

// This rank's rows of a global batch: rows [begin, begin + count) of `global`, the ranks' rows
// together being the whole batch in order (the first global % world ranks take one row more).
struct BatchShard {
  int64_t global = 0, begin = 0, count = 0;
  // This rank's rows of `batch` (the global batch along dim 0): `batch` itself when they are all.
  torch::Tensor take(const torch::Tensor& batch) const;
  // The weight of this rank's mean loss in the mean over the global batch (count / global).
  double share() const { return double(count) / double(global); }
};

// Rank `rank` of `world_size`'s shard of a global batch of `global` rows. Throws
// std::invalid_argument when a rank would get no row (global < world_size).
BatchShard batch_shard(int64_t global, int rank, int world_size);

// A joined data-parallel run: the TCP store and the Gloo process group of this rank. Every
// collective is called by all ranks in the same order; one that fails (a rank stopped, or
// nothing arrived within the timeout) throws std::runtime_error saying so.
class Communicator {
 public:
  // Joins the run: rank 0 serves the store at master_host:master_port, every rank connects and
  // builds the process group. Throws std::runtime_error when the others do not join in time.
  explicit Communicator(const DistributedSettings& settings);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // This process's rank, 0..world_size() - 1.
  int rank() const { return settings_.rank; }
  // Ranks in the run.
  int world_size() const { return settings_.world_size; }
  // Sums CPU `tensors` of one dtype across ranks in place, packed into buckets of about `bucket_bytes`
  // (each bucket flattened, all-reduced and copied back).
  void all_reduce_sum(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes = 16 << 20);
  // Rank 0's `read()` on every rank (the others do not call it). When it throws
  // std::runtime_error, every rank throws one with its message.
  std::string broadcast_from_leader(const std::function<std::string()>& read);
  // Runs `prepare()` on rank 0 while the others wait for it, up to `timeout_seconds` (through the
  // store: the process group's collectives give up after the peer timeout); a rank 0 that stops
  // ends the wait at once. When it throws std::runtime_error, every rank throws one with its
  // message; a wait that times out throws one saying so.
  void run_on_leader(const std::function<void()>& prepare, double timeout_seconds);

 private:
  struct Impl;
  DistributedSettings settings_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmm::training
