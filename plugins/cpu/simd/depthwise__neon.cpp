// NEON depthwise plane: 8 outputs per step in two vectors; the tail is scalar. The copy
// into the phase-split buffer de-interleaves stride-2 rows with vld2q.
#include <arm_neon.h>

#include "depthwise_impl.hpp"
#include "depthwise_kernels.hpp"

namespace infer::cpu::simd {

namespace {

void copy_row_neon(const float* src, float* dst, int64_t n, int64_t sw) {
  int64_t j = 0;
  if (sw == 1) {
    for (; j + 4 <= n; j += 4) vst1q_f32(dst + j, vld1q_f32(src + j));
  } else if (sw == 2) {
    // vld2q reads src[2j .. 2j + 8): only while that stays inside the n pairs.
    for (; j + 4 < n; j += 4) vst1q_f32(dst + j, vld2q_f32(src + 2 * j).val[0]);
  }
  for (; j < n; ++j) dst[j] = src[j * sw];
}

// Residual, then the clamp with the scalar rules (Relu: NaN -> 0; Clip: NaN passes).
float32x4_t finish(const DepthwisePlane& p, float32x4_t v, const float* res) {
  if (res != nullptr) v = vaddq_f32(v, vld1q_f32(res));
  const float32x4_t zero = vdupq_n_f32(0.0f);
  if (p.clamp == DepthwiseClamp::kRelu) {
    v = vbslq_f32(vcgtq_f32(v, zero), v, zero);
  } else if (p.clamp == DepthwiseClamp::kClip) {
    const float32x4_t lo = vdupq_n_f32(p.lo), hi = vdupq_n_f32(p.hi);
    v = vbslq_f32(vcltq_f32(v, lo), lo, v);
    v = vbslq_f32(vcgtq_f32(v, hi), hi, v);
  }
  return v;
}

}  // namespace

void depthwise_plane_neon(const DepthwisePlane& p) {
  depthwise_impl::fill(p, copy_row_neon);
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    const float* rows[kDepthwiseMaxKernel];
    for (int kh = 0; kh < p.kh; ++kh) rows[kh] = p.buf + (oh * p.sh + kh * p.dh) * p.row_len;
    float* out = p.out + oh * p.OW;
    const float* res = p.residual != nullptr ? p.residual + oh * p.OW : nullptr;
    int64_t ow = 0;
    for (; ow + 8 <= p.OW; ow += 8) {
      float32x4_t a0 = vdupq_n_f32(p.bias), a1 = a0;
      for (int kh = 0; kh < p.kh; ++kh)
        for (int kw = 0; kw < p.kw; ++kw) {
          const float w = p.weights[kh * p.kw + kw];
          const float* q = rows[kh] + p.offsets[kw] + ow;
          a0 = vfmaq_n_f32(a0, vld1q_f32(q), w);
          a1 = vfmaq_n_f32(a1, vld1q_f32(q + 4), w);
        }
      vst1q_f32(out + ow, finish(p, a0, res != nullptr ? res + ow : nullptr));
      vst1q_f32(out + ow + 4, finish(p, a1, res != nullptr ? res + ow + 4 : nullptr));
    }
    for (; ow < p.OW; ++ow) out[ow] = depthwise_impl::output_scalar(p, oh, ow);
  }
}

}  // namespace infer::cpu::simd
