// Exact single-query nearest neighbour with FAISS IndexFlatL2 (no LibTorch in this header), the
// baseline that lmm-bench search compares the runtime's accelerated search with.
#pragma once

#include <cstdint>
#include <memory>

namespace lmm::training {

// A FAISS IndexFlatL2 over `rows` x `dims` floats answering one query at a time on one thread.
class FlatIndex {
 public:
  // Copies the data into the index.
  FlatIndex(const float* data, int64_t rows, int64_t dims);
  ~FlatIndex();
  FlatIndex(const FlatIndex&) = delete;
  FlatIndex& operator=(const FlatIndex&) = delete;
  // The row nearest to `query` and its squared distance (one thread).
  int64_t nearest(const float* query, float& distance) const;
  // Nearest rows of `count` queries (rows of `queries`) into `labels`, on `threads` threads, and
  // their squared distances into `distances` when it is not null.
  void nearest_batch(const float* queries, int64_t count, int64_t* labels, int threads,
                     float* distances = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmm::training
