// The depthwise plane loops (depthwise_kernels.hpp) written once over a small per-ISA
// vector-traits struct T, so the AVX2 and AVX-512 files share one algorithm and differ
// only in their intrinsics. Include only from depthwise__<isa>.cpp: T's intrinsics need
// that file's ISA flags (the scalar helpers at the top need none: the scalar reference
// and the NEON file use them too). T provides:
//   V, Mask, kLanes; set1(float), zero(), load(p), store(p, v), fma(w, x, acc) = w*x+acc,
//   add(a, b), mask(left) (the first min(left, kLanes) lanes, none when left <= 0),
//   maskload(p, m), maskstore(p, m, v), relu(v) (NaN -> 0), clip(v, lo, hi) (NaN passes),
//   even(p) / even_masked(p, n): elements p[0], p[2], ... (n of them for the masked one,
//   reading only p[0 .. 2n - 1)).
// A whole plane is one call, so the weights are broadcast into registers once per
// channel rather than once per row. 3x3 and 5x5 kernels at vertical stride 1 or 2 take
// row_block (several output rows per vector of columns, every tap unrolled); other
// kernels take rows_any (2 * kLanes outputs per step in two vectors, two accumulators
// each). Last vectors of a row use masked loads and stores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "depthwise_kernels.hpp"

namespace infer::cpu::simd::depthwise_impl {

// The same clamp in scalar code, with the NaN rules of the vector ones (and of the
// unfused Relu and Clip kernels): Relu maps NaN to 0, Clip passes it through.
inline float clamp_scalar(const DepthwisePlane& p, float v) {
  switch (p.clamp) {
    case DepthwiseClamp::kNone: return v;
    case DepthwiseClamp::kRelu: return v > 0.0f ? v : 0.0f;
    case DepthwiseClamp::kClip: {
      const float lo = v < p.lo ? p.lo : v;
      return lo > p.hi ? p.hi : lo;
    }
  }
  return v;
}

// Copies the input plane into the phase-split buffer: for every input row that lands in
// the buffer and every phase, copy_row(src, dst, n, sw) must set dst[j] = src[j * sw]
// for j < n.
template <typename CopyRow>
inline void fill(const DepthwisePlane& p, CopyRow&& copy_row) {
  const int64_t rows = std::min(p.H, p.buf_rows - p.ph);
  for (int64_t ih = 0; ih < rows; ++ih) {
    const float* src = p.x + ih * p.W;
    float* dst = p.buf + (ih + p.ph) * p.row_len;
    for (int64_t ph = 0; ph < p.sw; ++ph) {
      const int64_t lo = p.phase_lo[ph], hi = p.phase_hi[ph];
      if (hi > lo) copy_row(src + (lo * p.sw + ph - p.pw), dst + ph * p.wq + lo, hi - lo, p.sw);
    }
  }
}

inline void copy_row_scalar(const float* src, float* dst, int64_t n, int64_t sw) {
  if (sw == 1) {
    std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j * sw];
}

// One output element the plain way (the scalar reference and the NEON tail).
inline float output_scalar(const DepthwisePlane& p, int64_t oh, int64_t ow) {
  float acc = p.bias;
  for (int kh = 0; kh < p.kh; ++kh) {
    const float* row = p.buf + (oh * p.sh + kh * p.dh) * p.row_len;
    for (int kw = 0; kw < p.kw; ++kw) acc += p.weights[kh * p.kw + kw] * row[p.offsets[kw] + ow];
  }
  if (p.residual != nullptr) acc += p.residual[oh * p.OW + ow];
  return clamp_scalar(p, acc);
}

// Bias is already in v: add the residual, clamp, store. The residual is read before the
// store, so it may alias the output (the input already sits in the buffer).
template <typename T>
inline void finish(const DepthwisePlane& p, typename T::V v, const float* res, float* out) {
  if (res != nullptr) v = T::add(v, T::load(res));
  if (p.clamp == DepthwiseClamp::kRelu) v = T::relu(v);
  else if (p.clamp == DepthwiseClamp::kClip) v = T::clip(v, T::set1(p.lo), T::set1(p.hi));
  T::store(out, v);
}

template <typename T>
inline void finish_masked(const DepthwisePlane& p, typename T::V v, const float* res, float* out,
                          typename T::Mask m) {
  if (res != nullptr) v = T::add(v, T::maskload(res, m));
  if (p.clamp == DepthwiseClamp::kRelu) v = T::relu(v);
  else if (p.clamp == DepthwiseClamp::kClip) v = T::clip(v, T::set1(p.lo), T::set1(p.hi));
  T::maskstore(out, m, v);
}

template <typename T>
inline void copy_row(const float* src, float* dst, int64_t n, int64_t sw) {
  constexpr int L = T::kLanes;
  int64_t j = 0;
  if (sw == 1) {
    for (; j + L <= n; j += L) T::store(dst + j, T::load(src + j));
    if (j < n) {
      const typename T::Mask m = T::mask(n - j);
      T::maskstore(dst + j, m, T::maskload(src + j, m));
    }
  } else if (sw == 2) {
    // Full steps read src[2j .. 2j + 2L): only while that stays inside the n pairs.
    for (; j + L < n; j += L) T::store(dst + j, T::even(src + 2 * j));
    if (j < n) T::maskstore(dst + j, T::mask(n - j), T::even_masked(src + 2 * j, n - j));
  } else {
    copy_row_scalar(src, dst, n, sw);
  }
}

// f(integral_constant<int, 0>), ..., f(integral_constant<int, N - 1>): loops whose
// indices must be compile-time constants, so every tap below is unrolled and resolved.
template <int N, typename F>
inline void unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

// RB output rows of a fixed KH x KW kernel with vertical stride SH (dilation 1) from row
// oh on, one vector of columns at a time (masked for the last). RB rows x 2 accumulators
// (even and odd kernel rows) are 2 * RB independent FMA chains, enough to keep both FMA
// pipes busy even on the narrow planes (7, 14, 28 wide) where a whole row is one or two
// vectors. Walking the (RB - 1) * SH + KH input rows the block reads, each loaded vector
// feeds every output row that uses it (a 3x3 stride-1 block of 4 rows: 18 loads for 36
// FMAs), and one row pointer stepping by row_len keeps the addressing in few registers.
template <typename T, int KH, int KW, int SH, int RB>
inline void row_block(const DepthwisePlane& p, const typename T::V* w, const int64_t* off,
                      int64_t oh) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  constexpr int J = (RB - 1) * SH + KH;
  const float* top = p.buf + oh * SH * p.row_len;
  const V bias = T::set1(p.bias);
  auto chunk = [&](int64_t ow, auto masked, typename T::Mask m) {
    V a[RB], b[RB];
    for (int r = 0; r < RB; ++r) {
      a[r] = bias;
      b[r] = T::zero();
    }
    const float* row = top + ow;
    unroll<J>([&](auto jc) {
      constexpr int j = jc;
      unroll<KW>([&](auto kwc) {
        constexpr int kw = kwc;
        const V x = masked ? T::maskload(row + off[kw], m) : T::load(row + off[kw]);
        unroll<RB>([&](auto rc) {
          constexpr int r = rc;
          constexpr int kh = j - r * SH;
          if constexpr (kh >= 0 && kh < KH) {
            if constexpr (kh & 1) b[r] = T::fma(w[kh * KW + kw], x, b[r]);
            else a[r] = T::fma(w[kh * KW + kw], x, a[r]);
          }
        });
      });
      row += p.row_len;
    });
    for (int r = 0; r < RB; ++r) {
      const int64_t at = (oh + r) * p.OW + ow;
      const float* res = p.residual != nullptr ? p.residual + at : nullptr;
      if (masked) finish_masked<T>(p, T::add(a[r], b[r]), res, p.out + at, m);
      else finish<T>(p, T::add(a[r], b[r]), res, p.out + at);
    }
  };
  int64_t ow = 0;
  for (; ow + L <= p.OW; ow += L) chunk(ow, std::false_type{}, T::mask(L));
  if (ow < p.OW) chunk(ow, std::true_type{}, T::mask(p.OW - ow));
}

// Whether T offers load_aligned(p) and alignr<S>(hi, lo) (lanes S.. of lo, then the
// first S of hi): then row_block_aligned below serves horizontal strides 1 and 2.
template <typename T>
constexpr bool has_alignr() {
  if constexpr (requires { T::kAlignr; })
    return T::kAlignr;
  else
    return false;
}

// row_block for dilation 1 and horizontal stride SW (1 or 2) on a buffer whose rows and
// phases start on vector boundaries (wq and row_len multiples of kLanes, buf aligned):
// tap kw reads phase kw % SW at column ow + kw / SW, so each input row costs one aligned
// load per phase (two where a tap is shifted) and the shifted taps come from alignr
// instead of unaligned loads, every one of which would straddle two cache lines. The
// last chunk reads whole vectors too (the buffer has slack); only its stores are masked.
template <typename T, int KH, int KW, int SH, int SW, int RB>
inline void row_block_aligned(const DepthwisePlane& p, const typename T::V* weights, int64_t oh) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  constexpr int J = (RB - 1) * SH + KH;
  // Locals, not reads through p or weights: the output stores could alias those as far
  // as the compiler knows, and it would reload them after every store.
  V w[KH * KW];
  for (int i = 0; i < KH * KW; ++i) w[i] = weights[i];
  const int64_t wq = p.wq, row_len = p.row_len, OW = p.OW;
  float* const out = p.out;
  const float* const residual = p.residual;
  const float* top = p.buf + oh * SH * row_len;
  const V bias = T::set1(p.bias);
  const DepthwiseClamp clamp = p.clamp;
  const V clamp_lo = T::set1(p.lo), clamp_hi = T::set1(p.hi);
  auto chunk = [&](int64_t ow, auto masked, typename T::Mask m) {
    V a[RB], b[RB];
    for (int r = 0; r < RB; ++r) {
      a[r] = bias;
      b[r] = T::zero();
    }
    const float* row = top + ow;
    unroll<J>([&](auto jc) {
      constexpr int j = jc;
      V lo[SW], hi[SW];
      unroll<SW>([&](auto phc) {
        constexpr int ph = phc;
        if constexpr (ph < KW) lo[ph] = T::load_aligned(row + ph * wq);
        if constexpr (ph + SW < KW) hi[ph] = T::load_aligned(row + ph * wq + L);
      });
      unroll<KW>([&](auto kwc) {
        constexpr int kw = kwc;
        constexpr int ph = kw % SW, shift = kw / SW;
        V x;
        if constexpr (shift == 0)
          x = lo[ph];
        else
          x = T::template alignr<shift>(hi[ph], lo[ph]);
        unroll<RB>([&](auto rc) {
          constexpr int r = rc;
          constexpr int kh = j - r * SH;
          if constexpr (kh >= 0 && kh < KH) {
            if constexpr (kh & 1)
              b[r] = T::fma(w[kh * KW + kw], x, b[r]);
            else
              a[r] = T::fma(w[kh * KW + kw], x, a[r]);
          }
        });
      });
      row += row_len;
    });
    for (int r = 0; r < RB; ++r) {
      // finish / finish_masked, with the clamp held in registers.
      const int64_t at = (oh + r) * OW + ow;
      V v = T::add(a[r], b[r]);
      if (residual != nullptr)
        v = T::add(v, masked ? T::maskload(residual + at, m) : T::load(residual + at));
      if (clamp == DepthwiseClamp::kRelu)
        v = T::relu(v);
      else if (clamp == DepthwiseClamp::kClip)
        v = T::clip(v, clamp_lo, clamp_hi);
      if (masked)
        T::maskstore(out + at, m, v);
      else
        T::store(out + at, v);
    }
  };
  int64_t ow = 0;
  for (; ow + L <= OW; ow += L) chunk(ow, std::false_type{}, T::mask(L));
  if (ow < OW) chunk(ow, std::true_type{}, T::mask(OW - ow));
}

// Every output row of a fixed KH x KW kernel, the weights broadcast once: blocks of RB
// rows (4, or 2 for kernels whose weights fill most of the registers), then the rest.
template <typename T, int KH, int KW, int SH>
void rows_fixed(const DepthwisePlane& p) {
  using V = typename T::V;
  constexpr int RB = KH * KW > 16 ? 2 : 4;
  V w[KH * KW];
  for (int i = 0; i < KH * KW; ++i) w[i] = T::set1(p.weights[i]);
  if constexpr (has_alignr<T>()) {
    // Rows narrower than a vector (14 or 7 wide) are one masked chunk each: there the
    // second load and the shifts cost as much as the straddling loads they replace.
    const bool aligned = p.dw == 1 && p.OW >= T::kLanes && p.wq % T::kLanes == 0 &&
                         reinterpret_cast<uintptr_t>(p.buf) % (sizeof(float) * T::kLanes) == 0;
    if (aligned && p.sw == 1) {
      int64_t oh = 0;
      for (; oh + RB <= p.OH; oh += RB) row_block_aligned<T, KH, KW, SH, 1, RB>(p, w, oh);
      for (; oh < p.OH; ++oh) row_block_aligned<T, KH, KW, SH, 1, 1>(p, w, oh);
      return;
    }
    if (aligned && p.sw == 2) {
      int64_t oh = 0;
      for (; oh + RB <= p.OH; oh += RB) row_block_aligned<T, KH, KW, SH, 2, RB>(p, w, oh);
      for (; oh < p.OH; ++oh) row_block_aligned<T, KH, KW, SH, 2, 1>(p, w, oh);
      return;
    }
  }
  int64_t off[KW];
  for (int kw = 0; kw < KW; ++kw) off[kw] = p.offsets[kw];
  int64_t oh = 0;
  for (; oh + RB <= p.OH; oh += RB) row_block<T, KH, KW, SH, RB>(p, w, off, oh);
  for (; oh < p.OH; ++oh) row_block<T, KH, KW, SH, 1>(p, w, off, oh);
}

template <typename T, int KH, int KW>
bool try_rows_fixed(const DepthwisePlane& p) {
  if (p.kh != KH || p.kw != KW || p.dh != 1) return false;
  if (p.sh == 1) rows_fixed<T, KH, KW, 1>(p);
  else if (p.sh == 2) rows_fixed<T, KH, KW, 2>(p);
  else return false;
  return true;
}

// Any kernel size up to 7x7: each weight broadcast per tap.
template <typename T>
void rows_any(const DepthwisePlane& p) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  const int KH = p.kh, KW = p.kw;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    const float* rows[kDepthwiseMaxKernel];
    for (int kh = 0; kh < KH; ++kh) rows[kh] = p.buf + (oh * p.sh + kh * p.dh) * p.row_len;
    float* out = p.out + oh * p.OW;
    const float* res = p.residual != nullptr ? p.residual + oh * p.OW : nullptr;
    int64_t ow = 0;
    for (; ow + 2 * L <= p.OW; ow += 2 * L) {
      V a0 = T::set1(p.bias), a1 = a0, b0 = T::zero(), b1 = T::zero();
      for (int kh = 0; kh < KH; ++kh)
        for (int kw = 0; kw < KW; ++kw) {
          const V wv = T::set1(p.weights[kh * KW + kw]);
          const float* q = rows[kh] + p.offsets[kw] + ow;
          if (kh & 1) {
            b0 = T::fma(wv, T::load(q), b0);
            b1 = T::fma(wv, T::load(q + L), b1);
          } else {
            a0 = T::fma(wv, T::load(q), a0);
            a1 = T::fma(wv, T::load(q + L), a1);
          }
        }
      finish<T>(p, T::add(a0, b0), res != nullptr ? res + ow : nullptr, out + ow);
      finish<T>(p, T::add(a1, b1), res != nullptr ? res + ow + L : nullptr, out + ow + L);
    }
    for (; ow < p.OW; ow += L) {
      const typename T::Mask m = T::mask(p.OW - ow);
      V a = T::set1(p.bias), b = T::zero();
      for (int kh = 0; kh < KH; ++kh)
        for (int kw = 0; kw < KW; ++kw) {
          const V v = T::maskload(rows[kh] + p.offsets[kw] + ow, m);
          const V wv = T::set1(p.weights[kh * KW + kw]);
          if (kh & 1) b = T::fma(wv, v, b);
          else a = T::fma(wv, v, a);
        }
      finish_masked<T>(p, T::add(a, b), res != nullptr ? res + ow : nullptr, out + ow, m);
    }
  }
}

template <typename T>
void plane(const DepthwisePlane& p) {
  // A lambda, not a function pointer, so the copy is inlined into fill's loops.
  fill(p, [](const float* src, float* dst, int64_t n, int64_t sw) { copy_row<T>(src, dst, n, sw); });
  if (!try_rows_fixed<T, 3, 3>(p) && !try_rows_fixed<T, 5, 5>(p)) rows_any<T>(p);
}

}  // namespace infer::cpu::simd::depthwise_impl
