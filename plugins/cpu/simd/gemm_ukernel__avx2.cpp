// AVX2 + FMA GEMM kernels: a 6 x 16 register tile (12 ymm accumulators, two ymm of B,
// one broadcast of A: 15 of the 16 registers), and the GEMV loops. Two FMA pipes with a
// 4-cycle latency need 8 independent chains; the tile has 12.
#include <immintrin.h>

#include "gemm_kernels.hpp"
#include "gemm_tile.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

void tile(const TileJob& t) {
  alignas(32) float acc[kMr * kNr];
  __m256 c0[kMr], c1[kMr];
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r) c0[r] = c1[r] = _mm256_setzero_ps();
  const float* __restrict a = t.a;
  const float* __restrict b = t.b;
  for (int64_t k = 0; k < t.kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kMr; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r);
      c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
    }
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r) {
    _mm256_store_ps(acc + r * kNr, c0[r]);
    _mm256_store_ps(acc + r * kNr + 8, c1[r]);
  }
  finish_tile(acc, kNr, t);
}

void gemv_rows(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw, int64_t n,
               float* y) {
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    for (int64_t k = 0; k < K; ++k, p += ldw) {
      const __m256 xv = _mm256_set1_ps(x[k * incx]);
      s0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(p), s0);
      s1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(p + 8), s1);
      s2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(p + 16), s2);
      s3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(p + 24), s3);
    }
    _mm256_storeu_ps(y + j, s0);
    _mm256_storeu_ps(y + j + 8, s1);
    _mm256_storeu_ps(y + j + 16, s2);
    _mm256_storeu_ps(y + j + 24, s3);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    const float* p = w + j;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, p += 2 * ldw) {
      s0 = _mm256_fmadd_ps(_mm256_set1_ps(x[k * incx]), _mm256_loadu_ps(p), s0);
      s1 = _mm256_fmadd_ps(_mm256_set1_ps(x[(k + 1) * incx]), _mm256_loadu_ps(p + ldw), s1);
    }
    if (k < K) s0 = _mm256_fmadd_ps(_mm256_set1_ps(x[k * incx]), _mm256_loadu_ps(p), s0);
    _mm256_storeu_ps(y + j, _mm256_add_ps(s0, s1));
  }
  for (; j < n; ++j) {
    float s = 0.0f;
    for (int64_t k = 0; k < K; ++k) s += x[k * incx] * w[k * ldw + j];
    y[j] = s;
  }
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

void gemv_dots(int64_t K, const float* w, int64_t ldw, int64_t n, const float* x, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 32 <= K; k += 32) {
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(row + k), _mm256_loadu_ps(x + k), s0);
      s1 = _mm256_fmadd_ps(_mm256_loadu_ps(row + k + 8), _mm256_loadu_ps(x + k + 8), s1);
      s2 = _mm256_fmadd_ps(_mm256_loadu_ps(row + k + 16), _mm256_loadu_ps(x + k + 16), s2);
      s3 = _mm256_fmadd_ps(_mm256_loadu_ps(row + k + 24), _mm256_loadu_ps(x + k + 24), s3);
    }
    for (; k + 8 <= K; k += 8)
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(row + k), _mm256_loadu_ps(x + k), s0);
    float s = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; k < K; ++k) s += row[k] * x[k];
    y[j] = s;
  }
}

}  // namespace

const Kernels& kernels_avx2() {
  static const Kernels k{tile, gemv_rows, gemv_dots, pack_b_rows_fixed<kNr>, nullptr, nullptr};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
