// The per-ISA inner loops of pool2d (pool.cpp): the interior columns of one output row,
// those whose kw taps all lie inside the input row, so no tap needs a bounds test.
#pragma once

#include <cstdint>

namespace infer::cpu::simd {

struct PoolRow {
  // The input rows this output row reads that lie inside the plane, in kernel-row
  // order (at least one), and the column the first interior output's first tap reads.
  const float* const* rows = nullptr;
  int64_t nrows = 0;
  int64_t start = 0;
  int64_t kw = 1, sw = 1, dw = 1;
  // Floats readable from rows[i] + start (to the end of the input row): vector loads
  // past the last needed element must stay below this.
  int64_t avail = 0;
  float divisor = 1;  // average: the window's count
  float* out = nullptr;
  int64_t count = 0;  // output columns
};

// Tap (i, k) of output column j: rows[i][start + j * sw + k * dw].
inline float pool_tap(const PoolRow& r, int64_t i, int64_t k, int64_t j) {
  return r.rows[i][r.start + j * r.sw + k * r.dw];
}

// The scalar reference from column j0 on. Max: seeded with tap (0, 0), replaced only by
// strictly greater values. Average: the float sum in tap order, divided by `divisor`.
// The vector variants apply these same operations lane by lane.
inline void pool_max_row_ref(const PoolRow& r, int64_t j0) {
  for (int64_t j = j0; j < r.count; ++j) {
    float best = pool_tap(r, 0, 0, j);
    for (int64_t i = 0; i < r.nrows; ++i)
      for (int64_t k = (i == 0 ? 1 : 0); k < r.kw; ++k) {
        const float v = pool_tap(r, i, k, j);
        best = v > best ? v : best;
      }
    r.out[j] = best;
  }
}
inline void pool_avg_row_ref(const PoolRow& r, int64_t j0) {
  for (int64_t j = j0; j < r.count; ++j) {
    float sum = pool_tap(r, 0, 0, j);
    for (int64_t i = 0; i < r.nrows; ++i)
      for (int64_t k = (i == 0 ? 1 : 0); k < r.kw; ++k) sum += pool_tap(r, i, k, j);
    r.out[j] = sum / r.divisor;
  }
}

#if defined(__x86_64__)
void pool_max_row_avx2(const PoolRow& r);
void pool_avg_row_avx2(const PoolRow& r);
void pool_max_row_avx512(const PoolRow& r);
void pool_avg_row_avx512(const PoolRow& r);
#endif
#if defined(__aarch64__)
void pool_max_row_neon(const PoolRow& r);
void pool_avg_row_neon(const PoolRow& r);
#endif

}  // namespace infer::cpu::simd
