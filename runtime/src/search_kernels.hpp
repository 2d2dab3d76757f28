// Internal: the distance kernels behind FeatureSearch (portable, AVX2, AVX-512).
// Every kernel sums a distance's squared terms in kSearchLanes lanes (lane = dimension mod 8) and
// combines the lanes in the same fixed order, one multiply and one add per term (never fused), so
// all kernel paths and the brute-force reference agree to the last bit, and a box bound (whose
// every term is at most a frame's matching term) is an exact lower bound in floating point.
#pragma once

#include "lmm/search.hpp"

namespace lmm::detail {

constexpr int kLargeGroup = 8;                                  // large boxes whose bounds are stored together
constexpr int kSmallPerLarge = kLargeBoxFrames / kSmallBoxFrames;  // small boxes of one large box
constexpr int kBlockFrames = kSmallBoxFrames;                    // frames of one feature block

// Box bounds stored structure-of-arrays: value (dimension d, box j) at min[d * W + j], W boxes.
// out[j] = squared distance from the padded query to box j, for j < W.
using BoxBoundsKernel = void (*)(const float* query, int padded_dims, const float* min, const float* max, float* out);
// Frame features stored structure-of-arrays: value (dimension d, frame j) at block[d * kBlockFrames + j].
// out[j] = squared distance from the padded query to frame j, for j < kBlockFrames.
using BlockCostsKernel = void (*)(const float* query, int padded_dims, const float* block, float* out);

// One kernel path: bounds of a group of kLargeGroup large boxes, of the kSmallPerLarge small
// boxes of one large box, and the costs of one block of frames.
struct SearchKernels {
  BoxBoundsKernel large_bounds = nullptr;
  BoxBoundsKernel small_bounds = nullptr;
  BlockCostsKernel block_costs = nullptr;
};

// Portable kernels.
SearchKernels search_kernels_scalar();
// AVX2 and AVX-512 kernels; all null when this build has none (non-x86 targets).
SearchKernels search_kernels_avx2();
SearchKernels search_kernels_avx512();

}  // namespace lmm::detail
