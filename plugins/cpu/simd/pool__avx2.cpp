// AVX2 pool2d rows: 8 output columns per vector. The loops are in pool_impl.hpp; this
// file supplies the masked loads and stores of partial vectors (VMASKMOVPS, which
// neither reads nor faults on the lanes left out).
#include <immintrin.h>

#include "pool_impl.hpp"
#include "pool_kernels.hpp"

namespace infer::cpu::simd {

namespace {

// An 8-lane mask with the first n lanes set: a window slid over 8 ones and 8 zeros.
__m256i first_lanes(int64_t n) {
  alignas(64) static const int32_t kOnesThenZeros[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                         0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnesThenZeros + 8 - n));
}

struct Avx2 {
  static constexpr int kLanes = 8;
  using V = pool_impl::Vec<kLanes>;
  static V maskload(const float* p, int64_t n) {
    return reinterpret_cast<V>(_mm256_maskload_ps(p, first_lanes(n)));
  }
  static void maskstore(float* p, int64_t n, V v) {
    _mm256_maskstore_ps(p, first_lanes(n), reinterpret_cast<__m256>(v));
  }
};

}  // namespace

void pool_max_row_avx2(const PoolRow& r) { pool_impl::row<Avx2, pool_impl::MaxOp>(r); }
void pool_avg_row_avx2(const PoolRow& r) { pool_impl::row<Avx2, pool_impl::AvgOp>(r); }

}  // namespace infer::cpu::simd
