// Per-tensor 8-bit quantization of float32 runs, the element loops of QuantizeLinear,
// DequantizeLinear and DynamicQuantizeLinear on the activations of quantized models:
//
//   quantize:   y = saturate(round_half_even(x / scale) + zp), NaN -> zp
//   dequantize: y = float(x - zp) * scale
//
// Bit-identical across ISAs and to the plugin's scalar definitions (the same division,
// rounding and single multiply): each ISA's file compiles one plain loop with that ISA's
// vectors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa.hpp"

namespace infer::cpu::simd {

// zp in [0, 255] for uint8, [-128, 127] for int8; scale > 0 and finite.
void quantize_u8(Isa isa, const float* x, size_t n, float scale, int32_t zp, uint8_t* y);
void quantize_s8(Isa isa, const float* x, size_t n, float scale, int32_t zp, int8_t* y);
void dequantize_u8(Isa isa, const uint8_t* x, size_t n, float scale, int32_t zp, float* y);
void dequantize_s8(Isa isa, const int8_t* x, size_t n, float scale, int32_t zp, float* y);

// The range of x[0, n) widened to include 0 (NaNs ignored): DynamicQuantizeLinear's.
void range_with_zero(Isa isa, const float* x, size_t n, float* lo, float* hi);

}  // namespace infer::cpu::simd
