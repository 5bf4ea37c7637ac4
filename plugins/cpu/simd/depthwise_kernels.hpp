// The per-ISA part of the depthwise kernel (depthwise.cpp): one whole channel plane.
#pragma once

#include <cstdint>

namespace infer::cpu::simd {

constexpr int kDepthwiseMaxKernel = 7;
// Buffer rows and phases start on multiples of this many floats (one 64-byte line).
constexpr int64_t kDepthwiseRowAlign = 16;

// Which activation the plane kernels apply in registers; the others are applied to the
// finished plane by the caller (apply_activation).
enum class DepthwiseClamp { kNone, kRelu, kClip };

// One channel plane. The kernel first copies the input plane into `buf`, a zero-padded
// copy whose rows are split into `sw` phases of `wq` columns (phase p holds padded
// columns p, p + sw, ...), then computes every output row from `buf` alone:
//   out[oh][ow] = clamp(bias + sum w[kh][kw] * buf[oh * sh + kh * dh][offsets[kw] + ow]
//                       + residual[oh][ow]).
// Buffer row r holds input row r - ph. `buf` has `buf_rows` rows of `row_len` floats and
// must be zero wherever the copy does not write (the vertical and horizontal padding):
// the caller zeroes it once and reuses it for planes of the same shape.
struct DepthwisePlane {
  const float* x = nullptr;         // [H][W]
  float* buf = nullptr;             // [buf_rows][row_len] + 2 * kDepthwiseRowAlign, 64-byte aligned
  float* out = nullptr;             // [OH][OW]
  const float* residual = nullptr;  // [OH][OW] or null; may be `out` itself
  const float* weights = nullptr;   // [kh][kw]
  float bias = 0.0f;
  int kh = 0;
  int kw = 0;
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  int64_t wq = 0;        // columns per phase (a multiple of kDepthwiseRowAlign)
  int64_t row_len = 0;   // sw * wq
  int64_t buf_rows = 0;  // (OH - 1) * sh + (kh - 1) * dh + 1
  // Per kernel column: the offset inside a buffer row of the element output 0 reads.
  int64_t offsets[kDepthwiseMaxKernel] = {};
  // Per phase: the buffer columns [lo, hi) that hold input (the rest is padding).
  int64_t phase_lo[kDepthwiseMaxKernel] = {};
  int64_t phase_hi[kDepthwiseMaxKernel] = {};
  DepthwiseClamp clamp = DepthwiseClamp::kNone;
  float lo = 0.0f;  // kClip bounds
  float hi = 0.0f;
};

// Up to 16 channels of one image at once, for small planes (depthwise.cpp picks it): the
// inputs are transposed into a zero-padded channel-last buffer (pixel-major, 16 channels
// per pixel), every output pixel is kh * kw FMAs on whole vectors of channels, and the
// results are transposed back. A 7x7 plane fills a third of a vector along its width;
// across channels every lane works.
//   out[c][oh][ow] = clamp(bias[c] + sum w[c][kh][kw] * x[c][oh * sh + kh * dh - ph]
//                                                       [ow * sw + kw * dw - pw] +
//                                                       residual[c][oh][ow])
struct DepthwiseBlock {
  const float* x = nullptr;         // channel 0 of the block: [count][H][W]
  float* out = nullptr;             // [count][OH][OW]
  const float* residual = nullptr;  // [count][OH][OW] or null; may be `out` itself
  const float* weights = nullptr;   // [count][kh][kw]
  const float* bias = nullptr;      // [count] or null
  int count = 0;                    // channels in the block, 1..16
  int kh = 0;
  int kw = 0;
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  DepthwiseClamp clamp = DepthwiseClamp::kNone;
  float lo = 0.0f;
  float hi = 0.0f;
  float* buf = nullptr;  // depthwise_block_floats(...) floats, 64-byte aligned
};
constexpr int kDepthwiseBlockMaxTaps = 25;
// Floats of a DepthwiseBlock's scratch: the padded input and the outputs, 16 per pixel.
inline int64_t depthwise_block_floats(const DepthwiseBlock& b) {
  const int64_t hp = (b.OH - 1) * b.sh + (b.kh - 1) * b.dh + 1;
  const int64_t wp = (b.OW - 1) * b.sw + (b.kw - 1) * b.dw + 1;
  return 16 * (hp * wp + b.OH * b.OW);
}
#if defined(__x86_64__)
// kh * kw <= kDepthwiseBlockMaxTaps.
void depthwise_block16_avx512(const DepthwiseBlock& b);
#endif

void depthwise_plane_scalar(const DepthwisePlane& p);
#if defined(__x86_64__)
void depthwise_plane_avx2(const DepthwisePlane& p);
void depthwise_plane_avx512(const DepthwisePlane& p);
#endif
#if defined(__aarch64__)
void depthwise_plane_neon(const DepthwisePlane& p);
#endif

}  // namespace infer::cpu::simd
