#include "lmm/training/flat_index.hpp"

#include <faiss/IndexFlat.h>
#include <omp.h>

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

}  // namespace lmm::training
