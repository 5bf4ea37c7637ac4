// The per-ISA part of the depthwise kernel (depthwise.cpp): one whole channel plane.
#pragma once

#include <cstdint>

namespace infer::cpu::simd {

constexpr int kDepthwiseMaxKernel = 7;

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
  float* buf = nullptr;             // [buf_rows][row_len]
  float* out = nullptr;             // [OH][OW]
  const float* residual = nullptr;  // [OH][OW] or null; may be `out` itself
  const float* weights = nullptr;   // [kh][kw]
  float bias = 0.0f;
  int kh = 0;
  int kw = 0;
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  int64_t wq = 0;        // columns per phase
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

void depthwise_plane_scalar(const DepthwisePlane& p);
#if defined(__x86_64__)
void depthwise_plane_avx2(const DepthwisePlane& p);
void depthwise_plane_avx512(const DepthwisePlane& p);
#endif
#if defined(__aarch64__)
void depthwise_plane_neon(const DepthwisePlane& p);
#endif

}  // namespace infer::cpu::simd
