#include "lmm/training/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace lmm::training {
namespace {

// The first line of an exception's message (c10 errors append a backtrace).
std::string first_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  return text.substr(0, text.find('\n'));
}

// A value given as option `option` or else environment variable `variable`, and the name to cite.
struct Given {
  std::string text, name;
  bool present() const { return !name.empty(); }
};

Given given(const std::string& option_text, const char* option, const char* variable,
            const std::function<const char*(const char*)>& env) {
  if (!option_text.empty()) return {option_text, option};
  const char* value = env(variable);
  if (value != nullptr && *value != '\0') return {value, std::string(variable) + " (environment)"};
  return {};
}

// `g` as an integer in [low, high]; throws std::invalid_argument citing `g.name` and `range`.
long parse_in_range(const Given& g, long low, long high, const std::string& range) {
  size_t used = 0;
  long value = 0;
  try {
    value = std::stol(g.text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != g.text.size() || value < low || value > high) {
    throw std::invalid_argument(g.name + " '" + g.text + "': " + range);
  }
  return value;
}

constexpr long kMaxWorld = 1 << 16;

// HOST and PORT of --master HOST:PORT, or of MASTER_ADDR and MASTER_PORT.
void resolve_master(const DistributedArgs& args, const std::function<const char*(const char*)>& env,
                    DistributedSettings& s) {
  const std::string port_range = "the port must be an integer in 1..65535";
  if (!args.master.empty()) {
    const size_t colon = args.master.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw std::invalid_argument("--master '" + args.master + "': expected HOST:PORT, e.g. 10.0.0.1:29500");
    }
    s.master_host = args.master.substr(0, colon);
    s.master_port = int(parse_in_range({args.master.substr(colon + 1), "--master port"}, 1, 65535, port_range));
    return;
  }
  const Given host = given("", "", "MASTER_ADDR", env), port = given("", "", "MASTER_PORT", env);
  if (host.present()) s.master_host = host.text;
  if (port.present()) s.master_port = int(parse_in_range(port, 1, 65535, port_range));
}

}  // namespace

DistributedSettings resolve_distributed(const DistributedArgs& args,
                                        const std::function<const char*(const char*)>& env) {
  DistributedSettings s;
  const Given world = given(args.world_size, "--world-size", "WORLD_SIZE", env);
  const Given rank = given(args.rank, "--rank", "RANK", env);
  if (world.present()) {
    s.world_size = int(parse_in_range(world, 1, kMaxWorld, "the world size must be an integer in 1.." +
                                                              std::to_string(kMaxWorld)));
  }
  if (rank.present() && !world.present()) {
    throw std::invalid_argument(rank.name + " needs a world size (--world-size N or WORLD_SIZE)");
  }
  if (s.world_size > 1 && !rank.present()) {
    throw std::invalid_argument(world.name + " " + world.text + " needs this process's rank (--rank R or RANK, 0.." +
                                std::to_string(s.world_size - 1) + ")");
  }
  if (rank.present()) {
    s.rank = int(parse_in_range(rank, 0, s.world_size - 1, "the rank must be an integer in 0.." +
                                                               std::to_string(s.world_size - 1) + " for a world size of " +
                                                               std::to_string(s.world_size)));
  }
  resolve_master(args, env, s);
  return s;
}

torch::Tensor BatchShard::take(const torch::Tensor& batch) const {
  return count == global ? batch : batch.narrow(0, begin, count);
}

BatchShard batch_shard(int64_t global, int rank, int world_size) {
  if (global < world_size) {
    throw std::invalid_argument("a batch of " + std::to_string(global) + " cannot be shared by " +
                                std::to_string(world_size) + " ranks (each needs one sample at least)");
  }
  const int64_t base = global / world_size, extra = global % world_size;
  BatchShard shard;
  shard.global = global;
  shard.count = base + (rank < extra ? 1 : 0);
  shard.begin = rank * base + std::min<int64_t>(rank, extra);
  return shard;
}

struct Communicator::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  int leader_runs = 0;  // run_on_leader calls so far (each waits on a key of its own)
};

namespace {

bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0; }

// The network device Gloo listens on: loopback for a loopback master, the interface named by
// GLOO_SOCKET_IFNAME when set, else the one this machine's hostname resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_host) {
  if (is_loopback(master_host)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  if (interface != nullptr && *interface != '\0') return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

std::string rank_text(const DistributedSettings& s) {
  return "rank " + std::to_string(s.rank) + " of " + std::to_string(s.world_size);
}

// Waits for `work`; a failure becomes a std::runtime_error saying which rank lost the others.
void wait_for(const c10::intrusive_ptr<c10d::Work>& work, const DistributedSettings& s) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    char timeout[32];
    std::snprintf(timeout, sizeof timeout, "%.0f", s.timeout_seconds);
    throw std::runtime_error(rank_text(s) + ": lost the other ranks (one stopped or failed, or sent nothing within " +
                             timeout + " s): " + first_line(e));
  }
}

}  // namespace

Communicator::Communicator(const DistributedSettings& settings) : settings_(settings), impl_(std::make_unique<Impl>()) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(settings.timeout_seconds * 1000.0));
  const std::string where = settings.master_host + ":" + std::to_string(settings.master_port);
  c10d::TCPStoreOptions store;
  store.port = static_cast<uint16_t>(settings.master_port);
  store.isServer = settings.rank == 0;
  store.numWorkers = settings.world_size;
  store.waitWorkers = true;
  store.timeout = timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(settings.master_host, store);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(gloo_device(settings.master_host));
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, settings.rank, settings.world_size, options);
  } catch (const std::exception& e) {
    throw std::runtime_error(rank_text(settings) + ": the ranks did not all meet at " + where + " within " +
                             std::to_string(static_cast<int64_t>(settings.timeout_seconds)) + " s (" + first_line(e) + ")");
  }
}

Communicator::~Communicator() = default;

void Communicator::all_reduce_sum(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes) {
  torch::NoGradGuard no_grad;
  std::vector<std::vector<torch::Tensor>> buckets;
  int64_t bytes = 0;
  for (const torch::Tensor& t : tensors) {
    const int64_t size = t.numel() * int64_t(t.element_size());
    if (buckets.empty() || (bytes + size > bucket_bytes && !buckets.back().empty())) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(t);
    bytes += size;
  }
  std::vector<torch::Tensor> flat;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (const auto& bucket : buckets) {  // all buckets in flight at once; Gloo's threads run them
    std::vector<torch::Tensor> pieces;
    for (const torch::Tensor& t : bucket) pieces.push_back(t.reshape(-1));
    std::vector<torch::Tensor> one{torch::cat(pieces)};
    works.push_back(impl_->group->allreduce(one));
    flat.push_back(one.front());
  }
  for (size_t b = 0; b < buckets.size(); ++b) {
    wait_for(works[b], settings_);
    int64_t offset = 0;
    for (const torch::Tensor& t : buckets[b]) {
      t.copy_(flat[b].narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  }
}

std::string Communicator::broadcast_from_leader(const std::function<std::string()>& read) {
  std::string payload;
  int64_t failed = 0;
  if (rank() == 0) {
    try {
      payload = read();
    } catch (const std::runtime_error& e) {
      payload = e.what();
      failed = 1;
    }
  }
  std::vector<torch::Tensor> header{torch::tensor({failed, int64_t(payload.size())}, torch::kInt64)};
  wait_for(impl_->group->broadcast(header), settings_);
  failed = header.front()[0].item<int64_t>();
  const int64_t size = header.front()[1].item<int64_t>();
  std::vector<torch::Tensor> body{torch::empty({size}, torch::kUInt8)};
  if (rank() == 0 && size > 0) std::memcpy(body.front().data_ptr<uint8_t>(), payload.data(), size_t(size));
  if (size > 0) wait_for(impl_->group->broadcast(body), settings_);
  std::string received(reinterpret_cast<const char*>(body.front().data_ptr<uint8_t>()), size_t(size));
  if (failed != 0) throw std::runtime_error(received);
  return received;
}

void Communicator::run_on_leader(const std::function<void()>& prepare, double timeout_seconds) {
  const std::string key = "lmm/leader-run/" + std::to_string(impl_->leader_runs++);
  if (rank() == 0) {
    std::string outcome = "ok";
    try {
      prepare();
    } catch (const std::runtime_error& e) {
      outcome = std::string("failed: ") + e.what();
    }
    impl_->store->set(key, std::vector<uint8_t>(outcome.begin(), outcome.end()));
    if (outcome != "ok") throw std::runtime_error(outcome.substr(8));
    return;
  }
  try {
    impl_->store->wait({key}, std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000.0)));
  } catch (const std::exception& e) {
    throw std::runtime_error(rank_text(settings_) + ": rank 0 stopped or did not finish preparing within " +
                             std::to_string(static_cast<int64_t>(timeout_seconds)) + " s: " + first_line(e));
  }
  const std::vector<uint8_t> bytes = impl_->store->get(key);
  const std::string outcome(bytes.begin(), bytes.end());
  if (outcome != "ok") throw std::runtime_error(outcome.substr(8));
}

}  // namespace lmm::training
