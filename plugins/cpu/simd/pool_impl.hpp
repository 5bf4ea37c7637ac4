// The pool2d row loops (pool_kernels.hpp) written once over GCC's generic vector types
// (vector_size: arithmetic, compares and selects, shuffles), so the AVX2, AVX-512 and
// NEON files hold only what the generic types cannot say: masked loads and stores.
// Include only from pool__<isa>.cpp: the vectors must be built with that file's ISA
// flags. T provides:
//   kLanes; V = Vec<kLanes>; maskload(p, n) (lanes [0, n) from p, reading nothing else;
//   the other lanes 0; 0 <= n <= kLanes) and maskstore(p, n, v) (writes lanes [0, n)).
// Each step covers kLanes output columns: stride 1 loads them contiguously, stride 2
// loads 2 * kLanes floats and keeps the even ones, other strides gather lane by lane.
// The last block (and any block whose full-width loads would run past the input row)
// uses masked loads and a masked store, so nothing past a row's end is read or past the
// output written. The max is `v > best ? v : best` (MAXPS on x86), so a NaN best stays
// and a NaN v is dropped, as in the scalar reference.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "pool_kernels.hpp"

namespace infer::cpu::simd::pool_impl {

template <int L>
struct VecTypes {
  typedef float F __attribute__((vector_size(4 * L)));
  typedef int32_t I __attribute__((vector_size(4 * L)));
};
template <int L>
using Vec = typename VecTypes<L>::F;

// Every helper is keyed on T (local to one ISA file), so code built with one ISA's flags
// can never be picked by the linker for another's.
template <typename T>
inline Vec<T::kLanes> load(const float* p) {
  Vec<T::kLanes> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline Vec<T::kLanes> splat(float x) {
  Vec<T::kLanes> v;
  for (int i = 0; i < T::kLanes; ++i) v[i] = x;
  return v;
}
// Lanes 0, 2, 4, ... of the 2 * kLanes floats a:b.
// __builtin_shufflevector (GCC 12 and clang) takes the lane indices as constants.
template <typename T, int... I>
inline Vec<T::kLanes> even(Vec<T::kLanes> a, Vec<T::kLanes> b,
                           std::integer_sequence<int, I...>) {
  return __builtin_shufflevector(a, b, (2 * I)...);
}
template <typename T>
inline Vec<T::kLanes> even(Vec<T::kLanes> a, Vec<T::kLanes> b) {
  return even<T>(a, b, std::make_integer_sequence<int, T::kLanes>{});
}

// How taps combine: the max, or the sum then divided by the window's count.
struct MaxOp {
  template <typename V>
  static V combine(V acc, V v) {
    return v > acc ? v : acc;
  }
  template <typename V>
  static V finish(V acc, V) {
    return acc;
  }
};
struct AvgOp {
  template <typename V>
  static V combine(V acc, V v) {
    return acc + v;
  }
  template <typename V>
  static V finish(V acc, V divisor) {
    return acc / divisor;
  }
};

// kLanes taps p[0], p[sw], p[2 sw], ... for a stride known at compile time (1, 2) or
// any (S = 0).
template <typename T, int S>
struct Taps {
  static constexpr int L = T::kLanes;
  using V = Vec<L>;
  // Floats a full-width load spans from p.
  static int64_t span(int64_t sw) { return S == 1 ? L : S == 2 ? 2 * L : (L - 1) * sw + 1; }
  static V load_full(const float* p, int64_t sw) {
    if constexpr (S == 1) {
      return load<T>(p);
    } else if constexpr (S == 2) {
      return even<T>(load<T>(p), load<T>(p + L));
    } else {
      V v;
      for (int i = 0; i < L; ++i) v[i] = p[i * sw];
      return v;
    }
  }
  // The first n lanes (1 <= n <= kLanes), reading only the floats they need.
  static V load_n(const float* p, int64_t n, int64_t sw) {
    if constexpr (S == 1) {
      return T::maskload(p, n);
    } else if constexpr (S == 2) {
      const int64_t len = 2 * n - 1;  // the last lane reads p[2 (n - 1)]
      return even<T>(T::maskload(p, len < L ? len : L), T::maskload(p + L, len > L ? len - L : 0));
    } else {
      V v = splat<T>(0.0f);
      for (int64_t i = 0; i < n; ++i) v[i] = p[i * sw];
      return v;
    }
  }
};

// The taps of one block: `tap(p)` loads the lanes of the taps at p. Row 0's first tap
// seeds the accumulator and the others follow in row-major order, so the max keeps the
// scalar reference's NaN rule; row 0 is peeled so a fixed-width tap loop unrolls.
template <typename Op, int KW, typename V, typename Tap>
inline V block(const float* const* rows, int64_t nrows, int64_t c, int64_t kw, int64_t dw, Tap&& tap) {
  const float* row = rows[0] + c;
  V acc = tap(row);
#pragma GCC unroll 4
  for (int64_t k = 1; k < (KW > 0 ? KW : kw); ++k) acc = Op::combine(acc, tap(row + k * dw));
  for (int64_t i = 1; i < nrows; ++i) {
    row = rows[i] + c;
#pragma GCC unroll 4
    for (int64_t k = 0; k < (KW > 0 ? KW : kw); ++k) acc = Op::combine(acc, tap(row + k * dw));
  }
  return acc;
}

// One output row for stride S (0: any) and kernel width KW (0: any, read from r).
template <typename T, typename Op, int S, int KW>
void row_stride(const PoolRow& r) {
  using Ld = Taps<T, S>;
  using V = typename Ld::V;
  constexpr int64_t L = T::kLanes;
  const V divisor = splat<T>(r.divisor);
  // Locals, not r's fields: the stores below may alias them as far as the compiler knows.
  const float* const* rows = r.rows;
  float* out = r.out;
  const int64_t nrows = r.nrows, start = r.start, count = r.count, avail = r.avail;
  const int64_t kw = KW > 0 ? KW : r.kw, sw = r.sw, dw = r.dw;
  // The furthest float (exclusive) a full block reads, relative to its first column.
  const int64_t reach = (kw - 1) * dw + Ld::span(sw);
  int64_t j = 0;
  for (; j + L <= count && j * sw + reach <= avail; j += L) {
    const V acc = block<Op, KW, V>(rows, nrows, start + j * sw, kw, dw,
                                   [&](const float* p) { return Ld::load_full(p, sw); });
    const V y = Op::finish(acc, divisor);
    std::memcpy(out + j, &y, sizeof y);
  }
  for (; j < count; j += L) {
    const int64_t n = count - j < L ? count - j : L;
    const V acc = block<Op, KW, V>(rows, nrows, start + j * sw, kw, dw,
                                   [&](const float* p) { return Ld::load_n(p, n, sw); });
    T::maskstore(out + j, n, Op::finish(acc, divisor));
  }
}

// The common pooling widths 2 and 3 get their tap loop unrolled.
template <typename T, typename Op, int S>
void row_width(const PoolRow& r) {
  if (r.kw == 3) row_stride<T, Op, S, 3>(r);
  else if (r.kw == 2) row_stride<T, Op, S, 2>(r);
  else row_stride<T, Op, S, 0>(r);
}

template <typename T, typename Op>
void row(const PoolRow& r) {
  if (r.sw == 1) row_width<T, Op, 1>(r);
  else if (r.sw == 2) row_width<T, Op, 2>(r);
  else row_width<T, Op, 0>(r);
}

}  // namespace infer::cpu::simd::pool_impl
