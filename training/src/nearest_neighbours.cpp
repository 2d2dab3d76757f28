#include "lmm/training/nearest_neighbours.hpp"

#include <faiss/IndexFlat.h>

namespace lmm::training {

torch::Tensor exact_nearest(const torch::Tensor& database, const torch::Tensor& queries,
                            int64_t batch) {
  TORCH_CHECK(database.dim() == 2 && queries.dim() == 2 && database.size(1) == queries.size(1),
              "exact_nearest: database [N, D] and queries [M, D] must share D");
  const torch::Tensor db = database.to(torch::kFloat32).contiguous();
  const torch::Tensor q = queries.to(torch::kFloat32).contiguous();
  const int64_t dims = db.size(1), count = q.size(0);
  faiss::IndexFlatL2 index(dims);
  index.add(db.size(0), db.data_ptr<float>());
  torch::Tensor labels = torch::empty({count}, torch::kInt64);
  std::vector<float> distances(static_cast<size_t>(std::max<int64_t>(batch, 1)));
  static_assert(sizeof(faiss::Index::idx_t) == sizeof(int64_t), "FAISS ids must be 64-bit");
  for (int64_t start = 0; start < count; start += batch) {
    const int64_t n = std::min(batch, count - start);
    index.search(n, q.data_ptr<float>() + start * dims, 1, distances.data(),
                 reinterpret_cast<faiss::Index::idx_t*>(labels.data_ptr<int64_t>() + start));
  }
  return labels;
}

}  // namespace lmm::training
