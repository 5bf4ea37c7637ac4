// The single-precision matrix multiply under Gemm, MatMul and Conv (im2col):
//   C[M,N] = alpha * A[M,K] * B[K,N]  (+ C when accumulate)
// A is read through row/column strides (so a transposed A costs nothing); B must be
// row-major with contiguous rows (callers transpose or prepack it). The work is cut
// into cache-sized tiles spread over the host's threads; each tile runs an i-k-j loop
// over four rows at a time, which the compiler vectorizes along N.
#pragma once

#include <cstdint>

#include "infer/plugin.hpp"

namespace infer::cpu {

struct GemmArgs {
  int64_t M = 0, N = 0, K = 0;
  const float* A = nullptr;
  int64_t a_row_stride = 0;  // elements between A(i,k) and A(i+1,k)
  int64_t a_col_stride = 1;  // elements between A(i,k) and A(i,k+1)
  const float* B = nullptr;
  int64_t ldb = 0;  // elements between B(k,n) and B(k+1,n)
  float* C = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  bool accumulate = false;
};

// Runs on the host's threads (pass parallel = false from inside another parallel loop).
void sgemm(const sdk::Host& host, const GemmArgs& g, bool parallel = true);

// dst[c, r] = src[r, c] for a rows x cols row-major matrix.
void transpose_2d(const float* src, int64_t rows, int64_t cols, float* dst);

}  // namespace infer::cpu
