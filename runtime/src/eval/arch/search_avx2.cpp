// AVX2 search kernels. This file alone is compiled with -mavx2 (and -ffp-contract=off, so that no
// multiply-add is fused and the sums match the scalar kernels bit for bit; see CMakeLists.txt).
#include "eval/search_simd_shared.hpp"

#if defined(__AVX2__)

namespace lmm::detail {

SearchKernels search_kernels_avx2() { return {&box_bounds<Ymm>, &box_bounds<Xmm>, &block_costs<Ymm>}; }

}  // namespace lmm::detail

#else

namespace lmm::detail {

SearchKernels search_kernels_avx2() { return {}; }

}  // namespace lmm::detail

#endif
