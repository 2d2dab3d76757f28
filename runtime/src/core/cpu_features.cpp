#include "lmm/core/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace lmm {

#if defined(__x86_64__) || defined(__i386__)
namespace {
// F16C from CPUID leaf 1 (ECX bit 29): Clang 14's __builtin_cpu_supports does not know "f16c".
bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
}  // namespace

bool cpu_has_avx2_fma_f16c() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
  return has;
}

bool cpu_has_avx512_f_vl_dq_bw() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  return has;
}

bool cpu_splits_512_bit_vectors() {
  static const bool splits = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d) == 0) return false;
    const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;  // "AuthenticAMD"
    if (!amd || __get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    const unsigned base = (a >> 8) & 0xfu, family = base == 0xfu ? base + ((a >> 20) & 0xffu) : base;
    return family == 0x19u;
  }();
  return splits;
}
#else
bool cpu_has_avx2_fma_f16c() { return false; }
bool cpu_has_avx512_f_vl_dq_bw() { return false; }
bool cpu_splits_512_bit_vectors() { return false; }
#endif

}  // namespace lmm
