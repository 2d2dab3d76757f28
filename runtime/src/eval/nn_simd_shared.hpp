// Internal: what the SIMD kernels (nn_avx2.cpp, nn_avx512.cpp) share: the GELU's erf
// coefficients, the row bookkeeping of a block and the GRU window kernel over each file's lanes.
// Everything here has internal linkage (an unnamed namespace), so each kernel file compiles its
// own copy for its instruction set and no wider instruction can reach another file's code.
#pragma once

#include <cstddef>

#include "eval/nn_kernels.hpp"

// Fixed-size loops over accumulators must be unrolled so that they live in registers.
#if defined(__clang__)
#define LMM_UNROLL _Pragma("unroll")
#else
#define LMM_UNROLL _Pragma("GCC unroll 16")
#endif

namespace lmm::detail {
namespace {

// Abramowitz & Stegun 7.1.28: 1 - erf(z) = 1 / (1 + a1 z + ... + a6 z^6)^16 for z >= 0
// (|error| <= 3e-7), highest power first for Horner's rule.
constexpr float kErfPoly[6] = {0.0000430638f, 0.0002765672f, 0.0001520143f,
                               0.0092705272f, 0.0422820123f, 0.0705230784f};
constexpr float kErfClamp = 9.0f;  // z beyond this: 1 - erf(z) < 1e-36, and the 16th power stays finite

// tanh(x) = x P(x^2) / Q(x^2), x clamped to [-9, 9] (|tanh(9)| is 1 within 3e-8): lmmkit's own
// rational fit (P of degree 3, Q of degree 4 in x^2, weighted least squares over [0, 9]); largest
// float error 6e-7. Its dependency chain is about half that of an exp-based tanh, which matters
// in a GRU where every step waits for the last. Highest power first.
constexpr float kTanhP[4] = {1.0296755e-05f, 0.002840501165f, 0.128201609f, 0.9999983631f};
constexpr float kTanhQ[5] = {2.110100413e-07f, 0.0002234135446f, 0.02335598363f, 0.4615293111f, 1.0f};
constexpr float kTanhClamp = 9.0f;

// The input and output rows of one block of R rows, the output scale when accumulating, and
// each row's expert in a stacked expert layer (0 unless RowMap::experts gives them).
template <int R>
struct BlockRows {
  const float* x[R];
  float* y[R];
  float scale[R];
  int expert[R];
};

// Rows r .. r + R - 1 of a dense call, through `map` where it gives row indices.
template <int R>
BlockRows<R> block_rows(const float* x, int xs, float* y, int ys, int r, const RowMap& map) {
  BlockRows<R> b;
  for (int j = 0; j < R; ++j) {
    const int row = r + j;
    b.x[j] = x + ptrdiff_t(map.in_rows != nullptr ? map.in_rows[row] : row) * xs;
    b.y[j] = y + ptrdiff_t(map.out_rows != nullptr ? map.out_rows[row] : row) * ys;
    b.scale[j] = map.out_scale != nullptr ? map.out_scale[row] : 0.0f;
    b.expert[j] = map.experts != nullptr ? map.experts[row] : 0;
  }
  return b;
}

// tanh(x) by the rational fit kTanhP / kTanhQ, lane by lane, for the register type of the lane
// operations L (set1, load, add, sub, mul, fmadd a b + c, fnmadd c - a b, min, max, rcp: an
// approximate reciprocal, refined here by one Newton step; lane(v, k): lane k in every lane;
// sum: of the lanes).
template <typename L>
inline typename L::V rational_tanh(typename L::V x) {
  using V = typename L::V;
  x = L::min(L::max(x, L::set1(-kTanhClamp)), L::set1(kTanhClamp));
  const V u = L::mul(x, x);
  V p = L::set1(kTanhP[0]), q = L::set1(kTanhQ[0]);
  for (int k = 1; k < 4; ++k) p = L::fmadd(p, u, L::set1(kTanhP[k]));
  for (int k = 1; k < 5; ++k) q = L::fmadd(q, u, L::set1(kTanhQ[k]));
  const V estimate = L::rcp(q);
  const V inverse = L::mul(estimate, L::fnmadd(q, estimate, L::set1(2.0f)));
  return L::mul(L::mul(x, p), inverse);
}

// gru_window_scalar's contract (nn_kernels.hpp) for padded = R registers of L's lanes, the state
// in R registers for the whole window. Per step the hidden product goes row by row, each state
// value broadcast from its lane, row k into accumulator set k % Sets (more sets: shorter chains of
// dependent multiply-adds, more registers; set 0 starts at the bias, the sets are summed in
// order), then the gates one register at a time.
template <typename L, int R, int Sets>
void gru_window_simd(const GruWindow& g, const float* present_facing, float* future) {
  using V = typename L::V;
  constexpr int kLanes = L::kLanes, kPadded = kLanes * R, kWidth = 3 * kPadded, kV = 3 * R;
  const V half = L::set1(0.5f);
  V h[R];
  LMM_UNROLL
  for (int r = 0; r < R; ++r) h[r] = L::set1(0.0f);
  const float* previous = present_facing;
  for (int t = 0; t < g.window; ++t) {
    V acc[Sets][kV];
    LMM_UNROLL
    for (int v = 0; v < kV; ++v) {
      acc[0][v] = L::load(g.hidden_bias + kLanes * v);
      LMM_UNROLL
      for (int set = 1; set < Sets; ++set) acc[set][v] = L::set1(0.0f);
    }
    LMM_UNROLL
    for (int r = 0; r < R; ++r) {
      LMM_UNROLL
      for (int k = 0; k < kLanes; ++k) {
        if (kLanes * r + k >= g.hidden) break;
        const V x = L::lane(h[r], k);
        const float* w = g.hidden_weight + size_t(kLanes * r + k) * kWidth;
        LMM_UNROLL
        for (int v = 0; v < kV; ++v) acc[k % Sets][v] = L::fmadd(x, L::load(w + kLanes * v), acc[k % Sets][v]);
      }
    }
    LMM_UNROLL
    for (int set = 1; set < Sets; ++set) {
      LMM_UNROLL
      for (int v = 0; v < kV; ++v) acc[0][v] = L::add(acc[0][v], acc[set][v]);
    }
    const float* in = g.input_gates + size_t(t) * kWidth;
    const bool fed = t > g.present + 1;
    const V fx = L::set1(fed ? previous[0] : 0.0f), fz = L::set1(fed ? previous[1] : 0.0f);
    auto input = [&](int j) {  // the step's input gates plus the fed-back facing's share
      const V x = L::fmadd(fx, L::load(g.feedback_weight + j), L::load(in + j));
      return L::fmadd(fz, L::load(g.feedback_weight + kWidth + j), x);
    };
    LMM_UNROLL
    for (int r = 0; r < R; ++r) {
      const V r_tanh = rational_tanh<L>(L::add(input(kLanes * r), acc[0][r]));
      const V z = L::fmadd(half, rational_tanh<L>(L::add(input(kPadded + kLanes * r), acc[0][R + r])), half);
      const V c = acc[0][2 * R + r];
      const V n = rational_tanh<L>(L::fmadd(r_tanh, c, L::add(input(2 * kPadded + kLanes * r), c)));
      h[r] = L::fmadd(z, L::sub(h[r], n), n);
    }
    if (t <= g.present) continue;
    V out_x = L::set1(0.0f), out_z = L::set1(0.0f);
    LMM_UNROLL
    for (int r = 0; r < R; ++r) {
      out_x = L::fmadd(h[r], L::load(g.output_weight + kLanes * r), out_x);
      out_z = L::fmadd(h[r], L::load(g.output_weight + kPadded + kLanes * r), out_z);
    }
    float* facing = future + 2 * (t - g.present - 1);
    emit_facing(g.output_bias[0] + L::sum(out_x), g.output_bias[1] + L::sum(out_z), previous, facing);
    previous = facing;
  }
}

}  // namespace
}  // namespace lmm::detail
