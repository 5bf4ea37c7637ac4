// The plane loop of qdepthwise.hpp compiled with the AVX512 flags (qdepthwise_impl.hpp).
#include "qdepthwise_impl.hpp"

namespace infer::cpu::simd::qdepthwise_detail {

void plane_avx512(const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero, const int32_t* w,
                  const QDepthwiseOutput& out, void* y, int32_t* scratch) {
  run_plane(s, x, x_zero, w, out, y, scratch);
}

}  // namespace infer::cpu::simd::qdepthwise_detail

// The channel-blocked kernel (qdepthwise.hpp, qdepthwise_block).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "narrow_avx512.hpp"
#include "transpose16_avx512.hpp"

namespace infer::cpu::simd::qdepthwise_detail {
namespace {

inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

struct BlockStage {
  QDepthwiseOutput::Kind kind;
  __m512i bias, oz;
  __m512 scale, flo, fhi;
};

// The runtime geometry of a band, for the pixel loops.
struct BlockGeometry {
  int64_t wp, row0, sh, sw, dh, dw, KH, KW;
};

// P output pixels of row oh from column ow (P chains of FMAs), finished into orow (the
// row's outputs): the exact int32 sums, or (kQuant) the quantized values, 16 channels
// per pixel. KH, KW and SW > 0 fix the kernel and the horizontal stride at compile time
// (dilation 1), so the taps unroll into constant offsets; 0 reads them from g. (With
// runtime loops, their control took a third of the kernel's time.)
template <int KH, int KW, int SW, int P, bool kQuant>
inline void block_pixels(const BlockGeometry& g, const float* in, const __m512* wv,
                         const BlockStage& st, int64_t oh, int64_t ow, int32_t* orow) {
  constexpr bool kFixed = KH > 0;
  const int64_t kh_n = kFixed ? KH : g.KH, kw_n = kFixed ? KW : g.KW;
  const int64_t sw = kFixed ? SW : g.sw, dh = kFixed ? 1 : g.dh, dw = kFixed ? 1 : g.dw;
  __m512 acc[P];
#pragma GCC unroll 8
  for (int j = 0; j < P; ++j) acc[j] = _mm512_setzero_ps();
  const float* top = in + ((oh * g.sh - g.row0) * g.wp + ow * sw) * 16;
#pragma GCC unroll 7
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const float* row = top + kh * dh * g.wp * 16;
#pragma GCC unroll 7
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const float* p = row + kw * dw * 16;
      const __m512 w = wv[kh * kw_n + kw];
#pragma GCC unroll 8
      for (int j = 0; j < P; ++j)
        acc[j] = _mm512_fmadd_ps(_mm512_load_ps(p + j * sw * 16), w, acc[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < P; ++j) {
    __m512i x = _mm512_cvtps_epi32(acc[j]);  // an integer already: exact
    if constexpr (kQuant) {
      // qgemm's stage: acc + bias in int32, one multiply, the clamp, round to nearest even.
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(x, st.bias)), st.scale);
      f = _mm512_min_ps(_mm512_max_ps(f, st.flo), st.fhi);
      x = _mm512_add_epi32(_mm512_cvtps_epi32(f), st.oz);
    }
    _mm512_store_si512(orow + (ow + j) * 16, x);
  }
}

// Output rows [oh0, oh1) of the band into obuf (pixel (oh0, 0) first).
template <int KH, int KW, int SW, bool kQuant>
void block_rows(const BlockGeometry& g, const float* in, const __m512* wv, const BlockStage& st,
                int64_t OW, int64_t oh0, int64_t oh1, int32_t* obuf) {
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    int32_t* orow = obuf + (oh - oh0) * OW * 16;
    int64_t ow = 0;
    for (; ow + 8 <= OW; ow += 8) block_pixels<KH, KW, SW, 8, kQuant>(g, in, wv, st, oh, ow, orow);
    for (; ow + 4 <= OW; ow += 4) block_pixels<KH, KW, SW, 4, kQuant>(g, in, wv, st, oh, ow, orow);
    for (; ow < OW; ++ow) block_pixels<KH, KW, SW, 1, kQuant>(g, in, wv, st, oh, ow, orow);
  }
}

// block_rows with MobileNet's kernels (3x3 and 5x5, stride 1 or 2 across, no dilation)
// fixed at compile time, the rest read at run time.
template <bool kQuant>
void block_rows_any(const BlockGeometry& g, const float* in, const __m512* wv,
                    const BlockStage& st, int64_t OW, int64_t oh0, int64_t oh1, int32_t* obuf) {
  if (g.dh == 1 && g.dw == 1 && g.KH == g.KW && (g.sw == 1 || g.sw == 2)) {
    if (g.KH == 3 && g.sw == 1) return block_rows<3, 3, 1, kQuant>(g, in, wv, st, OW, oh0, oh1, obuf);
    if (g.KH == 3 && g.sw == 2) return block_rows<3, 3, 2, kQuant>(g, in, wv, st, OW, oh0, oh1, obuf);
    if (g.KH == 5 && g.sw == 1) return block_rows<5, 5, 1, kQuant>(g, in, wv, st, OW, oh0, oh1, obuf);
    if (g.KH == 5 && g.sw == 2) return block_rows<5, 5, 2, kQuant>(g, in, wv, st, OW, oh0, oh1, obuf);
  }
  block_rows<0, 0, 0, kQuant>(g, in, wv, st, OW, oh0, oh1, obuf);
}

}  // namespace

void block16_avx512(const QDepthwiseShape& s, int32_t x_zero, const QDepthwiseOutput& out,
                    const QDepthwiseBlock& b, int64_t oh0, int64_t oh1, float* buf) {
  const int64_t wp = (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1;
  // Padded rows [row0, row1) of the input: those of output rows [oh0, oh1).
  const int64_t row0 = oh0 * s.sh, row1 = (oh1 - 1) * s.sh + (s.KH - 1) * s.dh + 1;
  float* in = buf;
  // The outputs of the band: pixel (oh0, 0) first.
  int32_t* obuf = reinterpret_cast<int32_t*>(buf + (row1 - row0) * wp * 16);
  const __m512 zero = _mm512_setzero_ps();
  const int64_t plane = s.H * s.W, oplane = s.OH * s.OW;
  // 1. The padded input, channel-last: buffer pixel (r, c) is input (row0 + r - pad_top,
  // c - pad_left), as x - x_zero, and 0 in the padding.
  const int64_t iy0 = std::max<int64_t>(0, row0 - s.pad_top),
                iy1 = std::max(iy0, std::min(s.H, row1 - s.pad_top));
  const int64_t ix0 = std::max<int64_t>(0, -s.pad_left),
                ix1 = std::max(ix0, std::min(s.W, wp - s.pad_left));
  // Zeros where no input lands: the rows above and below, and each row's columns left and
  // right of the input's.
  const auto zero_pixels = [&](int64_t r, int64_t c0, int64_t c1) {
    if (c1 > c0)
      std::memset(in + (r * wp + c0) * 16, 0, sizeof(float) * static_cast<size_t>((c1 - c0) * 16));
  };
  const int64_t r_in0 = iy0 + s.pad_top - row0, r_in1 = iy1 + s.pad_top - row0;
  for (int64_t r = 0; r < row1 - row0; ++r) {
    if (r < r_in0 || r >= r_in1 || ix1 <= ix0) {
      zero_pixels(r, 0, wp);
    } else {
      zero_pixels(r, 0, ix0 + s.pad_left);
      zero_pixels(r, ix1 + s.pad_left, wp);
    }
  }
  const __m512i xz = _mm512_set1_epi32(x_zero);
  const uint8_t* x = b.x;
  __m512 r[16];
  for (int64_t iy = iy0; iy < iy1; ++iy)
    for (int64_t ix = ix0; ix < ix1; ix += 16) {
      const int64_t n = std::min<int64_t>(16, ix1 - ix);
      const __mmask16 m = lanes(n);
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c) {
        if (c < b.count) {
          const __m512i v =
              _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, x + c * plane + iy * s.W + ix));
          r[c] = _mm512_maskz_cvtepi32_ps(m, _mm512_sub_epi32(v, xz));
        } else {
          r[c] = zero;
        }
      }
      transpose16(r);
      float* dst = in + ((iy + s.pad_top - row0) * wp + ix + s.pad_left) * 16;
      // (Unrolled: as a loop, GCC made it a memcpy of the spilled registers.)
#pragma GCC unroll 16
      for (int p = 0; p < 16; ++p)
        if (p < n) _mm512_store_ps(dst + p * 16, r[p]);
    }
  // 2. Every output pixel of the band, the weights as vectors of the block's channels.
  const int64_t taps = s.KH * s.KW;
  __m512 wv[kQDepthwiseBlockMaxTaps];
  for (int64_t t = 0; t < taps; ++t) {
    alignas(64) float col[16] = {};
    for (int c = 0; c < b.count; ++c) col[c] = static_cast<float>(b.w[c * taps + t]);
    wv[t] = _mm512_load_ps(col);
  }
  BlockStage st;
  st.kind = out.kind;
  const int32_t lo = out.kind == QDepthwiseOutput::Kind::kUint8 ? 0 : -128;
  const int32_t hi = out.kind == QDepthwiseOutput::Kind::kUint8 ? 255 : 127;
  st.flo = _mm512_set1_ps(static_cast<float>(lo - out.out_zero));
  st.fhi = _mm512_set1_ps(static_cast<float>(hi - out.out_zero));
  st.oz = _mm512_set1_epi32(out.out_zero);
  const __mmask16 live = lanes(b.count);
  st.bias = b.bias != nullptr ? _mm512_maskz_loadu_epi32(live, b.bias) : _mm512_setzero_si512();
  st.scale = b.scale != nullptr ? _mm512_maskz_loadu_ps(live, b.scale) : zero;
  const BlockGeometry g{wp, row0, s.sh, s.sw, s.dh, s.dw, s.KH, s.KW};
  if (out.kind == QDepthwiseOutput::Kind::kInt32)
    block_rows_any<false>(g, in, wv, st, s.OW, oh0, oh1, obuf);
  else
    block_rows_any<true>(g, in, wv, st, s.OW, oh0, oh1, obuf);
  // 3. Back to planes, 16 pixels at a time.
  const int64_t first = oh0 * s.OW, count = (oh1 - oh0) * s.OW;
  for (int64_t q0 = 0; q0 < count; q0 += 16) {
    const int64_t n = std::min<int64_t>(16, count - q0), p0 = first + q0;
    const __mmask16 m = lanes(n);
#pragma GCC unroll 16
    for (int p = 0; p < 16; ++p)
      r[p] = p < n ? _mm512_load_ps(reinterpret_cast<const float*>(obuf + (q0 + p) * 16)) : zero;
    transpose16(r);
    for (int c = 0; c < b.count; ++c) {
      const __m512i v = _mm512_castps_si512(r[c]);
      if (out.kind == QDepthwiseOutput::Kind::kInt32)
        _mm512_mask_storeu_epi32(static_cast<int32_t*>(b.y) + c * oplane + p0, m, v);
      else  // in the output type's range already: the low byte is the value
        store_low_bytes(static_cast<uint8_t*>(b.y) + c * oplane + p0, m, v);
    }
  }
}

}  // namespace infer::cpu::simd::qdepthwise_detail
