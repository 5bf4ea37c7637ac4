// Internal to the qdepthwise*.cpp files: the plane loop of qdepthwise.hpp, written once
// and compiled in each ISA's file with its flags (internal linkage, as in gemm_tile.hpp).
//
// The input plane is split into sh x sw phase planes, phase (r, c) holding the padded
// input's rows r, r + sh, ... and columns c, c + sw, ... as floats x - x_zero (0 in the
// padding). Tap (kh, kw) of output (oh, ow) is then element (oh + kh * dh / sh) * Wq +
// ow + kw * dw / sw of phase ((kh * dh) % sh, (kw * dw) % sw): a fixed offset from
// p = oh * Wq + ow. So the taps are long vectorized runs over p in [0, OH * Wq) (the
// columns ow >= OW are computed and dropped), whatever the image width, in chunks of
// PhaseLayout::kChunk outputs that stay in registers or L1 while every tap is added.
//
// The sums are exact in float: every term is an integer of magnitude at most 255 * 255,
// and at most kGroup of them (kGroup * 255 * 255 < 2^24) are added in float before the
// integer sum takes over, so the result is the int32 definition's, bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "qdepthwise.hpp"

namespace infer::cpu::simd::qdepthwise_detail {
namespace {

constexpr int64_t kGroup = 256;

// GCC's generic vectors (as in pool_impl.hpp): 16 lanes, split into the ISA's registers.
typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));
typedef uint32_t U16 __attribute__((vector_size(64)));

// acc[i] (+)= the exact sum over the taps of src[t][i] * wf[t], 64 outputs at a time held
// in four vectors while every tap is added (written with vector types: the plain loop
// came out scalar).
inline void accumulate(const float* const* src, const float* wf, int64_t taps, int64_t padded,
                       bool first, int32_t* acc) {
  static_assert(PhaseLayout::kChunk == 64, "four vectors of 16 per chunk");
  for (int64_t i0 = 0; i0 < padded; i0 += 64) {
    F16 a[4] = {};
    for (int64_t t = 0; t < taps; ++t) {
      const float* p = src[t] + i0;
      const F16 w = F16{} + wf[t];
      for (int k = 0; k < 4; ++k) {  // (memcpy: unaligned loads, no function returning a vector)
        F16 x;
        std::memcpy(&x, p + 16 * k, sizeof x);
        a[k] += x * w;
      }
    }
    for (int k = 0; k < 4; ++k) {
      I16 v = __builtin_convertvector(a[k], I16);
      int32_t* out = acc + i0 + 16 * k;
      if (!first) {  // wrapping int32 addition, like the definition's accumulators
        I16 old;
        std::memcpy(&old, out, sizeof old);
        v = reinterpret_cast<I16>(reinterpret_cast<U16>(old) + reinterpret_cast<U16>(v));
      }
      std::memcpy(out, &v, sizeof v);
    }
  }
}

// dst[j] = float(src[S * j] - x_zero) for j < n (S 0: `stride` at run time); stride 1
// with the ISA's widening loads where the file is built for AVX2 or AVX-512 (the plain
// loop came out scalar).
template <int S>
void widen(const uint8_t* src, int64_t n, int64_t stride, int32_t x_zero, float* dst) {
  const int64_t step = S > 0 ? S : stride;
  int64_t j = 0;
#if defined(__AVX512F__)
  if (S == 1) {  // (GCC turns a generic byte-to-int32 vector conversion into inserts)
    const __m512i zero = _mm512_set1_epi32(x_zero);
    for (; j + 16 <= n; j += 16) {
      const __m512i v =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j)));
      _mm512_storeu_ps(dst + j, _mm512_cvtepi32_ps(_mm512_sub_epi32(v, zero)));
    }
  }
#elif defined(__AVX2__)
  if (S == 1) {
    const __m256i zero = _mm256_set1_epi32(x_zero);
    for (; j + 8 <= n; j += 8) {
      const __m256i v =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + j)));
      _mm256_storeu_ps(dst + j, _mm256_cvtepi32_ps(_mm256_sub_epi32(v, zero)));
    }
  }
#endif
  for (; j < n; ++j) dst[j] = static_cast<float>(static_cast<int32_t>(src[step * j]) - x_zero);
}

// even[j] = row[2 j], odd[j] = row[2 j + 1] for j < n (row holds 2 n + 32 floats).
inline void split_even_odd(const float* row, int64_t n, float* even, float* odd) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    F16 a, b;
    std::memcpy(&a, row + 2 * j, sizeof a);
    std::memcpy(&b, row + 2 * j + 16, sizeof b);
    const F16 e =
        __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const F16 o =
        __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    std::memcpy(even + j, &e, sizeof e);
    std::memcpy(odd + j, &o, sizeof o);
  }
  for (; j < n; ++j) {
    even[j] = row[2 * j];
    odd[j] = row[2 * j + 1];
  }
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
  float* phases = reinterpret_cast<float*>(scratch + l.padded);
  uint8_t* narrow = reinterpret_cast<uint8_t*>(phases + l.phase_floats * s.sh * s.sw);
  // The phase planes, padding and slack (zeros) included.
  std::fill(phases, phases + l.phase_floats * s.sh * s.sw, 0.0f);
  if (s.sw == 2) {
    // Each needed input row widened once into `row` (the padded row, zeros around), then
    // split into its even and odd columns: the two column phases.
    float* row = reinterpret_cast<float*>(narrow);  // 2 Wq + 32 floats, free until the end
    const int64_t row_len = 2 * l.Wq;
    for (int64_t r = 0; r < s.sh; ++r)
      for (int64_t i = 0; i < l.Hq; ++i) {
        const int64_t ih = r + s.sh * i - s.pad_top;
        if (ih < 0 || ih >= s.H) continue;
        std::fill(row, row + row_len + 32, 0.0f);
        const int64_t lo = std::min(s.pad_left, row_len), hi = std::min(s.pad_left + s.W, row_len);
        if (hi > lo) widen<1>(x + ih * s.W + (lo - s.pad_left), hi - lo, 1, x_zero, row + lo);
        split_even_odd(row, l.Wq, phases + (r * 2) * l.phase_floats + i * l.Wq,
                       phases + (r * 2 + 1) * l.phase_floats + i * l.Wq);
      }
  } else {
    for (int64_t r = 0; r < s.sh; ++r)
      for (int64_t c = 0; c < s.sw; ++c) {
        float* ph = phases + (r * s.sw + c) * l.phase_floats;
        const PhaseColumns pc = phase_columns(c, s.pad_left, s.sw, s.W, l.Wq);
        const int64_t first = pc.first, j0 = pc.j0, j1 = pc.j1;
        if (j1 <= j0) continue;
        for (int64_t i = 0; i < l.Hq; ++i) {
          const int64_t ih = r + s.sh * i - s.pad_top;
          if (ih < 0 || ih >= s.H) continue;
          const uint8_t* from = x + ih * s.W + first + s.sw * j0;
          float* to = ph + i * l.Wq + j0;
          if (s.sw == 1)
            widen<1>(from, j1 - j0, 1, x_zero, to);
          else
            widen<0>(from, j1 - j0, s.sw, x_zero, to);
        }
      }
  }
  // The taps, kGroup at a time.
  const int64_t taps = s.KH * s.KW;
  const float* src[kGroup];
  float wf[kGroup];
  for (int64_t t0 = 0; t0 < taps; t0 += kGroup) {
    int64_t n = 0;
    for (int64_t t = t0; t < std::min(taps, t0 + kGroup); ++t) {
      if (w[t] == 0) continue;
      const int64_t rh = t / s.KW * s.dh, rw = t % s.KW * s.dw;
      src[n] = phases + ((rh % s.sh) * s.sw + rw % s.sw) * l.phase_floats + (rh / s.sh) * l.Wq +
               rw / s.sw;
      wf[n] = static_cast<float>(w[t]);
      ++n;
    }
    accumulate(src, wf, n, l.padded, t0 == 0, acc);
  }
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
