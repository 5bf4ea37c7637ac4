// AVX2 depthwise row: 16 outputs per step in two vectors with two accumulators each
// (even and odd kernel rows); the tail uses masked loads and a masked store. The loops
// are in depthwise_impl.hpp; this file supplies the AVX2 intrinsics.
#include <immintrin.h>

#include "depthwise_impl.hpp"
#include "depthwise_kernels.hpp"

namespace infer::cpu::simd {

namespace {

struct Avx2 {
  using V = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V fma(V w, V x, V acc) { return _mm256_fmadd_ps(w, x, acc); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  // Lanes below min(left, 8) set.
  static Mask mask(int64_t left) {
    const int n = static_cast<int>(left < 8 ? left : 8);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V maskload(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void maskstore(float* p, Mask m, V v) { _mm256_maskstore_ps(p, m, v); }
};

}  // namespace

void depthwise_row_avx2(const DepthwiseRow& r) { depthwise_impl::row<Avx2>(r); }

}  // namespace infer::cpu::simd
