#include "lmm/training/flat_index.hpp"

#include <faiss/IndexFlat.h>
#include <omp.h>

#include <vector>

namespace lmm::training {

struct FlatIndex::Impl {
  explicit Impl(int64_t dims) : index(dims) {}
  faiss::IndexFlatL2 index;
};

FlatIndex::FlatIndex(const float* data, int64_t rows, int64_t dims) : impl_(std::make_unique<Impl>(dims)) {
  impl_->index.add(rows, data);
}

FlatIndex::~FlatIndex() = default;

int64_t FlatIndex::nearest(const float* query, float& distance) const {
  omp_set_num_threads(1);
  faiss::Index::idx_t label = -1;
  impl_->index.search(1, query, 1, &distance, &label);
  return label;
}

void FlatIndex::nearest_batch(const float* queries, int64_t count, int64_t* labels, int threads,
                              float* distances) const {
  static_assert(sizeof(faiss::Index::idx_t) == sizeof(int64_t), "FAISS ids must be 64-bit");
  omp_set_num_threads(threads);
  std::vector<float> own(distances == nullptr ? static_cast<size_t>(count) : 0);
  impl_->index.search(count, queries, 1, distances == nullptr ? own.data() : distances,
                      reinterpret_cast<faiss::Index::idx_t*>(labels));
}

}  // namespace lmm::training
