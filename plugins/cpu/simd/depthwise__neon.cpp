// NEON depthwise row: 8 outputs per step in two vectors; the tail is scalar.
#include <arm_neon.h>

#include "depthwise_impl.hpp"
#include "depthwise_kernels.hpp"

namespace infer::cpu::simd {

void depthwise_row_neon(const DepthwiseRow& r) {
  const int KW = r.kw;
  int64_t ow = 0;
  for (; ow + 8 <= r.width; ow += 8) {
    float32x4_t a0 = vdupq_n_f32(r.bias), a1 = vdupq_n_f32(r.bias);
    depthwise_impl::for_each_tap(r, ow, [&](int, float w, const float* p) {
      a0 = vfmaq_n_f32(a0, vld1q_f32(p), w);
      a1 = vfmaq_n_f32(a1, vld1q_f32(p + 4), w);
    });
    vst1q_f32(r.out + ow, a0);
    vst1q_f32(r.out + ow + 4, a1);
  }
  for (; ow < r.width; ++ow) {
    float acc = r.bias;
    for (int kh = 0; kh < r.kh; ++kh) {
      if (r.rows[kh] == nullptr) continue;
      for (int kw = 0; kw < KW; ++kw) acc += r.weights[kh * KW + kw] * r.rows[kh][r.offsets[kw] + ow];
    }
    r.out[ow] = acc;
  }
}

}  // namespace infer::cpu::simd
