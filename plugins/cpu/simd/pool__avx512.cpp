// AVX-512 pool2d rows: 16 output columns per vector; stride 2 keeps the even floats of
// two vectors with one two-source permute (VPERMT2PS, from the generic shuffle). The
// loops are in pool_impl.hpp; this file supplies the masked loads and stores of partial
// vectors, which read and write only the lanes of their mask register.
#include <immintrin.h>

#include "pool_impl.hpp"
#include "pool_kernels.hpp"

namespace infer::cpu::simd {

namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  using V = pool_impl::Vec<kLanes>;
  static __mmask16 first(int64_t n) {
    return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
  }
  static V maskload(const float* p, int64_t n) { return reinterpret_cast<V>(_mm512_maskz_loadu_ps(first(n), p)); }
  static void maskstore(float* p, int64_t n, V v) { _mm512_mask_storeu_ps(p, first(n), reinterpret_cast<__m512>(v)); }
};

}  // namespace

void pool_max_row_avx512(const PoolRow& r) { pool_impl::row<Avx512, pool_impl::MaxOp>(r); }
void pool_avg_row_avx512(const PoolRow& r) { pool_impl::row<Avx512, pool_impl::AvgOp>(r); }

}  // namespace infer::cpu::simd
