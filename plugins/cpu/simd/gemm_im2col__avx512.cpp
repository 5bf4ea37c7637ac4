// The AVX-512 implicit-im2col packer: per 32-column panel, the input row and column of
// every output position are kept in vectors; each K step (channel, kernel offset) is then
// two bounds checks and two masked gathers (padding lanes are masked off and read as 0).
// A panel that lies in one output row with column stride 1 or 2 reads its K steps with
// (masked) contiguous loads instead: gathers cost several times more per element.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "gemm_im2col.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

// The panel's 32 output positions share input row ih (before the kernel offset) and read
// input columns iw + j * sw (j < 32) of it.
void pack_one_row(const Im2colGeom& g, int64_t k0, int64_t kc, int32_t ih, int32_t iw, float* d) {
  constexpr int kNr = 32;
  const __m512i vW = _mm512_set1_epi32(static_cast<int32_t>(g.W));
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i v16 = _mm512_set1_epi32(16);
  const __m512 zero = _mm512_setzero_ps();
  const int64_t plane = g.H * g.W;
  Im2colTap tap(g, k0);
  for (int64_t k = 0; k < kc; ++k, d += kNr) {
    const int64_t y = ih + tap.kh * g.dh;
    if (y < 0 || y >= g.H) {
      _mm512_storeu_ps(d, zero);
      _mm512_storeu_ps(d + 16, zero);
    } else {
      // Input columns x0 + p for p in [0, 32 * sw): masked to the row, so the padding
      // reads as 0 and no load touches memory outside the row.
      const int64_t x0 = iw + tap.kw * g.dw;
      const float* row = g.x + tap.c * plane + y * g.W;
      const __m512i p0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(x0)), iota);
      const __mmask16 m0 = _mm512_cmplt_epu32_mask(p0, vW);
      const __m512i p1 = _mm512_add_epi32(p0, v16);
      const __mmask16 m1 = _mm512_cmplt_epu32_mask(p1, vW);
      // Lanes whose column is outside the row are masked off and read nothing, so the
      // address may point before the row.
      const float* src = reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(row) +
                                                        static_cast<uintptr_t>(x0 * 4));
      if (g.sw == 1) {
        _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(m0, src));
        _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(m1, src + 16));
      } else {
        const __m512i p2 = _mm512_add_epi32(p1, v16), p3 = _mm512_add_epi32(p2, v16);
        const __mmask16 m2 = _mm512_cmplt_epu32_mask(p2, vW), m3 = _mm512_cmplt_epu32_mask(p3, vW);
        const __m512 a0 = _mm512_maskz_loadu_ps(m0, src), a1 = _mm512_maskz_loadu_ps(m1, src + 16);
        const __m512 a2 = _mm512_maskz_loadu_ps(m2, src + 32), a3 = _mm512_maskz_loadu_ps(m3, src + 48);
        _mm512_storeu_ps(d, _mm512_permutex2var_ps(a0, even, a1));
        _mm512_storeu_ps(d + 16, _mm512_permutex2var_ps(a2, even, a3));
      }
    }
    tap.next(g);
  }
}

}  // namespace

void im2col_pack_avx512(const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                        float* dst) {
  constexpr int kNr = 32;
  // Lanes past the matrix edge start far outside the image (every offset fails the
  // bounds check); in 32-bit, with room for the kernel offsets added to it.
  constexpr int32_t kOutside = -(1 << 30);
  const __m512i vH = _mm512_set1_epi32(static_cast<int32_t>(g.H));
  const __m512i vW = _mm512_set1_epi32(static_cast<int32_t>(g.W));
  const int64_t plane = g.H * g.W;
  for (int64_t p0 = 0; p0 < cols; p0 += kNr, dst += kc * kNr) {
    const int cc = static_cast<int>(std::min<int64_t>(kNr, cols - p0));
    alignas(64) int32_t ih0[kNr], iw0[kNr];
    for (int j = 0; j < kNr; ++j) {
      if (j < cc) {
        const int64_t n = n0 + p0 + j;
        ih0[j] = static_cast<int32_t>(n / g.OW * g.sh - g.ph);
        iw0[j] = static_cast<int32_t>(n % g.OW * g.sw - g.pw);
      } else {
        ih0[j] = iw0[j] = kOutside;
      }
    }
    if (cc == kNr && ih0[0] == ih0[kNr - 1] && (g.sw == 1 || g.sw == 2)) {
      pack_one_row(g, k0, kc, ih0[0], iw0[0], dst);
      continue;
    }
    const __m512i ih_a = _mm512_load_si512(ih0), ih_b = _mm512_load_si512(ih0 + 16);
    const __m512i iw_a = _mm512_load_si512(iw0), iw_b = _mm512_load_si512(iw0 + 16);
    // Offset of each lane's (ih0, iw0) in the plane; the kernel offset adds dy * W + dx.
    const __m512i base_a = _mm512_add_epi32(_mm512_mullo_epi32(ih_a, vW), iw_a);
    const __m512i base_b = _mm512_add_epi32(_mm512_mullo_epi32(ih_b, vW), iw_b);
    Im2colTap tap(g, k0);
    float* d = dst;
    for (int64_t k = 0; k < kc; ++k, d += kNr) {
      const float* xc = g.x + tap.c * plane;
      const int32_t dy = static_cast<int32_t>(tap.kh * g.dh), dx = static_cast<int32_t>(tap.kw * g.dw);
      const __m512i vdy = _mm512_set1_epi32(dy), vdx = _mm512_set1_epi32(dx);
      const __mmask16 ma = _mm512_cmplt_epu32_mask(_mm512_add_epi32(ih_a, vdy), vH) &
                           _mm512_cmplt_epu32_mask(_mm512_add_epi32(iw_a, vdx), vW);
      const __mmask16 mb = _mm512_cmplt_epu32_mask(_mm512_add_epi32(ih_b, vdy), vH) &
                           _mm512_cmplt_epu32_mask(_mm512_add_epi32(iw_b, vdx), vW);
      const __m512i off = _mm512_set1_epi32(dy * static_cast<int32_t>(g.W) + dx);
      const __m512 zero = _mm512_setzero_ps();
      _mm512_storeu_ps(d, _mm512_mask_i32gather_ps(zero, ma, _mm512_add_epi32(base_a, off), xc, 4));
      _mm512_storeu_ps(d + 16, _mm512_mask_i32gather_ps(zero, mb, _mm512_add_epi32(base_b, off), xc, 4));
      tap.next(g);
    }
  }
}

}  // namespace infer::cpu::simd::gemm_detail
