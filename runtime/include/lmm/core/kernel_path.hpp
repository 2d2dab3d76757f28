// KernelPath: which instruction set the evaluators' kernels use. Whether a path can run is the
// evaluation layer's to say (lmm/eval/kernel_support.hpp): it depends on the kernels a build has.
#pragma once

namespace lmm {

// Which kernels evaluate the dense layers.
enum class KernelPath {
  Auto,     // the widest of Avx512, Avx2, Simd128 and Scalar that this build and CPU support
  Scalar,   // portable C++ (GELU through std::erf)
  Avx2,     // AVX2 + FMA + F16C intrinsics (GELU through a polynomial erf, |GELU error| < 1e-6)
  Avx512,   // AVX-512 for the dense layers (same GELU), AVX2 for the top-k routing
  Simd128,  // WebAssembly SIMD128 for the dense layers (same GELU), scalar elsewhere
};

// "auto", "scalar", "avx2", "avx512" or "simd128".
const char* kernel_path_name(KernelPath path);

}  // namespace lmm
