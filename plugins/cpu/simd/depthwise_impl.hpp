// The depthwise row loops (depthwise_kernels.hpp) written once over a small per-ISA
// vector-traits struct T, so the AVX2 and AVX-512 files share one algorithm and differ
// only in their intrinsics. Include only from depthwise__<isa>.cpp: T's intrinsics need
// that file's ISA flags (for_each_tap needs none: the NEON file uses it too). T provides:
//   V, Mask, kLanes; set1(float), zero(), load(p), store(p, v), fma(w, x, acc) = w*x+acc,
//   add(a, b), mask(left) (the first min(left, kLanes) lanes), maskload(p, m),
//   maskstore(p, m, v).
// Each step covers 2 * kLanes outputs in two vectors with two accumulators each (even
// and odd kernel rows) so the FMA chains overlap; the tail uses masked loads and stores.
#pragma once

#include <cstdint>

#include "depthwise_kernels.hpp"

namespace infer::cpu::simd::depthwise_impl {

// Calls f(kh, weight, p) for every tap of the kernel rows that are not in the vertical
// padding, kernel row by row, with p the input element that output column `ow` reads
// through that tap. Shared by the generic loops here and the NEON file.
template <typename F>
inline void for_each_tap(const DepthwiseRow& r, int64_t ow, F&& f) {
  for (int kh = 0; kh < r.kh; ++kh) {
    const float* row = r.rows[kh];
    if (row == nullptr) continue;
    const float* wk = r.weights + kh * r.kw;
    for (int kw = 0; kw < r.kw; ++kw) f(kh, wk[kw], row + r.offsets[kw] + ow);
  }
}

// A fixed KH x KW kernel with every weight broadcast into a register once per row and
// the tap loops unrolled; kernel rows in the padding multiply a zero row instead of
// branching. Handles every column; returns the width.
template <typename T, int KH, int KW>
int64_t row_fixed(const DepthwiseRow& r, const float* zero_row) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  V w[KH * KW];
  for (int i = 0; i < KH * KW; ++i) w[i] = T::set1(r.weights[i]);
  // Rows in the padding read the zero row at a fixed place (live = 0), branch-free.
  const float* rows[KH];
  int64_t live[KH];
  for (int kh = 0; kh < KH; ++kh) {
    rows[kh] = r.rows[kh] != nullptr ? r.rows[kh] : zero_row;
    live[kh] = r.rows[kh] != nullptr ? 1 : 0;
  }
  int64_t off[KW];
  for (int kw = 0; kw < KW; ++kw) off[kw] = r.offsets[kw];
  const V bias = T::set1(r.bias);
  int64_t ow = 0;
  for (; ow + 2 * L <= r.width; ow += 2 * L) {
    V a0 = bias, a1 = bias, b0 = T::zero(), b1 = T::zero();
    for (int kh = 0; kh < KH; ++kh) {
      for (int kw = 0; kw < KW; ++kw) {
        const float* p = rows[kh] + live[kh] * (ow + off[kw]);
        if (kh & 1) {
          b0 = T::fma(w[kh * KW + kw], T::load(p), b0);
          b1 = T::fma(w[kh * KW + kw], T::load(p + L), b1);
        } else {
          a0 = T::fma(w[kh * KW + kw], T::load(p), a0);
          a1 = T::fma(w[kh * KW + kw], T::load(p + L), a1);
        }
      }
    }
    T::store(r.out + ow, T::add(a0, b0));
    T::store(r.out + ow + L, T::add(a1, b1));
  }
  // The rest, one (masked) vector at a time: small images (28, 14, 7 wide) live here.
  for (; ow < r.width; ow += L) {
    const typename T::Mask m = T::mask(r.width - ow);
    V a = bias, b = T::zero();
    for (int kh = 0; kh < KH; ++kh) {
      for (int kw = 0; kw < KW; ++kw) {
        const V v = T::maskload(rows[kh] + live[kh] * (ow + off[kw]), m);
        if (kh & 1) b = T::fma(w[kh * KW + kw], v, b);
        else a = T::fma(w[kh * KW + kw], v, a);
      }
    }
    T::maskstore(r.out + ow, m, T::add(a, b));
  }
  return ow;
}

// Any kernel size: 3x3 and 5x5 take row_fixed, the rest broadcast each weight per tap.
template <typename T>
void row(const DepthwiseRow& r) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  // Zero taps for kernel rows in the vertical padding (2 vectors wide).
  alignas(64) static const float zeros[2 * L] = {};
  int64_t ow = 0;
  if (r.kh == 3 && r.kw == 3) ow = row_fixed<T, 3, 3>(r, zeros);
  else if (r.kh == 5 && r.kw == 5) ow = row_fixed<T, 5, 5>(r, zeros);
  for (; ow + 2 * L <= r.width; ow += 2 * L) {
    V a0 = T::set1(r.bias), a1 = T::set1(r.bias);
    V b0 = T::zero(), b1 = T::zero();
    for_each_tap(r, ow, [&](int kh, float w, const float* p) {
      const V wv = T::set1(w);
      if (kh & 1) {
        b0 = T::fma(wv, T::load(p), b0);
        b1 = T::fma(wv, T::load(p + L), b1);
      } else {
        a0 = T::fma(wv, T::load(p), a0);
        a1 = T::fma(wv, T::load(p + L), a1);
      }
    });
    T::store(r.out + ow, T::add(a0, b0));
    T::store(r.out + ow + L, T::add(a1, b1));
  }
  for (; ow < r.width; ow += L) {
    const typename T::Mask m = T::mask(r.width - ow);
    V a = T::set1(r.bias), b = T::zero();
    for_each_tap(r, ow, [&](int kh, float w, const float* p) {
      const V v = T::maskload(p, m);
      if (kh & 1) b = T::fma(T::set1(w), v, b);
      else a = T::fma(T::set1(w), v, a);
    });
    T::maskstore(r.out + ow, m, T::add(a, b));
  }
}

}  // namespace infer::cpu::simd::depthwise_impl
