// Depthwise 8-bit convolution (QLinearConv / ConvInteger with one input and one output
// channel per group), one channel plane at a time, accumulating exactly in int32 and
// finishing with qgemm's output stages (qgemm.hpp), so the result is bit-identical to the
// same convolution run through im2col and qgemm:
//
//   acc(oh, ow) = sum over taps inside the image of (x - x_zero) * (w - w_zero)
//   C = acc                                                         kInt32
//     = sat(nearbyint(float(acc + bias) * scale) + out_zero)        kUint8 / kInt8
//
// Taps in the padding contribute nothing (the input padded with its zero point). Any
// kernel size, stride, dilation and padding of a 2-D window.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "isa.hpp"

namespace infer::cpu::simd {

struct QDepthwiseShape {
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t KH = 1, KW = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0;
};

struct QDepthwiseOutput {
  enum class Kind { kInt32, kUint8, kInt8 };
  Kind kind = Kind::kUint8;
  int32_t bias = 0;    // not kInt32
  float scale = 1.0f;  // not kInt32
  int32_t out_zero = 0;
};

// Phase planes (here and in the cpu plugin's in-place convolution): column phase c of an
// input row padded by pad_left holds input columns iw = c + stride * j - pad_left. The
// range [j0, j1) of j < Wq whose iw is inside [0, W), the rest being padding.
struct PhaseColumns {
  int64_t first = 0;  // iw of j = 0
  int64_t j0 = 0, j1 = 0;
};
inline PhaseColumns phase_columns(int64_t c, int64_t pad_left, int64_t stride, int64_t W,
                                  int64_t Wq) {
  PhaseColumns p;
  p.first = c - pad_left;
  p.j0 = p.first >= 0 ? 0 : (-p.first + stride - 1) / stride;
  p.j1 = std::min(Wq, W - p.first <= 0 ? 0 : (W - p.first + stride - 1) / stride);
  return p;
}

// The phase planes of a plane (qdepthwise_impl.hpp): Hq x Wq floats each (with slack for
// the dropped columns and the last chunk), over an output domain of OH x Wq rounded up to
// whole chunks.
struct PhaseLayout {
  static constexpr int64_t kChunk = 64;
  int64_t Hq = 0, Wq = 0, domain = 0, padded = 0, phase_floats = 0;
};
inline PhaseLayout phase_layout(const QDepthwiseShape& s) {
  PhaseLayout l;
  l.Hq = s.OH + (s.KH - 1) * s.dh / s.sh;
  l.Wq = s.OW + (s.KW - 1) * s.dw / s.sw;
  l.domain = s.OH * l.Wq;
  l.padded = (l.domain + PhaseLayout::kChunk - 1) / PhaseLayout::kChunk * PhaseLayout::kChunk;
  l.phase_floats = (l.Hq + 1) * l.Wq + PhaseLayout::kChunk;
  return l;
}

// The 4-byte scratch one plane needs: the accumulators, the phase planes and the narrowed
// output.
inline size_t qdepthwise_scratch_ints(const QDepthwiseShape& s) {
  const PhaseLayout l = phase_layout(s);
  // The narrowed output's space doubles as the widened row of stride 2 (2 Wq + 32 floats).
  const int64_t narrow = std::max((l.padded + 3) / 4, 2 * l.Wq + 32);
  return static_cast<size_t>(l.padded + l.phase_floats * s.sh * s.sw + narrow);
}

// One plane: x (H x W, uint8, zero point x_zero in [0, 255]), w (KH x KW values already
// as int32, w_zero subtracted by the caller), y (OH x OW of the output kind); `scratch`
// holds qdepthwise_scratch_ints(s) int32.
void qdepthwise_plane(Isa isa, const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero,
                      const int32_t* w, const QDepthwiseOutput& out, void* y, int32_t* scratch);

// Channel-blocked (AVX-512): up to 16 channels at once, one vector lane per channel,
// for MobileNet's depthwise layers, whose planes (down to 7x7) are too small for the
// plane loop's vectors and per-plane setup. The block's input goes channel-last into a
// float buffer (x - x_zero, zero padding), each output pixel sums its taps as FMAs of
// whole vectors (exact like the plane loop: at most kQDepthwiseBlockMaxTaps terms of
// magnitude at most 255 * 255), runs qgemm's output stage with the channels' own bias and
// scale, and the pixels go back to planes through 16 x 16 transposes. The output rows are
// done in bands whose buffers stay in L2. Bit-identical to qdepthwise_plane.
constexpr int64_t kQDepthwiseBlockMaxTaps = 25;

struct QDepthwiseBlock {
  const uint8_t* x = nullptr;     // channel 0 of the block: [count][H][W]
  int count = 0;                  // channels in the block, 1..16
  const int32_t* w = nullptr;     // [count][KH * KW], w_zero subtracted
  const int32_t* bias = nullptr;  // [count] (not kInt32; nullptr = 0)
  const float* scale = nullptr;   // [count] (not kInt32)
  void* y = nullptr;              // [count][OH][OW] of the output kind
};

// Whether qdepthwise_block runs `s` on `isa` (AVX-512, at most 25 taps).
bool qdepthwise_block_supported(Isa isa, const QDepthwiseShape& s);
// Output rows per band, and the floats of scratch one block needs.
int64_t qdepthwise_block_band_rows(const QDepthwiseShape& s);
size_t qdepthwise_block_scratch_floats(const QDepthwiseShape& s);
// Output rows [oh0, oh1) of a block (out.kind and out.out_zero apply; bias and scale come
// from the block). scratch: qdepthwise_block_scratch_floats(s) floats, 64-byte aligned;
// oh1 - oh0 at most qdepthwise_block_band_rows(s).
void qdepthwise_block(Isa isa, const QDepthwiseShape& s, int32_t x_zero, const QDepthwiseOutput& out,
                      const QDepthwiseBlock& b, int64_t oh0, int64_t oh1, float* scratch);

}  // namespace infer::cpu::simd
