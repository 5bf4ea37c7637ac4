// The AVX-512 variant of the vectorized elementwise kernels: vec_impl.hpp over 16-lane
// registers, with masked loads and stores for the tails (no scalar remainder loop).
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps() (a self-initialized
// variable), which -Wuninitialized reports once they are inlined at -O3: a known false
// positive of the compiler's own headers, silenced for this file only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group, unknown to clang
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "vec_impl.hpp"

namespace infer::cpu::simd::detail {
namespace {

struct Avx512V {
  using R = __m512;
  using M = __mmask16;
  static constexpr size_t W = 16;
  static M tail(size_t n) { return static_cast<M>((1u << n) - 1u); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static R load_n(const float* p, size_t n, float fill) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), tail(n), p);
  }
  static void store_n(float* p, R v, size_t n) { _mm512_mask_storeu_ps(p, tail(n), v); }
  static R set1(float v) { return _mm512_set1_ps(v); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  // MINPS/MAXPS return the second operand when either is NaN: exactly a < b ? a : b.
  static R min(R a, R b) { return _mm512_min_ps(a, b); }
  static R max(R a, R b) { return _mm512_max_ps(a, b); }
  // numpy's maximum/minimum: MAXPS(b, a) returns a on a tie or a NaN; a + b where either
  // is NaN.
  static R max_nan(R a, R b) {
    return _mm512_mask_add_ps(_mm512_max_ps(b, a), _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
  }
  static R min_nan(R a, R b) {
    return _mm512_mask_add_ps(_mm512_min_ps(b, a), _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
  }
  static R abs(R a) { return _mm512_abs_ps(a); }
  static R neg(R a) {
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  static R sqrt(R a) { return _mm512_sqrt_ps(a); }
  static R round(R a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static R pow2i(R n) {
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  }
  static M lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static R select(M m, R a, R b) { return _mm512_mask_blend_ps(m, b, a); }
  static R copysign(R mag, R sgn) {
    const __m512i s = _mm512_set1_epi32(INT32_MIN);
    // Bitwise s ? sgn : mag (truth table 0xCA).
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(s, _mm512_castps_si512(sgn),
                                                         _mm512_castps_si512(mag), 0xCA));
  }
  // Horizontal reductions by halving (GCC 12's _mm512_reduce_*_ps trips
  // -Wmaybe-uninitialized inside its own headers).
  static __m128 halve_add(R a) {
    const R h = _mm512_add_ps(a, _mm512_shuffle_f32x4(a, a, 0xEE));
    const __m256 q = _mm512_castps512_ps256(h);
    return _mm_add_ps(_mm256_castps256_ps128(q), _mm256_extractf128_ps(q, 1));
  }
  static __m128 halve_max(R a) {
    const R h = _mm512_max_ps(a, _mm512_shuffle_f32x4(a, a, 0xEE));
    const __m256 q = _mm512_castps512_ps256(h);
    return _mm_max_ps(_mm256_castps256_ps128(q), _mm256_extractf128_ps(q, 1));
  }
  static float hsum(R a) {
    __m128 s = halve_add(a);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(R a) {
    __m128 s = halve_max(a);
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace

const VecKernels& vec_kernels_avx512() { return VecKernelsImpl<Avx512V>::table(); }

}  // namespace infer::cpu::simd::detail
