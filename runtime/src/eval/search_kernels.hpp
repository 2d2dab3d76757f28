// Internal: the distance kernels behind FeatureSearch (portable, AVX2, AVX-512).
// Every kernel sums a distance's squared terms in kSearchLanes lanes (lane = dimension mod 8) and
// combines the lanes in the same fixed order, one multiply and one add per term (never fused), so
// all kernel paths and the brute-force reference agree to the last bit, and a box bound (whose
// every term is at most a frame's matching term, summed in the same order) is an exact lower
// bound of every frame cost in the box, in floating point.
#pragma once

#include "lmm/eval/search.hpp"

namespace lmm::detail {

constexpr int kLargeGroup = 8;                                     // large boxes per group; boxes or groups per table
constexpr int kSmallPerLarge = kLargeBoxFrames / kSmallBoxFrames;  // small boxes of one large box
constexpr int kBlockFrames = kSmallBoxFrames;                      // frames of one feature block

// One kernel path's distance kernels.
struct SearchKernels {
  // out[j] = squared distance over the first `dims` dimensions from a query to box j of W boxes
  // stored [dim][W] (W = 8 for groups or large boxes, 4 for the small boxes of one large box).
  void (*large_bounds)(const float* query, int dims, const float* min, const float* max, float* out) = nullptr;
  void (*small_bounds)(const float* query, int dims, const float* min, const float* max, float* out) = nullptr;
  // out[j] = squared distance over the first `dims` dimensions from a query to frame j of a
  // block of 16 frames stored [dim][16].
  void (*block_costs)(const float* query, int dims, const float* block, float* out) = nullptr;
};

// Portable kernels.
SearchKernels search_kernels_scalar();
// AVX2 and AVX-512 kernels; all null when this build has none (non-x86 targets).
SearchKernels search_kernels_avx2();
SearchKernels search_kernels_avx512();

}  // namespace lmm::detail
