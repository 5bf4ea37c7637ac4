// Internal to the quantize*.cpp files: the loops of quantize.hpp, written once and
// compiled in each ISA's file with its flags (and -fno-trapping-math, without which GCC
// keeps the selects below as branches and vectorizes nothing). Internal linkage on
// purpose, as in gemm_tile.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "quantize.hpp"

namespace infer::cpu::simd::quantize_detail {
namespace {

inline float min_f(float a, float b) { return b < a ? b : a; }
inline float max_f(float a, float b) { return a < b ? b : a; }

// x / scale is first held to [-512, 512] (which cannot change the saturated result, zp
// being in [-128, 255]; a NaN becomes -512 here, and is mapped to zp below), where adding
// and subtracting 1.5 * 2^23 rounds half to even exactly.
template <typename Q>
struct Rounder {
  float z, lo, hi;
  explicit Rounder(int32_t zp)
      : z(static_cast<float>(zp)),
        lo(static_cast<float>(std::numeric_limits<Q>::min())),
        hi(static_cast<float>(std::numeric_limits<Q>::max())) {}
  // saturate(round_half_even(q) + zp), NaN -> zp.
  Q operator()(float q) const {
    constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
    const float v = min_f(512.0f, max_f(-512.0f, q));
    const float r = (v + kMagic) - kMagic + z;
    const float s = q == q ? min_f(hi, max_f(lo, r)) : z;
    return static_cast<Q>(static_cast<int32_t>(s));
  }
};

template <typename Q>
void quantize(const float* x, size_t n, float scale, int32_t zp, Q* y) {
  const Rounder<Q> round(zp);
  for (size_t i = 0; i < n; ++i) y[i] = round(x[i] / scale);
}

template <typename Q>
void dequantize(const Q* x, size_t n, float scale, int32_t zp, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
}

inline void range_with_zero(const float* x, size_t n, float* lo, float* hi) {
  constexpr size_t kLanes = 16;
  float l[kLanes] = {}, h[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) {
      l[j] = min_f(l[j], x[i + j]);  // b < a ? b : a: a NaN x leaves the lane as it is
      h[j] = x[i + j] > h[j] ? x[i + j] : h[j];
    }
  for (; i < n; ++i) {
    l[0] = min_f(l[0], x[i]);
    h[0] = x[i] > h[0] ? x[i] : h[0];
  }
  float a = 0.0f, b = 0.0f;
  for (size_t j = 0; j < kLanes; ++j) {
    a = min_f(a, l[j]);
    b = max_f(b, h[j]);
  }
  *lo = a;
  *hi = b;
}

// QLinearAdd / QLinearMul (quantize.hpp): A and B each a run (step 1) or one element
// broadcast (step 0), fixed at compile time so that the loop vectorizes. The files
// compile with -ffp-contract=off: an FMA of the scaling and the sum would round once
// where the unfused graph rounds twice.
template <typename Q, bool kMul, bool kABroadcast, bool kBBroadcast>
void qlinear_binary_loop(const Q* a, QParams pa, const Q* b, QParams pb, QParams pc, Q* y,
                         size_t n) {
  const Rounder<Q> round(pc.zero);
  for (size_t i = 0; i < n; ++i) {
    const float fa =
        static_cast<float>(static_cast<int32_t>(a[kABroadcast ? 0 : i]) - pa.zero) * pa.scale;
    const float fb =
        static_cast<float>(static_cast<int32_t>(b[kBBroadcast ? 0 : i]) - pb.zero) * pb.scale;
    y[i] = round((kMul ? fa * fb : fa + fb) / pc.scale);
  }
}

template <typename Q, bool kMul>
void qlinear_binary_steps(const Q* a, size_t a_step, QParams pa, const Q* b, size_t b_step,
                          QParams pb, QParams pc, Q* y, size_t n) {
  if (a_step != 0 && b_step != 0)
    qlinear_binary_loop<Q, kMul, false, false>(a, pa, b, pb, pc, y, n);
  else if (a_step != 0)
    qlinear_binary_loop<Q, kMul, false, true>(a, pa, b, pb, pc, y, n);
  else if (b_step != 0)
    qlinear_binary_loop<Q, kMul, true, false>(a, pa, b, pb, pc, y, n);
  else
    qlinear_binary_loop<Q, kMul, true, true>(a, pa, b, pb, pc, y, n);
}

template <typename Q>
void qlinear_binary(QBinaryOp op, const Q* a, size_t a_step, QParams pa, const Q* b, size_t b_step,
                    QParams pb, QParams pc, Q* y, size_t n) {
  if (op == QBinaryOp::kMul)
    qlinear_binary_steps<Q, true>(a, a_step, pa, b, b_step, pb, pc, y, n);
  else
    qlinear_binary_steps<Q, false>(a, a_step, pa, b, b_step, pb, pc, y, n);
}

}  // namespace
}  // namespace infer::cpu::simd::quantize_detail
