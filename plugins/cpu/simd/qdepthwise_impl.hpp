// Internal to the qdepthwise*.cpp files: the plane loop of qdepthwise.hpp, written once
// and compiled in each ISA's file with its flags (internal linkage, as in gemm_tile.hpp).
//
// The input plane is split into sh x sw phase planes, phase (r, c) holding the padded
// input's rows r, r + sh, ... and columns c, c + sw, ... (the zero point outside the
// image). Tap (kh, kw) of output (oh, ow) is then element (oh + kh * dh / sh) * Wq +
// ow + kw * dw / sw of phase ((kh * dh) % sh, (kw * dw) % sw): a fixed offset from
// p = oh * Wq + ow. So each tap is one long vectorized loop over p in [0, OH * Wq)
// (the columns ow >= OW are computed and dropped), whatever the image width.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qdepthwise.hpp"

namespace infer::cpu::simd::qdepthwise_detail {
namespace {

// Three taps at once (one pass over the accumulators per kernel row of a 3-wide kernel):
// acc[i] += x0[i] w0 + x1[i] w1 + x2[i] w2, the raw bytes times the weights (the zero
// point's share, x_zero times the weights' sum, is taken off once at the end: the
// padding holds x_zero too, so the identity holds for every tap). __restrict__: the
// byte inputs may alias anything as far as the compiler knows, which keeps it from
// vectorizing otherwise.
inline void accumulate3(const uint8_t* __restrict__ x0, const uint8_t* __restrict__ x1,
                        const uint8_t* __restrict__ x2, int32_t w0, int32_t w1, int32_t w2,
                        int64_t n, int32_t* __restrict__ acc) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] += static_cast<int32_t>(x0[i]) * w0 + static_cast<int32_t>(x1[i]) * w1 +
              static_cast<int32_t>(x2[i]) * w2;
}

// dst[j] = src[S * j] for j < n: S a compile-time stride, so that the loop vectorizes.
template <int S>
void gather_columns(const uint8_t* __restrict__ src, int64_t n, uint8_t* __restrict__ dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = src[S * j];
}

template <typename T>
void finish(const int32_t* __restrict__ acc, int64_t n, const QDepthwiseOutput& out,
            T* __restrict__ y) {
  const int32_t lo = std::is_same_v<T, uint8_t> ? 0 : -128;
  const int32_t hi = std::is_same_v<T, uint8_t> ? 255 : 127;
  const float scale = out.scale;
  const int32_t bias = out.bias, out_zero = out.out_zero;
  // qgemm's stage: clamped to the integer bounds less the zero point, then rounded half to
  // even (adding and subtracting 1.5 * 2^23 in that small range).
  const float flo = static_cast<float>(lo - out_zero);
  const float fhi = static_cast<float>(hi - out_zero);
  constexpr float kMagic = 12582912.0f;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t a =
        static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(bias));
    float v = static_cast<float>(a) * scale;
    v = v > flo ? v : flo;
    v = v < fhi ? v : fhi;
    const float r = (v + kMagic) - kMagic;
    y[i] = static_cast<T>(static_cast<int32_t>(r) + out_zero);
  }
}

inline void run_plane(const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero, const int32_t* w,
                      const QDepthwiseOutput& out, void* y, int32_t* scratch) {
  const PhaseLayout l = phase_layout(s);
  int32_t* acc = scratch;
  uint8_t* phases = reinterpret_cast<uint8_t*>(scratch + l.domain);
  uint8_t* narrow = phases + l.phase_bytes * s.sh * s.sw;
  const uint8_t pad = static_cast<uint8_t>(x_zero);
  // The phase planes, padding and slack included.
  for (int64_t r = 0; r < s.sh; ++r)
    for (int64_t c = 0; c < s.sw; ++c) {
      uint8_t* ph = phases + (r * s.sw + c) * l.phase_bytes;
      std::memset(ph, pad, static_cast<size_t>(l.phase_bytes));
      for (int64_t i = 0; i < l.Hq; ++i) {
        const int64_t ih = r + s.sh * i - s.pad_top;
        if (ih < 0 || ih >= s.H) continue;
        const uint8_t* src = x + ih * s.W;
        uint8_t* dst = ph + i * l.Wq;
        // Columns j with iw = c + sw * j - pad_left inside [0, W).
        const int64_t first = c - s.pad_left;
        const int64_t j0 = first >= 0 ? 0 : (-first + s.sw - 1) / s.sw;
        const int64_t j1 = std::min(l.Wq, s.W - first <= 0 ? 0 : (s.W - first + s.sw - 1) / s.sw);
        if (j1 <= j0) continue;
        const uint8_t* from = src + first + s.sw * j0;
        if (s.sw == 1)
          std::memcpy(dst + j0, from, static_cast<size_t>(j1 - j0));
        else if (s.sw == 2)
          gather_columns<2>(from, j1 - j0, dst + j0);
        else
          for (int64_t j = j0; j < j1; ++j) dst[j] = src[first + s.sw * j];
      }
    }
  // Every tap's start, three at a time (a missing third reads the first with weight 0).
  int32_t wsum = 0;
  const int64_t taps = s.KH * s.KW;
  auto tap = [&](int64_t t) {
    const int64_t rh = t / s.KW * s.dh, rw = t % s.KW * s.dw;
    return phases + ((rh % s.sh) * s.sw + rw % s.sw) * l.phase_bytes + (rh / s.sh) * l.Wq +
           rw / s.sw;
  };
  std::fill(acc, acc + l.domain, 0);
  for (int64_t t = 0; t < taps; t += 3) {
    const uint8_t* x0 = tap(t);
    const uint8_t* x1 = t + 1 < taps ? tap(t + 1) : x0;
    const uint8_t* x2 = t + 2 < taps ? tap(t + 2) : x0;
    const int32_t w0 = w[t], w1 = t + 1 < taps ? w[t + 1] : 0, w2 = t + 2 < taps ? w[t + 2] : 0;
    wsum += w0 + w1 + w2;
    accumulate3(x0, x1, x2, w0, w1, w2, l.domain, acc);
  }
  // The zero point's share (exact: wrapping int32 arithmetic, like the definition's).
  const int32_t shift =
      static_cast<int32_t>(static_cast<uint32_t>(x_zero) * static_cast<uint32_t>(wsum));
  for (int64_t i = 0; i < l.domain; ++i)
    acc[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) - static_cast<uint32_t>(shift));
  // The valid columns of each row.
  if (out.kind == QDepthwiseOutput::Kind::kInt32) {
    for (int64_t oh = 0; oh < s.OH; ++oh)
      std::memcpy(static_cast<int32_t*>(y) + oh * s.OW, acc + oh * l.Wq,
                  static_cast<size_t>(s.OW) * sizeof(int32_t));
    return;
  }
  if (out.kind == QDepthwiseOutput::Kind::kUint8)
    finish(acc, l.domain, out, narrow);
  else
    finish(acc, l.domain, out, reinterpret_cast<int8_t*>(narrow));
  for (int64_t oh = 0; oh < s.OH; ++oh)
    std::memcpy(static_cast<uint8_t*>(y) + oh * s.OW, narrow + oh * l.Wq,
                static_cast<size_t>(s.OW));
}

}  // namespace
}  // namespace infer::cpu::simd::qdepthwise_detail
