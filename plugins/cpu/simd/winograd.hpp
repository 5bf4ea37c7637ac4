// Winograd F(4x4, 3x3) convolution for 3x3, stride-1, dilation-1, group-1 2-D convs.
//
// Each 4x4 output tile comes from a 6x6 input tile: V = B^T d B (input transform),
// U = G g G^T (weight transform, once, at packing), O = A^T (sum_c U .* V) A (output
// transform). The sum over input channels is, for each of the 36 tile positions xi, a
// GEMM O_xi[M, tiles] = U_xi[M, C] * V_xi[C, tiles], run by simd::sgemm with U_xi
// prepacked. That is 36 multiplies per 16 outputs instead of 144: 2.25x fewer FLOPs than
// a direct or im2col+GEMM conv, paid for with the transforms and with rounding error
// (the transform constants reach 8 and 1/24). Measured against a double-precision direct
// conv (winograd_test.cpp, 144 shapes, C up to 64, inputs in [-1, 1]): max |error| is
// 7.1e-6 of max |y| for every ISA (6.6e-6 scalar), vs ~1e-7 for im2col+GEMM; F(4x4) was
// kept over F(2x2) (1.78x fewer multiplies still) because that error is well inside
// float32 model tolerances (ResNet-50 matches its PyTorch reference).
//
// Chosen (choose_conv_algo) for C, M >= 32 and output images >= 8x8 with >= 16 tiles:
// measured on ResNet-50's shapes (AVX-512, 1 thread, CPU time on a loaded machine)
// 56x56x64: 2.22 -> 1.52 ms, 28x28x128: 2.34 -> 1.37 ms, 14x14x256: 2.45 -> 2.08 ms,
// 7x7x512: 3.32 -> 12.1 ms (too few tiles: excluded). INFER_CPU_WINOGRAD=0 disables it.
//
// In bfloat16 (weights packed with kBfloat16) the 36 GEMMs round U and V to bfloat16, and
// the output transform amplifies that rounding: against a float32 conv, relative L2 error
// 1.0-1.4e-2 on post-ReLU inputs (2.0-2.6e-2 zero-mean; ResNet-50's 3x3 layers, He
// weights) where bfloat16 im2col + GEMM errs by 2.2e-3. So choose_conv_algo never picks it
// for bfloat16, though it runs when asked for (1.8-2x faster than bfloat16 im2col on the
// 56x56..14x14 layers, 1 thread, Zen 5; conv.cpp has the times).
//
// Tiles are processed in blocks of whole tile rows sized so that V and O of a block stay
// near L2; the transforms are vectorized across the tiles of a block (the block's tile
// count is padded to a multiple of 16 lanes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "activation.hpp"
#include "conv.hpp"
#include "gemm.hpp"
#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

bool winograd_supports(const ConvShape& shape);

// The packed transformed weights: 36 sgemm A operands [M, C] of precision p, each at a
// 64-byte aligned offset.
size_t winograd_packed_bytes(Isa isa, int64_t M, int64_t C,
                             GemmPrecision p = GemmPrecision::kFloat32);
void winograd_pack(Isa isa, int64_t M, int64_t C, const float* w, void* dst,
                   GemmPrecision p = GemmPrecision::kFloat32);

// `p`: the precision `packed` was made with (the 36 GEMMs run in it).
void winograd_conv2d(Isa isa, const Threads& threads, const ConvShape& shape, const void* packed,
                     const float* x, const float* bias, const float* residual, const Act& act,
                     float* y, GemmPrecision p = GemmPrecision::kFloat32);

}  // namespace infer::cpu::simd
