// A 16 x 16 float transpose in AVX-512 registers, for the files compiled with AVX-512
// flags (the GEMM packers, the channel-blocked depthwise kernel). Internal linkage: only
// those files include it.
#pragma once

#include <immintrin.h>

namespace infer::cpu::simd {
namespace {

// Transposes the 16 x 16 block r in place (r[j] becomes column j): unpack pairs of rows,
// then 64-bit shuffles, then two rounds of 128-bit lane shuffles; 64 shuffles in all.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4q + j] holds column 4g + j of rows 4q..4q+3 in 128-bit lane g.
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    u[4 * q + 0] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
    u[4 * q + 1] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0xEE);
    u[4 * q + 2] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
    u[4 * q + 3] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 x0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 x1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 y0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 y1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    r[j] = _mm512_shuffle_f32x4(x0, y0, 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(x0, y0, 0xDD);
    r[j + 4] = _mm512_shuffle_f32x4(x1, y1, 0x88);
    r[j + 12] = _mm512_shuffle_f32x4(x1, y1, 0xDD);
  }
}

}  // namespace
}  // namespace infer::cpu::simd
