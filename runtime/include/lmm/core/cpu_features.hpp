// What this CPU offers the x86 kernels, asked once (CPUID is slow, and costs a trip to the
// hypervisor in a virtual machine). False on every other architecture.
#pragma once

namespace lmm {

// Whether the CPU has AVX2, FMA and F16C.
bool cpu_has_avx2_fma_f16c();
// Whether the CPU has AVX-512 F, VL, DQ and BW.
bool cpu_has_avx512_f_vl_dq_bw();
// Whether the CPU runs 512-bit vectors as two 256-bit halves (AMD family 19h: Zen 3 and Zen 4; of
// them only Zen 4 has AVX-512).
bool cpu_splits_512_bit_vectors();

}  // namespace lmm
