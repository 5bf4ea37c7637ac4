#include "depthwise.hpp"

#include <algorithm>
#include <cstring>

#include "depthwise_kernels.hpp"
#include "scratch.hpp"

namespace infer::cpu::simd {

void depthwise_row_scalar(const DepthwiseRow& r) {
  for (int64_t ow = 0; ow < r.width; ++ow) {
    float acc = r.bias;
    for (int kh = 0; kh < r.kh; ++kh) {
      if (r.rows[kh] == nullptr) continue;
      for (int kw = 0; kw < r.kw; ++kw) acc += r.weights[kh * r.kw + kw] * r.rows[kh][r.offsets[kw] + ow];
    }
    r.out[ow] = acc;
  }
}

bool depthwise_supports(const ConvShape& s) {
  return s.rank == 2 && s.groups == s.in_channels && s.groups == s.out_channels && s.groups > 0 &&
         s.kernel[0] >= 1 && s.kernel[0] <= kDepthwiseMaxKernel && s.kernel[1] >= 1 &&
         s.kernel[1] <= kDepthwiseMaxKernel;
}

void depthwise_conv2d(Isa isa, const Threads& threads, const ConvShape& s, const float* w,
                      const float* x, const float* bias, const float* residual, const Act& act,
                      float* y) {
  void (*row_fn)(const DepthwiseRow&) = depthwise_row_scalar;
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx2:
      row_fn = depthwise_row_avx2;
      break;
    case Isa::kAvx512:
      row_fn = depthwise_row_avx512;
      break;
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      row_fn = depthwise_row_neon;
      break;
#endif
    default:
      break;
  }
  const int64_t C = s.in_channels, H = s.in[0], W = s.in[1];
  const int64_t OH = s.out[0], OW = s.out[1];
  const int KH = static_cast<int>(s.kernel[0]), KW = static_cast<int>(s.kernel[1]);
  const int64_t sh = s.stride[0], sw = s.stride[1], dh = s.dilation[0], dw = s.dilation[1];
  const int64_t ph = s.pad_begin[0], pw = s.pad_begin[1];
  // Each padded row is split into sw phases of wq columns: output ow at tap kw reads
  // padded column ow * sw + kw * dw = phase (kw * dw) % sw, column ow + (kw * dw) / sw.
  const int64_t wq = OW + ((KW - 1) * dw) / sw + 1;
  const int64_t row_len = sw * wq;
  const int64_t plane = OH * OW;
  // A few ranges per thread (not one per channel): each range zeroes its buffer once.
  const size_t planes = static_cast<size_t>(s.batch * C);
  const size_t grain = std::max<size_t>(1, planes / (8 * static_cast<size_t>(threads.concurrency())));
  threads.run(planes, grain, [&](size_t b, size_t e) {
    float* buf = scratch_as<float>(ScratchSlot::kColumns, static_cast<size_t>(H * row_len));
    // The padding positions are the same for every channel and only the inside ones are
    // rewritten per channel, so zeroing the buffer once per range is enough.
    std::memset(buf, 0, sizeof(float) * static_cast<size_t>(H * row_len));
    for (size_t t = b; t < e; ++t) {
      const int64_t c = static_cast<int64_t>(t) % C;
      const float* xc = x + static_cast<int64_t>(t) * H * W;
      for (int64_t ih = 0; ih < H; ++ih) {
        const float* src = xc + ih * W;
        float* dst = buf + ih * row_len;
        for (int64_t p = 0; p < sw; ++p) {
          // Phase p column j holds input column j * sw + p - pw: inside the row for
          // j in [lo, hi), zero padding elsewhere.
          float* ph_row = dst + p * wq;
          const int64_t lo = std::min(wq, std::max<int64_t>(0, (pw - p + sw - 1) / sw));
          const int64_t hi = std::clamp<int64_t>((W + pw - p + sw - 1) / sw, lo, wq);
          const float* s0 = src + (lo * sw + p - pw);
          if (sw == 1) {
            std::memcpy(ph_row + lo, s0, sizeof(float) * static_cast<size_t>(hi - lo));
          } else if (sw == 2) {
            // A constant stride lets the compiler vectorize the gather with shuffles.
            for (int64_t j = 0; j < hi - lo; ++j) ph_row[lo + j] = s0[2 * j];
          } else {
            for (int64_t j = lo; j < hi; ++j) ph_row[j] = s0[(j - lo) * sw];
          }
        }
      }
      DepthwiseRow r;
      r.kh = KH;
      r.kw = KW;
      for (int kw = 0; kw < KW; ++kw) r.offsets[kw] = ((kw * dw) % sw) * wq + (kw * dw) / sw;
      r.weights = w + c * KH * KW;
      r.bias = bias != nullptr ? bias[c] : 0.0f;
      r.width = OW;
      float* yc = y + static_cast<int64_t>(t) * plane;
      // The rows are written before the residual is added: keep a copy of a residual
      // that aliases y (an in-place FusedConv).
      const float* res = residual != nullptr ? residual + static_cast<int64_t>(t) * plane : nullptr;
      if (res != nullptr && res == yc) {
        float* copy = scratch_as<float>(ScratchSlot::kMisc, static_cast<size_t>(plane));
        std::memcpy(copy, res, sizeof(float) * static_cast<size_t>(plane));
        res = copy;
      }
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int kh = 0; kh < KH; ++kh) {
          const int64_t ih = oh * sh + kh * dh - ph;
          r.rows[kh] = (ih >= 0 && ih < H) ? buf + ih * row_len : nullptr;
        }
        r.out = yc + oh * OW;
        row_fn(r);
      }
      if (res != nullptr)
        for (int64_t i = 0; i < plane; ++i) yc[i] += res[i];
      apply_activation(isa, act, yc, static_cast<size_t>(plane));
    }
  });
}

}  // namespace infer::cpu::simd
