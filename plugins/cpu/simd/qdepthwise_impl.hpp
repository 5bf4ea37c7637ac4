// Internal to the qdepthwise*.cpp files: the plane loop of qdepthwise.hpp, written once
// and compiled in each ISA's file with its flags (internal linkage, as in gemm_tile.hpp).
// The inner loops run along the output row, which GCC vectorizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "qdepthwise.hpp"

namespace infer::cpu::simd::qdepthwise_detail {
namespace {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// __restrict__: the byte input may alias anything as far as the compiler knows, which
// keeps it from vectorizing the loops below otherwise.
template <int SW>
void accumulate_row(const uint8_t* __restrict__ xrow, int64_t off, int64_t sw, int64_t lo,
                    int64_t hi, int32_t x_zero, int32_t wv, int32_t* __restrict__ acc) {
  const int64_t step = SW > 0 ? SW : sw;
  for (int64_t ow = lo; ow < hi; ++ow)
    acc[ow] += (static_cast<int32_t>(xrow[ow * step + off]) - x_zero) * wv;
}

template <typename T>
void finish_row(const int32_t* __restrict__ acc, int64_t n, const QDepthwiseOutput& out,
                T* __restrict__ y) {
  const int32_t lo = std::is_same_v<T, uint8_t> ? 0 : -128;
  const int32_t hi = std::is_same_v<T, uint8_t> ? 255 : 127;
  // qgemm's stage: clamped to the integer bounds less the zero point, then rounded half to
  // even (adding and subtracting 1.5 * 2^23 in that small range).
  const float scale = out.scale;
  const int32_t bias = out.bias, out_zero = out.out_zero;
  const float flo = static_cast<float>(lo - out.out_zero);
  const float fhi = static_cast<float>(hi - out.out_zero);
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

// The even and odd columns of a row, each contiguous, for stride 2.
inline void deinterleave(const uint8_t* __restrict__ row, int64_t W, uint8_t* __restrict__ even,
                         uint8_t* __restrict__ odd) {
  for (int64_t j = 0; j < W / 2; ++j) {
    even[j] = row[2 * j];
    odd[j] = row[2 * j + 1];
  }
  if (W % 2 != 0) even[W / 2] = row[W - 1];
}

// `split`: scratch of W + 2 bytes, used for stride 2.
template <int SW>
void plane(const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero, const int32_t* w,
           const QDepthwiseOutput& out, void* y, int32_t* acc, uint8_t* split) {
  const int64_t sw = SW > 0 ? SW : s.sw;
  uint8_t* even = split;
  uint8_t* odd = split + (s.W + 1) / 2;
  for (int64_t oh = 0; oh < s.OH; ++oh) {
    std::fill(acc, acc + s.OW, 0);
    for (int64_t kh = 0; kh < s.KH; ++kh) {
      const int64_t ih = oh * s.sh + kh * s.dh - s.pad_top;
      if (ih < 0 || ih >= s.H) continue;
      const uint8_t* xrow = x + ih * s.W;
      if (SW == 2) deinterleave(xrow, s.W, even, odd);
      for (int64_t kw = 0; kw < s.KW; ++kw) {
        const int32_t wv = w[kh * s.KW + kw];
        if (wv == 0) continue;
        // Output columns whose tap iw = ow * sw + off is inside [0, W).
        const int64_t off = kw * s.dw - s.pad_left;
        const int64_t lo = std::clamp<int64_t>(off >= 0 ? 0 : ceil_div(-off, sw), 0, s.OW);
        const int64_t hi =
            std::clamp<int64_t>(s.W - off <= 0 ? 0 : ceil_div(s.W - off, sw), lo, s.OW);
        if (SW == 2) {
          // iw = 2 ow + off: column ow + floor(off / 2) of the even or odd half.
          const int64_t half = off >= 0 ? off / 2 : -((-off + 1) / 2);
          accumulate_row<1>((off & 1) != 0 ? odd : even, half, 1, lo, hi, x_zero, wv, acc);
        } else {
          accumulate_row<SW>(xrow, off, sw, lo, hi, x_zero, wv, acc);
        }
      }
    }
    switch (out.kind) {
      case QDepthwiseOutput::Kind::kInt32:
        std::copy(acc, acc + s.OW, static_cast<int32_t*>(y) + oh * s.OW);
        break;
      case QDepthwiseOutput::Kind::kUint8:
        finish_row(acc, s.OW, out, static_cast<uint8_t*>(y) + oh * s.OW);
        break;
      case QDepthwiseOutput::Kind::kInt8:
        finish_row(acc, s.OW, out, static_cast<int8_t*>(y) + oh * s.OW);
        break;
    }
  }
}

inline void run_plane(const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero, const int32_t* w,
                      const QDepthwiseOutput& out, void* y, int32_t* acc) {
  // acc holds OW int32 and then W + 2 bytes of scratch (qdepthwise.hpp).
  uint8_t* split = reinterpret_cast<uint8_t*>(acc + s.OW);
  if (s.sw == 1)
    plane<1>(s, x, x_zero, w, out, y, acc, split);
  else if (s.sw == 2)
    plane<2>(s, x, x_zero, w, out, y, acc, split);
  else
    plane<0>(s, x, x_zero, w, out, y, acc, split);
}

}  // namespace
}  // namespace infer::cpu::simd::qdepthwise_detail
