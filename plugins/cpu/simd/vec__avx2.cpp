// The AVX2 + FMA variant of the vectorized elementwise kernels: vec_impl.hpp over
// 8-lane registers, with VMASKMOV loads and stores for the tails.
#include <immintrin.h>

#include <cstdint>

#include "vec_impl.hpp"

namespace infer::cpu::simd::detail {
namespace {

// Eight all-ones words then eight zeros: loading 8 words at kTailMask + 8 - n gives the
// mask of the first n lanes.
alignas(64) const int32_t kTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

struct Avx2V {
  using R = __m256;
  using M = __m256;
  static constexpr size_t W = 8;
  static __m256i tail(size_t n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + 8 - n));
  }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static R load_n(const float* p, size_t n, float fill) {
    const __m256i m = tail(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void store_n(float* p, R v, size_t n) { _mm256_maskstore_ps(p, tail(n), v); }
  static R set1(float v) { return _mm256_set1_ps(v); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R div(R a, R b) { return _mm256_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  // MINPS/MAXPS return the second operand when either is NaN: exactly a < b ? a : b.
  static R min(R a, R b) { return _mm256_min_ps(a, b); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }
  // numpy's maximum/minimum: MAXPS(b, a) returns a on a tie or a NaN; a + b where either
  // is NaN.
  static R max_nan(R a, R b) {
    return _mm256_blendv_ps(_mm256_max_ps(b, a), _mm256_add_ps(a, b),
                            _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  static R min_nan(R a, R b) {
    return _mm256_blendv_ps(_mm256_min_ps(b, a), _mm256_add_ps(a, b),
                            _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  static R sign_bit() { return _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)); }
  static R abs(R a) { return _mm256_andnot_ps(sign_bit(), a); }
  static R neg(R a) { return _mm256_xor_ps(a, sign_bit()); }
  static R sqrt(R a) { return _mm256_sqrt_ps(a); }
  static R round(R a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static R pow2i(R n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  static M lt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static R select(M m, R a, R b) { return _mm256_blendv_ps(b, a, m); }
  static R copysign(R mag, R sgn) {
    return _mm256_or_ps(_mm256_and_ps(sgn, sign_bit()), _mm256_andnot_ps(sign_bit(), mag));
  }
  static float hsum(R a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(R a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace

const VecKernels& vec_kernels_avx2() { return VecKernelsImpl<Avx2V>::table(); }

}  // namespace infer::cpu::simd::detail
