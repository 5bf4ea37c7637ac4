// AVX-512 depthwise plane: 32 outputs per step in two vectors, each with two accumulators
// (even and odd kernel rows) so the FMA chains overlap; the tail uses masked loads. The
// loops are in depthwise_impl.hpp; this file supplies the AVX-512 intrinsics.
#include <immintrin.h>

#include "depthwise_impl.hpp"
#include "depthwise_kernels.hpp"

namespace infer::cpu::simd {

namespace {

struct Avx512 {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V fma(V w, V x, V acc) { return _mm512_fmadd_ps(w, x, acc); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  // Lanes below min(left, 16) set; none for left <= 0.
  static Mask mask(int64_t left) {
    if (left <= 0) return 0;
    return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
  }
  static V maskload(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void maskstore(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
  // max/min return their second operand when either is NaN: Relu maps NaN to 0, Clip
  // passes it through, as the unfused kernels do.
  static V relu(V v) { return _mm512_max_ps(v, _mm512_setzero_ps()); }
  static V clip(V v, V lo, V hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }
  static V even(const float* p) {
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 16));
  }
  static V even_masked(const float* p, int64_t n) {
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const V a = maskload(p, mask(2 * n - 1));
    const V b = maskload(p + 16, mask(2 * n - 1 - 16));
    return _mm512_permutex2var_ps(a, idx, b);
  }
};

}  // namespace

void depthwise_plane_avx512(const DepthwisePlane& p) { depthwise_impl::plane<Avx512>(p); }

}  // namespace infer::cpu::simd
