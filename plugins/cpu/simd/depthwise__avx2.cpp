// AVX2 depthwise plane: 16 outputs per step in two vectors with two accumulators each
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
  // Lanes below min(left, 8) set; none for left <= 0.
  static Mask mask(int64_t left) {
    const int n = static_cast<int>(left <= 0 ? 0 : (left < 8 ? left : 8));
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V maskload(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void maskstore(float* p, Mask m, V v) { _mm256_maskstore_ps(p, m, v); }
  // max/min return their second operand when either is NaN: Relu maps NaN to 0, Clip
  // passes it through, as the unfused kernels do.
  static V relu(V v) { return _mm256_max_ps(v, _mm256_setzero_ps()); }
  static V clip(V v, V lo, V hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }
  // Elements 0, 2, 4, 6 of a and of b: the shuffle leaves them as a0 a2 b0 b2 | a4 a6 b4
  // b6, and the 64-bit lane permute puts the pairs in order.
  static V evens_of(V a, V b) {
    const V s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static V even(const float* p) { return evens_of(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)); }
  static V even_masked(const float* p, int64_t n) {
    return evens_of(maskload(p, mask(2 * n - 1)), maskload(p + 8, mask(2 * n - 1 - 8)));
  }
};

}  // namespace

void depthwise_plane_avx2(const DepthwisePlane& p) { depthwise_impl::plane<Avx2>(p); }

}  // namespace infer::cpu::simd
