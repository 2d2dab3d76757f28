#include "lmm/eval/kernel_support.hpp"

#include "eval/nn_kernels.hpp"
#include "lmm/core/cpu_features.hpp"

namespace lmm {

std::vector<KernelPath> available_kernel_paths() {
  std::vector<KernelPath> paths{KernelPath::Scalar};
  if (avx2_available()) paths.push_back(KernelPath::Avx2);
  if (avx512_available()) paths.push_back(KernelPath::Avx512);
  if (simd128_available()) paths.push_back(KernelPath::Simd128);
  return paths;
}

bool simd128_available() { return detail::dense_simd128_kernel() != nullptr; }

bool avx2_available() { return detail::dense_avx2_kernel() != nullptr && cpu_has_avx2_fma_f16c(); }

bool avx512_available() {
  return avx2_available() && detail::dense_avx512_kernel(false) != nullptr && cpu_has_avx512_f_vl_dq_bw();
}

namespace detail {

bool resolve_kernel_path(KernelPath& path, std::string& error) {
  if (path == KernelPath::Auto) path = available_kernel_paths().back();
  if (path == KernelPath::Avx2 && !avx2_available()) {
    error = "the AVX2/FMA kernels are not available in this build or on this CPU";
    return false;
  }
  if (path == KernelPath::Avx512 && !avx512_available()) {
    error = "the AVX-512 kernels are not available in this build or on this CPU";
    return false;
  }
  if (path == KernelPath::Simd128 && !simd128_available()) {
    error = "the WebAssembly SIMD128 kernels are only in WebAssembly builds";
    return false;
  }
  return true;
}

}  // namespace detail
}  // namespace lmm
