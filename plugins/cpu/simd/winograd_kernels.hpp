// The per-ISA Winograd F(4x4, 3x3) tile transforms (winograd.cpp drives them). Both work
// on a block of Tp tiles (a multiple of 16) laid out lane-contiguously, so one vector
// holds the same tile element of consecutive tiles.
#pragma once

#include <cstdint>

namespace infer::cpu::simd {

// in:  d[e][t] at in[e * Tp + t], e = 6 * row + col of the 6x6 input tile.
// out: V = B^T d B, element xi at out[xi * out_stride + t].
using WinogradInputFn = void (*)(const float* in, int64_t Tp, float* out, int64_t out_stride);
// in:  m[xi][t] at in[xi * in_stride + t] (the GEMM outputs of one output channel).
// out: A^T m A + bias, element e = 4 * row + col of the 4x4 output tile at out[e * Tp + t].
using WinogradOutputFn = void (*)(const float* in, int64_t in_stride, int64_t Tp, float bias,
                                  float* out);

// dst[j * Tp + tx] = R[4 * tx + j] for j < 6, tx < TW; R holds 4 * TW + 2 floats (one
// padded input row of a tile row).
using WinogradGatherFn = void (*)(const float* R, int64_t TW, float* dst, int64_t Tp);
// y[ox] = q[(ox % 4) * Tp + ox / 4] (+ res[ox]) for ox < OW; res may be null or y.
using WinogradScatterFn = void (*)(const float* q, int64_t Tp, int64_t OW, const float* res,
                                   float* y);

void winograd_input_scalar(const float* in, int64_t Tp, float* out, int64_t out_stride);
void winograd_output_scalar(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out);
void winograd_gather_scalar(const float* R, int64_t TW, float* dst, int64_t Tp);
void winograd_scatter_scalar(const float* q, int64_t Tp, int64_t OW, const float* res, float* y);
#if defined(__x86_64__)
void winograd_input_avx2(const float* in, int64_t Tp, float* out, int64_t out_stride);
void winograd_output_avx2(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out);
void winograd_gather_avx2(const float* R, int64_t TW, float* dst, int64_t Tp);
void winograd_scatter_avx2(const float* q, int64_t Tp, int64_t OW, const float* res, float* y);
void winograd_input_avx512(const float* in, int64_t Tp, float* out, int64_t out_stride);
void winograd_output_avx512(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out);
void winograd_gather_avx512(const float* R, int64_t TW, float* dst, int64_t Tp);
void winograd_scatter_avx512(const float* q, int64_t Tp, int64_t OW, const float* res, float* y);
#endif
#if defined(__aarch64__)
void winograd_input_neon(const float* in, int64_t Tp, float* out, int64_t out_stride);
void winograd_output_neon(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out);
void winograd_gather_neon(const float* R, int64_t TW, float* dst, int64_t Tp);
void winograd_scatter_neon(const float* q, int64_t Tp, int64_t OW, const float* res, float* y);
#endif

}  // namespace infer::cpu::simd
