// AVX-512 depthwise row: 32 outputs per step in two vectors, each with two accumulators
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
  // Lanes below min(left, 16) set.
  static Mask mask(int64_t left) {
    return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
  }
  static V maskload(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void maskstore(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
};

}  // namespace

void depthwise_row_avx512(const DepthwiseRow& r) { depthwise_impl::row<Avx512>(r); }

}  // namespace infer::cpu::simd
