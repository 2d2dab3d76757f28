// Training data that data-parallel ranks on one machine share instead of copying (issue 19): the
// database file and the tensors derived from it are memory-mapped, so their pages sit once in
// the page cache however many ranks read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "lmm/asset/database.hpp"
#include "lmm/training/pose_data.hpp"

namespace lmm::training {

// A whole file mapped copy-on-write (POSIX mmap, MAP_PRIVATE): its pages are shared with every
// other process mapping the file until one writes to them, which copies only that page.
class MappedFile {
 public:
  // Maps `path`; nullptr with a message naming the file when it cannot be opened, is empty or
  // cannot be mapped.
  static std::shared_ptr<const MappedFile> open(const std::string& path, std::string& error);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // First byte (page-aligned).
  uint8_t* data() const { return data_; }
  // Size in bytes.
  size_t size() const { return size_; }

 private:
  MappedFile(uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// The database at `path`, validated and read in place from a memory map of the file that the
// returned pointer keeps alive; nullptr with a message naming the file on failure.
std::shared_ptr<const Database> map_database(const std::string& path, std::string& error);

// Everything the autoencoder, stepper and projector trainers read of a database: its pose data
// and the standardised encoder inputs (encoder_inputs).
struct TrainingData {
  PoseData d;
  torch::Tensor x;          // [N, X] standardised pose ++ model-space positions
  std::string mapped_from;  // the cache file the large tensors view in place, or "" (computed here)
};

// The training data of `db`, computed in this process (make_pose_data, encoder_inputs).
TrainingData compute_training_data(const Database& db);

// Data-parallel ranks share the training data of a database through a cache file
// (pose-data-<hash of the database's content>.lmpd, docs/training.md, "Data-parallel training"):
// every rank names it once with training_data_cache, the leader calls prepare_training_data_cache,
// then every rank map_training_data.
struct TrainingDataCache {
  uint64_t key = 0;  // hash of every tensor of the database file
  std::string path;  // DIR/pose-data-<key>.lmpd
};

// The cache of `db` in `dir` (hashes the database once).
TrainingDataCache training_data_cache(const Database& db, const std::string& dir);

// Computes the training data of `db` and writes `cache` (atomically, creating its folder) unless
// a valid cache of the same database is there already. Throws std::runtime_error when the file
// cannot be written.
void prepare_training_data_cache(const Database& db, const TrainingDataCache& cache);

// The training data of `db` with its large tensors viewing `cache` in place (a copy-on-write
// memory map: every process mapping it shares its pages), bit-identical to
// compute_training_data's; a rank that finds no valid cache there (e.g. on another machine than
// the leader) prepares one first. Throws like prepare_training_data_cache.
TrainingData map_training_data(const Database& db, const TrainingDataCache& cache);

}  // namespace lmm::training
