#include "lmm/core/kernel_path.hpp"

namespace lmm {

const char* kernel_path_name(KernelPath path) {
  switch (path) {
    case KernelPath::Auto: return "auto";
    case KernelPath::Scalar: return "scalar";
    case KernelPath::Avx2: return "avx2";
    case KernelPath::Avx512: return "avx512";
    case KernelPath::Simd128: return "simd128";
  }
  return "?";
}

}  // namespace lmm
