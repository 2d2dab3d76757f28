#include "lmm/training/nearest_neighbours.hpp"

#include <algorithm>

#include "lmm/training/flat_index.hpp"

namespace lmm::training {

torch::Tensor exact_nearest(const torch::Tensor& database, const torch::Tensor& queries, int64_t batch) {
  TORCH_CHECK(database.dim() == 2 && queries.dim() == 2 && database.size(1) == queries.size(1),
              "exact_nearest: database [N, D] and queries [M, D] must share D");
  const torch::Tensor db = database.to(torch::kFloat32).contiguous();
  const torch::Tensor q = queries.to(torch::kFloat32).contiguous();
  const int64_t dims = db.size(1), count = q.size(0);
  const FlatIndex index(db.data_ptr<float>(), db.size(0), dims);
  torch::Tensor labels = torch::empty({count}, torch::kInt64);
  for (int64_t start = 0; start < count; start += std::max<int64_t>(batch, 1)) {
    const int64_t n = std::min(std::max<int64_t>(batch, 1), count - start);
    index.nearest_batch(q.data_ptr<float>() + start * dims, n, labels.data_ptr<int64_t>() + start, at::get_num_threads());
  }
  return labels;
}

}  // namespace lmm::training
