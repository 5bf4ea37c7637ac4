// Depthwise 2-D convolution (group == C == M, one filter per channel), vectorized along
// the output width. Each channel's input is first copied into a zero-padded buffer whose
// rows are split into `stride` phases (phase p holds padded columns p, p + s, ...), so
// every kernel tap reads a contiguous run of the buffer whatever the stride, dilation and
// padding: the inner loop is then plain unaligned vector loads and FMAs. One call of the
// ISA's plane kernel does a whole channel (copy, every row, bias, residual, and Relu or
// Clip in registers), so per-channel overhead stays small on the 7x7 and 14x14 planes of
// MobileNet-style networks. Parallel over (image, channel). With AVX-512, output planes
// of at most 8x8 (and 14x14 at stride 2) take a channel-blocked kernel instead: 16
// channels per vector, through a channel-last copy (depthwise_kernels.hpp).
#pragma once

#include "activation.hpp"
#include "conv.hpp"
#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

// Whether the depthwise kernel runs `shape` (2-D, group == C == M, kernel <= 7x7,
// horizontal stride <= 7); other shapes take the GEMM path.
bool depthwise_supports(const ConvShape& shape);

// y = act(depthwise(x, w) + bias + residual); w is [C, kh * kw]; bias and residual may
// be null.
void depthwise_conv2d(Isa isa, const Threads& threads, const ConvShape& shape, const float* w,
                      const float* x, const float* bias, const float* residual, const Act& act,
                      float* y);

}  // namespace infer::cpu::simd
