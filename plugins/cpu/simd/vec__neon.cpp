// The AArch64 NEON variant of the vectorized elementwise kernels: vec_impl.hpp over
// 4-lane registers; tails go through a small stack buffer.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "vec_impl.hpp"

namespace infer::cpu::simd::detail {
namespace {

struct NeonV {
  using R = float32x4_t;
  using M = uint32x4_t;
  static constexpr size_t W = 4;
  static R load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, R v) { vst1q_f32(p, v); }
  static R load_n(const float* p, size_t n, float fill) {
    float buf[4] = {fill, fill, fill, fill};
    std::memcpy(buf, p, n * sizeof(float));
    return vld1q_f32(buf);
  }
  static void store_n(float* p, R v, size_t n) {
    float buf[4];
    vst1q_f32(buf, v);
    std::memcpy(p, buf, n * sizeof(float));
  }
  static R set1(float v) { return vdupq_n_f32(v); }
  static R add(R a, R b) { return vaddq_f32(a, b); }
  static R sub(R a, R b) { return vsubq_f32(a, b); }
  static R mul(R a, R b) { return vmulq_f32(a, b); }
  static R div(R a, R b) { return vdivq_f32(a, b); }
  static R fma(R a, R b, R c) { return vfmaq_f32(c, a, b); }
  // The x86 semantics (a < b ? a : b), so NaN handling matches the other variants.
  static R min(R a, R b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static R max(R a, R b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  // numpy's maximum/minimum: a < b ? b : a (b < a ? b : a), a + b where either is NaN.
  static R max_nan(R a, R b) {
    const uint32x4_t ordered = vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b));
    return vbslq_f32(ordered, vbslq_f32(vcltq_f32(a, b), b, a), vaddq_f32(a, b));
  }
  static R min_nan(R a, R b) {
    const uint32x4_t ordered = vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b));
    return vbslq_f32(ordered, vbslq_f32(vcltq_f32(b, a), b, a), vaddq_f32(a, b));
  }
  static R abs(R a) { return vabsq_f32(a); }
  static R neg(R a) { return vnegq_f32(a); }
  static R sqrt(R a) { return vsqrtq_f32(a); }
  static R round(R a) { return vrndnq_f32(a); }
  static R pow2i(R n) {
    const int32x4_t e = vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(e, 23));
  }
  static M lt(R a, R b) { return vcltq_f32(a, b); }
  static M gt(R a, R b) { return vcgtq_f32(a, b); }
  static R select(M m, R a, R b) { return vbslq_f32(m, a, b); }
  static R copysign(R mag, R sgn) {
    return vbslq_f32(vdupq_n_u32(0x80000000u), sgn, mag);
  }
  static float hsum(R a) { return vaddvq_f32(a); }
  static float hmax(R a) { return vmaxvq_f32(a); }
};

}  // namespace

const VecKernels& vec_kernels_neon() { return VecKernelsImpl<NeonV>::table(); }

}  // namespace infer::cpu::simd::detail
