// The scalar reference of the GEMM kernels: plain loops every other variant is tested
// against (through the tests' double-precision reference). 4 x 16 tiles.
#include "gemm_kernels.hpp"
#include "gemm_tile.hpp"

namespace infer::cpu::simd::gemm_detail {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 16;

void tile(const TileJob& t) {
  float acc[kMr * kNr] = {};
  for (int64_t k = 0; k < t.kc; ++k) {
    const float* a = t.a + k * kMr;
    const float* b = t.b + k * kNr;
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) acc[r * kNr + j] += a[r] * b[j];
  }
  finish_tile(acc, kNr, t);
}

void gemv_rows(int64_t K, const float* x, int64_t incx, const float* w, int64_t ldw, int64_t n,
               float* y) {
  for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const float xv = x[k * incx];
    const float* row = w + k * ldw;
    for (int64_t j = 0; j < n; ++j) y[j] += xv * row[j];
  }
}

void gemv_dots(int64_t K, const float* w, int64_t ldw, int64_t n, const float* x, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    float s = 0.0f;
    for (int64_t k = 0; k < K; ++k) s += row[k] * x[k];
    y[j] = s;
  }
}

}  // namespace

const Kernels& kernels_scalar() {
  static const Kernels k{tile, gemv_rows, gemv_dots, pack_b_rows_fixed<kNr>, nullptr, nullptr};
  return k;
}

}  // namespace infer::cpu::simd::gemm_detail
