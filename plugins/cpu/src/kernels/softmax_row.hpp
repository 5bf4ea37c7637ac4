// One row of Softmax, LogSoftmax or Hardmax: the `n` elements of xr spaced `inner` apart
// are normalized into yr (which may be xr itself: each element is read before it is
// written). Shared by the Softmax family and by the fused Attention kernel, so both
// normalize exactly alike. Half-precision inputs are computed in float and rounded once
// on store; the sum of exponentials is accumulated in double so long rows keep their
// precision.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../dispatch.hpp"

namespace infer::cpu::kernels {

enum class SoftmaxMode { kSoftmax, kLogSoftmax, kHardmax };

template <typename T>
void softmax_row(const T* xr, T* yr, int64_t n, int64_t inner, SoftmaxMode mode) {
  using C = compute_t<T>;
  if (mode == SoftmaxMode::kHardmax) {
    // The first occurrence of the maximum gets the 1 (a NaN never compares greater).
    int64_t best = 0;
    C mx = to_compute(xr[0]);
    for (int64_t k = 1; k < n; ++k) {
      const C v = to_compute(xr[k * inner]);
      if (v > mx) {
        mx = v;
        best = k;
      }
    }
    for (int64_t k = 0; k < n; ++k) yr[k * inner] = from_compute<T>(C(k == best ? 1 : 0));
    return;
  }
  C mx = -INFINITY;
  for (int64_t k = 0; k < n; ++k) mx = std::fmax(mx, to_compute(xr[k * inner]));
  if (std::isinf(mx) && mx < 0) mx = 0;  // every element -inf: avoid (-inf) - (-inf)
  double sum = 0;
  if constexpr (std::is_same_v<T, C>) {
    // Full-precision types keep the exponentials in the output and scale them after.
    for (int64_t k = 0; k < n; ++k) {
      const C e = std::exp(xr[k * inner] - mx);
      if (mode == SoftmaxMode::kSoftmax) yr[k * inner] = e;
      sum += static_cast<double>(e);
    }
  } else {
    for (int64_t k = 0; k < n; ++k)
      sum += static_cast<double>(std::exp(to_compute(xr[k * inner]) - mx));
  }
  if (mode == SoftmaxMode::kLogSoftmax) {
    const C ls = static_cast<C>(std::log(sum));
    for (int64_t k = 0; k < n; ++k)
      yr[k * inner] = from_compute<T>(to_compute(xr[k * inner]) - mx - ls);
  } else if constexpr (std::is_same_v<T, C>) {
    const C inv = static_cast<C>(1.0 / sum);
    for (int64_t k = 0; k < n; ++k) yr[k * inner] *= inv;
  } else {
    const C inv = static_cast<C>(1.0 / sum);
    for (int64_t k = 0; k < n; ++k)
      yr[k * inner] = from_compute<T>(std::exp(to_compute(xr[k * inner]) - mx) * inv);
  }
}

}  // namespace infer::cpu::kernels
