// AVX-512 float16 <-> float32 (half_convert.hpp): 16 lanes, masked tails, NaN lanes
// rewritten to the scalar conversions' bits.
#include <immintrin.h>

#include "half_convert.hpp"

namespace infer::cpu::simd {

namespace {

inline __mmask16 tail_mask(size_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
}

}  // namespace

void half_to_float_avx512(const uint16_t* x, float* y, size_t n) {
  const __m256i magnitude = _mm256_set1_epi16(0x7fff), inf = _mm256_set1_epi16(0x7c00);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m256i h = _mm256_maskz_loadu_epi16(m, x + i);
    __m512 f = _mm512_cvtph_ps(h);
    // NaN halves: sign, all-ones exponent and the payload shifted into place, unquieted.
    const __mmask16 nan = _mm256_cmpgt_epi16_mask(_mm256_and_si256(h, magnitude), inf);
    if (nan != 0) {
      const __m512i w = _mm512_cvtepu16_epi32(h);
      const __m512i bits = _mm512_or_si512(
          _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16),
                          _mm512_set1_epi32(0x7f800000)),
          _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3ff)), 13));
      f = _mm512_mask_blend_ps(nan, f, _mm512_castsi512_ps(bits));
    }
    _mm512_mask_storeu_ps(y + i, m, f);
  }
}

void float_to_half_avx512(const float* x, uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 f = _mm512_maskz_loadu_ps(m, x + i);
    __m256i h = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    if (nan != 0) {
      // sign | 0x7e00, the canonical quiet NaN the scalar conversion writes.
      const __m512i sign =
          _mm512_srli_epi32(_mm512_and_si512(_mm512_castps_si512(f),
                                             _mm512_set1_epi32(static_cast<int>(0x80000000u))),
                            16);
      const __m256i canon = _mm256_or_si256(_mm512_cvtepi32_epi16(sign), _mm256_set1_epi16(0x7e00));
      h = _mm256_mask_blend_epi16(nan, h, canon);
    }
    _mm256_mask_storeu_epi16(y + i, m, h);
  }
}

}  // namespace infer::cpu::simd
