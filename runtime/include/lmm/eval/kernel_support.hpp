// Which kernel paths this build and this CPU can run: a path needs its kernels compiled in (x86
// builds with GCC or Clang have AVX2 and AVX-512, WebAssembly builds with -msimd128 SIMD128) and the
// CPU features they use (lmm/core/cpu_features.hpp).
#pragma once

#include <vector>

#include "lmm/core/kernel_path.hpp"

namespace lmm {

// Whether this build and this CPU can run KernelPath::Avx2 (AVX2, FMA and F16C).
bool avx2_available();
// Whether this build and this CPU can run KernelPath::Avx512 (AVX-512 F/VL/DQ/BW and the AVX2 path).
bool avx512_available();
// Whether this build can run KernelPath::Simd128 (WebAssembly built with -msimd128: then every
// engine that loads the module has SIMD128).
bool simd128_available();
// The kernel paths this build and CPU can run, Scalar first (Auto excluded).
std::vector<KernelPath> available_kernel_paths();

}  // namespace lmm
