// Exact nearest neighbours with FAISS (IndexFlatL2), used to label projector training data.
#pragma once

#include <torch/torch.h>

namespace lmm::training {

// Index of the exact L2 nearest row of `database` [N, D] for each row of `queries` [M, D]
// (both float32, contiguous), searched in batches of `batch` queries. Returns int64 [M].
torch::Tensor exact_nearest(const torch::Tensor& database, const torch::Tensor& queries,
                            int64_t batch = 4096);

}  // namespace lmm::training
