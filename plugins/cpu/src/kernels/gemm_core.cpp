#include "gemm_core.hpp"

#include <algorithm>
#include <cstring>

#include "../parallel.hpp"

namespace infer::cpu {
namespace {

constexpr int64_t kTileM = 64;
constexpr int64_t kTileN = 256;
constexpr int64_t kTileK = 256;

// One tile: rows [m0, m1) x columns [n0, n1) of C, the whole K range.
void gemm_tile(const GemmArgs& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int64_t nb = n1 - n0;
  if (!g.accumulate)
    for (int64_t i = m0; i < m1; ++i) std::memset(g.C + i * g.ldc + n0, 0, sizeof(float) * nb);
  const float* A = g.A;
  const int64_t rs = g.a_row_stride, cs = g.a_col_stride;
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
    const int64_t k1 = std::min(g.K, k0 + kTileK);
    int64_t i = m0;
    for (; i + 4 <= m1; i += 4) {
      float* __restrict c0 = g.C + i * g.ldc + n0;
      float* __restrict c1 = c0 + g.ldc;
      float* __restrict c2 = c1 + g.ldc;
      float* __restrict c3 = c2 + g.ldc;
      for (int64_t k = k0; k < k1; ++k) {
        const float a0 = g.alpha * A[i * rs + k * cs];
        const float a1 = g.alpha * A[(i + 1) * rs + k * cs];
        const float a2 = g.alpha * A[(i + 2) * rs + k * cs];
        const float a3 = g.alpha * A[(i + 3) * rs + k * cs];
        const float* __restrict b = g.B + k * g.ldb + n0;
        for (int64_t j = 0; j < nb; ++j) {
          const float bv = b[j];
          c0[j] += a0 * bv;
          c1[j] += a1 * bv;
          c2[j] += a2 * bv;
          c3[j] += a3 * bv;
        }
      }
    }
    for (; i < m1; ++i) {
      float* __restrict c = g.C + i * g.ldc + n0;
      for (int64_t k = k0; k < k1; ++k) {
        const float a = g.alpha * A[i * rs + k * cs];
        const float* __restrict b = g.B + k * g.ldb + n0;
        for (int64_t j = 0; j < nb; ++j) c[j] += a * b[j];
      }
    }
  }
}

}  // namespace

void sgemm(const sdk::Host& host, const GemmArgs& g, bool parallel) {
  if (g.M <= 0 || g.N <= 0) return;
  if (g.K <= 0) {
    if (!g.accumulate)
      for (int64_t i = 0; i < g.M; ++i) std::memset(g.C + i * g.ldc, 0, sizeof(float) * g.N);
    return;
  }
  const int64_t tm = (g.M + kTileM - 1) / kTileM;
  const int64_t tn = (g.N + kTileN - 1) / kTileN;
  const size_t tiles = static_cast<size_t>(tm * tn);
  auto body = [&](size_t b, size_t e) {
    for (size_t t = b; t < e; ++t) {
      const int64_t mi = static_cast<int64_t>(t) / tn, ni = static_cast<int64_t>(t) % tn;
      gemm_tile(g, mi * kTileM, std::min(g.M, (mi + 1) * kTileM), ni * kTileN,
                std::min(g.N, (ni + 1) * kTileN));
    }
  };
  // Below ~1 MFLOP the threads cost more than they save.
  const double flops =
      2.0 * static_cast<double>(g.M) * static_cast<double>(g.N) * static_cast<double>(g.K);
  if (!parallel || tiles == 1 || flops < 1e6) {
    body(0, tiles);
    return;
  }
  parallel_for(host, tiles, 1, body);
}

void transpose_2d(const float* src, int64_t rows, int64_t cols, float* dst) {
  constexpr int64_t kBlock = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const int64_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
    }
}

}  // namespace infer::cpu
