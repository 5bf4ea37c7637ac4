// AVX-512 GEMM kernels, float32: the 14 x 32 register tile of gemm_tile_avx512.hpp over
// FMAs; the A and B panel packers (with in-register 16 x 16 transposes for row-major A and
// transposed B); the GEMV loops, which prefetch the operand they stream into L1 (a
// classifier's weights, often from memory).
#include <immintrin.h>

#include <cstdint>

#include "gemm_kernels.hpp"
#include "gemm_tile_avx512.hpp"
#include "transpose16_avx512.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

// The GEMV streams W once (a classifier's weights, from memory): each K step prefetches
// the W row this many steps ahead (past the end near the last steps: a prefetch never
// faults).
constexpr int64_t kGemvPrefetchSteps = 16;

// The float32 multiply of the register tile (gemm_tile_avx512.hpp).
struct F32Ops {
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 load_masked(__mmask16 m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static __m512 bcast(const float* p) { return _mm512_set1_ps(*p); }
  static __m512 madd(__m512 acc, __m512 v, __m512 s) { return _mm512_fmadd_ps(s, v, acc); }
};

// pack_b_rows for 32-wide panels: two (masked) vector loads and two stores per K step.
void pack_b_rows(const float* src, int64_t rs, int64_t kc, int cols, float* dst) {
  if (cols == kNr) {
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2, src += 2 * rs, dst += 2 * kNr) {
      const __m512 a0 = _mm512_loadu_ps(src), a1 = _mm512_loadu_ps(src + 16);
      const __m512 b0 = _mm512_loadu_ps(src + rs), b1 = _mm512_loadu_ps(src + rs + 16);
      _mm512_storeu_ps(dst, a0);
      _mm512_storeu_ps(dst + 16, a1);
      _mm512_storeu_ps(dst + kNr, b0);
      _mm512_storeu_ps(dst + kNr + 16, b1);
    }
    if (k < kc) {
      _mm512_storeu_ps(dst, _mm512_loadu_ps(src));
      _mm512_storeu_ps(dst + 16, _mm512_loadu_ps(src + 16));
    }
    return;
  }
  const __mmask16 m0 = tail_mask(cols), m1 = cols > 16 ? tail_mask(cols - 16) : 0;
  for (int64_t k = 0; k < kc; ++k, src += rs, dst += kNr) {
    _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m0, src));
    _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
  }
}

// pack_a_rows for 14-row panels: 16 K steps at a time, the panel's rows (zeros past
// `rows`, and for the two rows of the 16 x 16 block past the panel) are loaded, transposed
// in registers and stored as 16 runs of 14 floats, instead of one scalar store per element.
void pack_a_rows(const float* src, int64_t rs, int64_t kc, int rows, float* dst) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 r[16];
  for (int64_t k = 0; k < kc; k += 16, dst += 16 * kMr) {
    const int64_t left = kc - k;
    const __mmask16 m = tail_mask(left);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_maskz_loadu_ps(m, src + i * rs + k) : zero;
    transpose16(r);
    constexpr __mmask16 kPanel = static_cast<__mmask16>((1u << kMr) - 1u);
    if (left >= 16) {
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) _mm512_mask_storeu_ps(dst + j * kMr, kPanel, r[j]);
    } else {
      for (int j = 0; j < left; ++j) _mm512_mask_storeu_ps(dst + j * kMr, kPanel, r[j]);
    }
  }
}

// pack_b_cols for 32-wide panels: per half panel of 16 columns and 16 K steps, the columns
// (contiguous along K; zeros past `cols`) are loaded, transposed in registers and stored
// as 16 rows of the panel.
void pack_b_cols(const float* src, int64_t cs, int64_t kc, int cols, float* dst) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 r[16];
  for (int h = 0; h < 2; ++h) {
    const int c0 = 16 * h;
    float* d = dst + c0;
    for (int64_t k = 0; k < kc; k += 16, d += 16 * kNr) {
      const int64_t left = kc - k;
      const __mmask16 m = tail_mask(left);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = c0 + i < cols ? _mm512_maskz_loadu_ps(m, src + (c0 + i) * cs + k) : zero;
      transpose16(r);
      if (left >= 16) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) _mm512_storeu_ps(d + j * kNr, r[j]);
      } else {
        for (int j = 0; j < left; ++j) _mm512_storeu_ps(d + j * kNr, r[j]);
      }
    }
  }
}

void gemv_rows(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw, int64_t n,
               float* y) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    for (int64_t k = 0; k < K; ++k, p += ldw) {
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) prefetch(p, kGemvPrefetchSteps * ldw + 16 * l);
      const __m512 xv = _mm512_set1_ps(x[k * incx]);
      s0 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p), s0);
      s1 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p + 16), s1);
      s2 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p + 32), s2);
      s3 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(p + 48), s3);
    }
    _mm512_storeu_ps(y + j, s0);
    _mm512_storeu_ps(y + j + 16, s1);
    _mm512_storeu_ps(y + j + 32, s2);
    _mm512_storeu_ps(y + j + 48, s3);
  }
  // Up to 32 columns at a time, two K steps per iteration so that four chains run.
  for (; j < n; j += 32) {
    const __mmask16 m0 = tail_mask(n - j), m1 = n - j > 16 ? tail_mask(n - j - 16) : 0;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, p += 2 * ldw) {
      prefetch(p, kGemvPrefetchSteps * ldw);
      prefetch(p, kGemvPrefetchSteps * ldw + 16);
      prefetch(p, (kGemvPrefetchSteps + 1) * ldw);
      prefetch(p, (kGemvPrefetchSteps + 1) * ldw + 16);
      const __m512 x0 = _mm512_set1_ps(x[k * incx]);
      const __m512 x1 = _mm512_set1_ps(x[(k + 1) * incx]);
      s0 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m0, p), s0);
      s1 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m1, p + 16), s1);
      s2 = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(m0, p + ldw), s2);
      s3 = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(m1, p + ldw + 16), s3);
    }
    if (k < K) {
      const __m512 x0 = _mm512_set1_ps(x[k * incx]);
      s0 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m0, p), s0);
      s1 = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(m1, p + 16), s1);
    }
    _mm512_mask_storeu_ps(y + j, m0, _mm512_add_ps(s0, s2));
    _mm512_mask_storeu_ps(y + j + 16, m1, _mm512_add_ps(s1, s3));
  }
}

// GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized, so reduce by hand.
inline float hsum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

void gemv_dots(int64_t K, const float* w, int64_t ldw, int64_t n, const float* x, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 64 <= K; k += 64) {
      s0 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k), _mm512_loadu_ps(x + k), s0);
      s1 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k + 16), _mm512_loadu_ps(x + k + 16), s1);
      s2 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k + 32), _mm512_loadu_ps(x + k + 32), s2);
      s3 = _mm512_fmadd_ps(_mm512_loadu_ps(row + k + 48), _mm512_loadu_ps(x + k + 48), s3);
    }
    for (; k < K; k += 16) {
      const __mmask16 m = tail_mask(K - k);
      s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row + k), _mm512_maskz_loadu_ps(m, x + k), s0);
    }
    y[j] = hsum(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  }
}

}  // namespace

const Kernels& kernels_avx512() {
  static const Kernels k{tile<F32Ops>, gemv_rows,   gemv_dots,
                         pack_b_rows,  pack_a_rows, pack_b_cols};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
