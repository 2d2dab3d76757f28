// WebAssembly SIMD128 dense kernel (4 floats per vector; f16 weights widened one by one, as
// WebAssembly has no half-precision conversion). This file alone is compiled with -msimd128 (the
// Emscripten build, see CMakeLists.txt). WebAssembly has no fused multiply-add: every output sums
// bias + x0 w0 + x1 w1 + ... in that order with separate roundings, as the scalar kernel does.
#include "eval/nn_kernels.hpp"
#include "eval/nn_simd_shared.hpp"

#include "lmm/asset/blob.hpp"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

namespace lmm::detail {
namespace {

// GELU as on the AVX2 path (Abramowitz & Stegun 7.1.28 erf, z clamped at 9, |GELU error| <
// 1e-6), 4 lanes, the reciprocal by division.
v128_t gelu4(v128_t x) {
  const v128_t z_full = wasm_f32x4_mul(wasm_f32x4_abs(x), wasm_f32x4_splat(0.70710678118654752f));
  const v128_t far = wasm_f32x4_ge(z_full, wasm_f32x4_splat(kErfClamp));
  const v128_t z = wasm_f32x4_min(z_full, wasm_f32x4_splat(kErfClamp));
  v128_t p = wasm_f32x4_splat(kErfPoly[0]);
  for (int i = 1; i < 6; ++i) p = wasm_f32x4_add(wasm_f32x4_mul(p, z), wasm_f32x4_splat(kErfPoly[i]));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, z), wasm_f32x4_splat(1.0f));
  for (int square = 0; square < 4; ++square) p = wasm_f32x4_mul(p, p);  // ^16
  const v128_t q = wasm_v128_andnot(wasm_f32x4_div(wasm_f32x4_splat(1.0f), p), far);
  const v128_t negative = wasm_f32x4_lt(x, wasm_f32x4_splat(0.0f));
  const v128_t factor = wasm_v128_bitselect(q, wasm_f32x4_sub(wasm_f32x4_splat(2.0f), q), negative);
  return wasm_f32x4_mul(wasm_f32x4_mul(x, wasm_f32x4_splat(0.5f)), factor);
}

// 4 weights from p, widened to f32 (exactly, for f16).
v128_t load4(const float* p) { return wasm_v128_load(p); }
v128_t load4(const uint16_t* p) {
  return wasm_f32x4_make(half_to_float(p[0]), half_to_float(p[1]), half_to_float(p[2]), half_to_float(p[3]));
}
float widen1(float w) { return w; }
float widen1(uint16_t w) { return half_to_float(w); }

// Outputs [o, o + 4V) of one row: bias + x * W (rows of W `out` apart), then GELU when asked;
// written to y, or added times `scale` where `accumulate`.
template <int V, typename W>
void output_block(const W* weights, const float* bias, const float* x, int in, int out, int o, bool gelu,
                  bool accumulate, float scale, float* y) {
  v128_t acc[V];
  LMM_UNROLL
  for (int v = 0; v < V; ++v) acc[v] = wasm_v128_load(bias + o + 4 * v);
  for (int i = 0; i < in; ++i) {
    const v128_t xi = wasm_f32x4_splat(x[i]);
    const W* row = weights + size_t(i) * out + o;
    LMM_UNROLL
    for (int v = 0; v < V; ++v) acc[v] = wasm_f32x4_add(acc[v], wasm_f32x4_mul(xi, load4(row + 4 * v)));
  }
  LMM_UNROLL
  for (int v = 0; v < V; ++v) {
    const v128_t value = gelu ? gelu4(acc[v]) : acc[v];
    float* target = y + o + 4 * v;
    const v128_t stored =
        accumulate ? wasm_f32x4_add(wasm_v128_load(target), wasm_f32x4_mul(wasm_f32x4_splat(scale), value)) : value;
    wasm_v128_store(target, stored);
  }
}

// Output o of one row, one lane at a time (the layer's last out % 4 outputs).
template <typename W>
void output_one(const W* weights, const float* bias, const float* x, int in, int out, int o, bool gelu, bool accumulate,
                float scale, float* y) {
  float sum = bias[o];
  for (int i = 0; i < in; ++i) sum += x[i] * widen1(weights[size_t(i) * out + o]);
  const float value = gelu ? gelu_scalar(sum) : sum;
  y[o] = accumulate ? y[o] + scale * value : value;
}

template <typename W>
void dense_simd128_of(const DenseLayer& l, const W* weight, const float* x, int xs, int rows, float* y, int ys,
                      bool gelu, const RowMap& map) {
  for (int r = 0; r < rows; ++r) {
    const DenseRow<W> row = dense_row(l, weight, x, xs, y, ys, r, map);
    const bool accumulate = map.out_rows != nullptr;
    const float scale = accumulate ? map.out_scale[r] : 1.0f;
    int o = 0;
    for (; o + 16 <= l.out; o += 16) {
      output_block<4>(row.weights, row.bias, row.x, l.in, l.out, o, gelu, accumulate, scale, row.y);
    }
    for (; o + 4 <= l.out; o += 4) {
      output_block<1>(row.weights, row.bias, row.x, l.in, l.out, o, gelu, accumulate, scale, row.y);
    }
    for (; o < l.out; ++o) output_one(row.weights, row.bias, row.x, l.in, l.out, o, gelu, accumulate, scale, row.y);
  }
}

// dense_scalar's contract, 16 or 4 outputs of a row at a time.
void dense_simd128(const DenseLayer& l, const float* x, int xs, int rows, float* y, int ys, bool gelu,
                   const RowMap& map) {
  if (l.weight_half != nullptr) {
    dense_simd128_of(l, l.weight_half, x, xs, rows, y, ys, gelu, map);
  } else {
    dense_simd128_of(l, l.weight, x, xs, rows, y, ys, gelu, map);
  }
}

}  // namespace

DenseKernel dense_simd128_kernel() { return &dense_simd128; }

}  // namespace lmm::detail

#else

namespace lmm::detail {

DenseKernel dense_simd128_kernel() { return nullptr; }

}  // namespace lmm::detail

#endif
