// AVX-512 depthwise plane: 32 outputs per step in two vectors, each with two accumulators
// (even and odd kernel rows) so the FMA chains overlap; the tail uses masked loads. The
// loops are in depthwise_impl.hpp; this file supplies the AVX-512 intrinsics.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "depthwise_impl.hpp"
#include "depthwise_kernels.hpp"
#include "transpose16_avx512.hpp"

namespace infer::cpu::simd {

namespace {

struct Avx512 {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr bool kAlignr = true;  // load_aligned and alignr below
  static V load_aligned(const float* p) { return _mm512_load_ps(p); }
  // Lanes S..15 of lo, then lanes 0..S-1 of hi: the vector S floats further on.
  template <int S>
  static V alignr(V hi, V lo) {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), S));
  }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V fma(V w, V x, V acc) { return _mm512_fmadd_ps(w, x, acc); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  // Lanes below min(left, 16) set; none for left <= 0.
  static Mask mask(int64_t left) {
    if (left <= 0) return 0;
    return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
  }
  static V maskload(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void maskstore(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
  // max/min return their second operand when either is NaN: Relu maps NaN to 0, Clip
  // passes it through, as the unfused kernels do.
  static V relu(V v) { return _mm512_max_ps(v, _mm512_setzero_ps()); }
  static V clip(V v, V lo, V hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }
  static V even(const float* p) {
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 16));
  }
  static V even_masked(const float* p, int64_t n) {
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const V a = maskload(p, mask(2 * n - 1));
    const V b = maskload(p + 16, mask(2 * n - 1 - 16));
    return _mm512_permutex2var_ps(a, idx, b);
  }
};

}  // namespace

void depthwise_plane_avx512(const DepthwisePlane& p) { depthwise_impl::plane<Avx512>(p); }

namespace {

// G output pixels of one row from ow on (G accumulators: independent FMA chains), the
// kernel's taps outermost so each weight vector is used G times per load.
template <int G>
inline void block_pixels(const DepthwiseBlock& b, const float* in, int64_t wp, const __m512* wv,
                         __m512 bias, int64_t oh, int64_t ow, float* obuf) {
  __m512 acc[G];
  for (int g = 0; g < G; ++g) acc[g] = bias;
  for (int kh = 0; kh < b.kh; ++kh) {
    const float* row = in + ((oh * b.sh + kh * b.dh) * wp + ow * b.sw) * 16;
    for (int kw = 0; kw < b.kw; ++kw) {
      const __m512 w = wv[kh * b.kw + kw];
      const float* px = row + kw * b.dw * 16;
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g)
        acc[g] = _mm512_fmadd_ps(w, _mm512_load_ps(px + g * b.sw * 16), acc[g]);
    }
  }
  for (int g = 0; g < G; ++g) _mm512_store_ps(obuf + (oh * b.OW + ow + g) * 16, acc[g]);
}

}  // namespace

void depthwise_block16_avx512(const DepthwiseBlock& b) {
  using T = Avx512;
  const int64_t hp = (b.OH - 1) * b.sh + (b.kh - 1) * b.dh + 1;
  const int64_t wp = (b.OW - 1) * b.sw + (b.kw - 1) * b.dw + 1;
  const int64_t plane = b.H * b.W, oplane = b.OH * b.OW;
  float* in = b.buf;
  float* obuf = b.buf + 16 * hp * wp;
  const __m512 zero = _mm512_setzero_ps();
  // 1. The padded input, channel-last: pixel (y, x) of the buffer is input (y - ph, x - pw).
  std::memset(in, 0, sizeof(float) * static_cast<size_t>(16 * hp * wp));
  const int64_t iy0 = std::max<int64_t>(0, -b.ph), iy1 = std::min(b.H, hp - b.ph);
  const int64_t ix0 = std::max<int64_t>(0, -b.pw), ix1 = std::min(b.W, wp - b.pw);
  __m512 r[16];
  for (int64_t iy = iy0; iy < iy1; ++iy)
    for (int64_t ix = ix0; ix < ix1; ix += 16) {
      const int64_t n = std::min<int64_t>(16, ix1 - ix);
      const __mmask16 m = T::mask(n);
      for (int c = 0; c < 16; ++c)
        r[c] = c < b.count ? _mm512_maskz_loadu_ps(m, b.x + c * plane + iy * b.W + ix) : zero;
      transpose16(r);
      float* dst = in + ((iy + b.ph) * wp + ix + b.pw) * 16;
      for (int64_t p = 0; p < n; ++p) _mm512_store_ps(dst + p * 16, r[p]);
    }
  // 2. Every output pixel: weights and bias as vectors of the block's channels.
  const int taps = b.kh * b.kw;
  __m512 wv[kDepthwiseBlockMaxTaps];
  for (int t = 0; t < taps; ++t) {
    alignas(64) float col[16] = {};
    for (int c = 0; c < b.count; ++c) col[c] = b.weights[c * taps + t];
    wv[t] = _mm512_load_ps(col);
  }
  const __m512 bias = b.bias != nullptr ? _mm512_maskz_loadu_ps(T::mask(b.count), b.bias) : zero;
  for (int64_t oh = 0; oh < b.OH; ++oh) {
    int64_t ow = 0;
    for (; ow + 4 <= b.OW; ow += 4) block_pixels<4>(b, in, wp, wv, bias, oh, ow, obuf);
    for (; ow < b.OW; ++ow) block_pixels<1>(b, in, wp, wv, bias, oh, ow, obuf);
  }
  // 3. Back to planes, with the residual (read just before the same elements are
  // written: it may be `out`) and Relu / Clip.
  for (int64_t p0 = 0; p0 < oplane; p0 += 16) {
    const int64_t n = std::min<int64_t>(16, oplane - p0);
    const __mmask16 m = T::mask(n);
    for (int p = 0; p < 16; ++p) r[p] = p < n ? _mm512_load_ps(obuf + (p0 + p) * 16) : zero;
    transpose16(r);
    for (int c = 0; c < b.count; ++c) {
      __m512 v = r[c];
      if (b.residual != nullptr)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, b.residual + c * oplane + p0));
      if (b.clamp == DepthwiseClamp::kRelu)
        v = T::relu(v);
      else if (b.clamp == DepthwiseClamp::kClip)
        v = T::clip(v, _mm512_set1_ps(b.lo), _mm512_set1_ps(b.hi));
      _mm512_mask_storeu_ps(b.out + c * oplane + p0, m, v);
    }
  }
}

}  // namespace infer::cpu::simd
