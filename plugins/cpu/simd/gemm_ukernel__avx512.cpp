// AVX-512 GEMM kernels: a 14 x 32 register tile (28 zmm accumulators, two zmm of B and
// one broadcast of A: 31 of the 32 registers), and the GEMV loops. The tile does 28 FMAs
// per K step against two B loads and 14 broadcasts: far from the load ports' limit, and
// its 28 independent chains cover the 4-cycle FMA latency even on a core with two full
// 512-bit FMA pipes (8 chains needed; Zen 4 splits a zmm FMA into two halves instead).
#include <immintrin.h>

#include "gemm_kernels.hpp"
#include "gemm_tile.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kMr = 14;
constexpr int kNr = 32;

void tile(const TileJob& t) {
  alignas(64) float acc[kMr * kNr];
  __m512 c0[kMr], c1[kMr];
#pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  const float* __restrict a = t.a;
  const float* __restrict b = t.b;
  for (int64_t k = 0; k < t.kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
    }
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) {
    _mm512_store_ps(acc + r * kNr, c0[r]);
    _mm512_store_ps(acc + r * kNr + 16, c1[r]);
  }
  finish_tile(acc, kNr, t);
}

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

void gemv_rows(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw, int64_t n,
               float* y) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    for (int64_t k = 0; k < K; ++k, p += ldw) {
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
  static const Kernels k{tile, gemv_rows, gemv_dots};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
