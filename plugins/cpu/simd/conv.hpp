// Float32 convolution, NCHW (N, C, spatial...) in and out, with bias, residual and
// activation fused into the last pass over each output tile:
//
//   y = act( conv(x, w) + bias[m] + residual )
//
// The weights are packed once (conv_pack_weights, at kernel creation or by the host's
// prepack hook) into the form the chosen algorithm reads:
//   - kGemm: per group the [M/g, C/g * kernel] matrix packed as sgemm's A. Runs as a
//     direct GEMM on the input for 1x1 stride-1 unpadded kernels; 2-D kernels as an
//     implicit im2col (sgemm gathers its B panels straight from the image,
//     gemm_im2col.hpp); other ranks as im2col (per-thread scratch) + GEMM. Any rank,
//     group, stride, dilation and padding.
//   - kDepthwise: group == C == M, 2-D: the raw [C, kh * kw] weights for the direct
//     depthwise kernel (depthwise.hpp), vectorized along the output width (AVX-512, small
//     planes: across 16 channels).
//   - kWinograd: 2-D 3x3 stride-1 dilation-1 group-1 with enough channels: F(4x4, 3x3),
//     the 36 transformed weight matrices packed as sgemm's A (winograd.hpp).
// The packed blob starts with a header naming the algorithm, ISA, precision and dims, so a
// blob made for another shape or ISA is rejected (conv_packed_matches) instead of misread.
//
// Precision (gemm.hpp's GemmPrecision): the weights are packed in float32 or bfloat16, and
// the blob's precision decides conv_forward's: kGemm and kWinograd (its 36 GEMMs) then
// round the weights and the input (Winograd: the transformed ones) to bfloat16 and
// accumulate in float32; kDepthwise stays float32 whatever the precision (it is memory
// bound: bfloat16 would only add the conversions). Bias, residual and activation are
// float32 in every case.
#pragma once

#include <cstddef>
#include <cstdint>

#include "activation.hpp"
#include "gemm.hpp"
#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

constexpr int kMaxConvRank = 8;

// The geometry of one convolution. in/out are the spatial sizes; out[d] must equal
// (in[d] + pad_begin[d] + pad_end[d] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] + 1,
// which the caller computed (pad_end is implied by it). A 0 in `in` or `out` means
// "not known yet" and is allowed only where a shape is used to choose an algorithm.
struct ConvShape {
  int64_t batch = 1;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  int rank = 2;
  int64_t in[kMaxConvRank] = {};
  int64_t kernel[kMaxConvRank] = {};
  int64_t stride[kMaxConvRank] = {};
  int64_t dilation[kMaxConvRank] = {};
  int64_t pad_begin[kMaxConvRank] = {};
  int64_t out[kMaxConvRank] = {};

  int64_t kernel_size() const;  // product of kernel[]
  int64_t in_size() const;      // product of in[]
  int64_t out_size() const;     // product of out[]
};

enum class ConvAlgo : uint32_t { kGemm = 1, kDepthwise = 2, kWinograd = 3 };
const char* conv_algo_name(ConvAlgo algo);

// The algorithm for `shape` on `isa` at precision `p`: depthwise when group == C == M
// (2-D), Winograd when the 3x3 heuristic says it wins (and INFER_CPU_WINOGRAD is not
// "0"), else GEMM. Unknown spatial sizes (0) are allowed: the choice then assumes a large
// image.
ConvAlgo choose_conv_algo(Isa isa, const ConvShape& shape,
                          GemmPrecision p = GemmPrecision::kFloat32);
// Whether `algo` can run `shape` at all (kGemm always can).
bool conv_algo_supports(ConvAlgo algo, const ConvShape& shape);
// Whether INFER_CPU_WINOGRAD allows Winograd (read once; "0" disables it).
bool winograd_enabled();

// Bytes of the packed weights for `algo` and precision `p` (64-byte aligned buffer
// required).
size_t conv_packed_bytes(Isa isa, const ConvShape& shape, ConvAlgo algo,
                         GemmPrecision p = GemmPrecision::kFloat32);
// Packs w ([M, C/g, kernel...], contiguous) into dst (conv_packed_bytes long, 64-byte
// aligned). The spatial in/out sizes of `shape` are not used. kBfloat16 where
// gemm_precision_supported(isa, p) is false is a caller's bug: it aborts saying so (for
// kDepthwise too, which records the precision but computes in float32).
void conv_pack_weights(Isa isa, const ConvShape& shape, ConvAlgo algo, const float* w, void* dst,
                       GemmPrecision p = GemmPrecision::kFloat32);
// Whether `packed` (of `bytes` bytes) is a blob conv_pack_weights made for this isa and
// the channel/kernel geometry of `shape`; its algorithm is stored in *algo and, when
// `precision` is not null, the precision it was packed with in *precision.
bool conv_packed_matches(Isa isa, const ConvShape& shape, const void* packed, size_t bytes,
                         ConvAlgo* algo, GemmPrecision* precision = nullptr);

// y[N, M, out...] = act(conv(x, w) + bias + residual). `packed` is a blob made by
// conv_pack_weights for this isa and shape (its algorithm and precision are used, see
// conv_packed_matches); bias ([M]) and residual (y's shape) may be null. Runs on
// `threads` (pass a SerialThreads from inside another parallel loop).
void conv_forward(Isa isa, const Threads& threads, const ConvShape& shape, const void* packed,
                  const float* x, const float* bias, const float* residual, const Act& act,
                  float* y);

}  // namespace infer::cpu::simd
