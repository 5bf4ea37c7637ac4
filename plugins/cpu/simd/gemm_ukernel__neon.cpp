// AArch64 NEON GEMM kernels: an 8 x 12 register tile (24 q accumulators, three q of B and
// two q holding the 8 values of A, used lane by lane: 29 of the 32 registers), and the
// GEMV loops.
#include <arm_neon.h>

#include "gemm_kernels.hpp"
#include "gemm_tile.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kMr = 8;
constexpr int kNr = 12;

void tile(const TileJob& t) {
  alignas(16) float acc[kMr * kNr];
  float32x4_t c[kMr][3];
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r) c[r][0] = c[r][1] = c[r][2] = vdupq_n_f32(0.0f);
  const float* __restrict a = t.a;
  const float* __restrict b = t.b;
  for (int64_t k = 0; k < t.kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
#define INFER_GEMM_ROW(r, av, lane)                   \
  c[r][0] = vfmaq_laneq_f32(c[r][0], b0, av, lane); \
  c[r][1] = vfmaq_laneq_f32(c[r][1], b1, av, lane); \
  c[r][2] = vfmaq_laneq_f32(c[r][2], b2, av, lane);
    INFER_GEMM_ROW(0, a0, 0)
    INFER_GEMM_ROW(1, a0, 1)
    INFER_GEMM_ROW(2, a0, 2)
    INFER_GEMM_ROW(3, a0, 3)
    INFER_GEMM_ROW(4, a1, 0)
    INFER_GEMM_ROW(5, a1, 1)
    INFER_GEMM_ROW(6, a1, 2)
    INFER_GEMM_ROW(7, a1, 3)
#undef INFER_GEMM_ROW
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r) {
    vst1q_f32(acc + r * kNr, c[r][0]);
    vst1q_f32(acc + r * kNr + 4, c[r][1]);
    vst1q_f32(acc + r * kNr + 8, c[r][2]);
  }
  finish_tile(acc, kNr, t);
}

void gemv_rows(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw, int64_t n,
               float* y) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    const float* p = w + j;
    for (int64_t k = 0; k < K; ++k, p += ldw) {
      const float xv = x[k * incx];
      s0 = vfmaq_n_f32(s0, vld1q_f32(p), xv);
      s1 = vfmaq_n_f32(s1, vld1q_f32(p + 4), xv);
      s2 = vfmaq_n_f32(s2, vld1q_f32(p + 8), xv);
      s3 = vfmaq_n_f32(s3, vld1q_f32(p + 12), xv);
    }
    vst1q_f32(y + j, s0);
    vst1q_f32(y + j + 4, s1);
    vst1q_f32(y + j + 8, s2);
    vst1q_f32(y + j + 12, s3);
  }
  for (; j + 4 <= n; j += 4) {
    float32x4_t s0 = vdupq_n_f32(0.0f);
    const float* p = w + j;
    for (int64_t k = 0; k < K; ++k, p += ldw) s0 = vfmaq_n_f32(s0, vld1q_f32(p), x[k * incx]);
    vst1q_f32(y + j, s0);
  }
  for (; j < n; ++j) {
    float s = 0.0f;
    for (int64_t k = 0; k < K; ++k) s += x[k * incx] * w[k * ldw + j];
    y[j] = s;
  }
}

void gemv_dots(int64_t K, const float* w, int64_t ldw, int64_t n, const float* x, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
      s0 = vfmaq_f32(s0, vld1q_f32(row + k), vld1q_f32(x + k));
      s1 = vfmaq_f32(s1, vld1q_f32(row + k + 4), vld1q_f32(x + k + 4));
      s2 = vfmaq_f32(s2, vld1q_f32(row + k + 8), vld1q_f32(x + k + 8));
      s3 = vfmaq_f32(s3, vld1q_f32(row + k + 12), vld1q_f32(x + k + 12));
    }
    for (; k + 4 <= K; k += 4) s0 = vfmaq_f32(s0, vld1q_f32(row + k), vld1q_f32(x + k));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; k < K; ++k) s += row[k] * x[k];
    y[j] = s;
  }
}

}  // namespace

const Kernels& kernels_neon() {
  static const Kernels k{tile, gemv_rows, gemv_dots, pack_b_rows_fixed<kNr>, nullptr, nullptr};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
