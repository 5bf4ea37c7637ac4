// AVX2 + F16C float16 <-> float32 (half_convert.hpp): 8 lanes; the tail goes through an
// 8-lane scratch vector; NaN lanes are rewritten to the scalar conversions' bits.
#include <immintrin.h>

#include <cstring>

#include "half_convert.hpp"

namespace infer::cpu::simd {

namespace {

void halfs_to_floats8(const uint16_t* x, float* y) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
  _mm256_storeu_ps(y, _mm256_cvtph_ps(h));
  // NaN halves keep their payload unquieted (the scalar rule), rare enough for a loop.
  const __m128i nan =
      _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
  if (_mm_movemask_epi8(nan) != 0)
    for (int j = 0; j < 8; ++j)
      if ((x[j] & 0x7fff) > 0x7c00) {
        const uint32_t bits = (static_cast<uint32_t>(x[j] & 0x8000) << 16) | 0x7f800000u |
                              (static_cast<uint32_t>(x[j] & 0x3ff) << 13);
        std::memcpy(y + j, &bits, sizeof bits);
      }
}

void floats_to_halfs8(const float* x, uint16_t* y) {
  const __m256 f = _mm256_loadu_ps(x);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y),
                   _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  const int nan = _mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
  if (nan != 0)
    for (int j = 0; j < 8; ++j)
      if (nan & (1 << j)) {
        uint32_t bits;
        std::memcpy(&bits, x + j, sizeof bits);
        y[j] = static_cast<uint16_t>(((bits >> 16) & 0x8000) | 0x7e00);
      }
}

}  // namespace

void half_to_float_avx2(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) halfs_to_floats8(x + i, y + i);
  if (i < n) {
    uint16_t in[8] = {};
    float out[8];
    std::memcpy(in, x + i, (n - i) * sizeof(uint16_t));
    halfs_to_floats8(in, out);
    std::memcpy(y + i, out, (n - i) * sizeof(float));
  }
}

void float_to_half_avx2(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) floats_to_halfs8(x + i, y + i);
  if (i < n) {
    float in[8] = {};
    uint16_t out[8];
    std::memcpy(in, x + i, (n - i) * sizeof(float));
    floats_to_halfs8(in, out);
    std::memcpy(y + i, out, (n - i) * sizeof(uint16_t));
  }
}

}  // namespace infer::cpu::simd
