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

// QLinearAdd / QLinearMul of the ai.infer domain (the Add or Mul of a QDQ model between
// DequantizeLinear and QuantizeLinear), on 8-bit runs, in float32 exactly as those three
// ops compute it one after the other:
//
//   y = saturate(round_half_even(op(float(a - a.zero) * a.scale,
//                                   float(b - b.zero) * b.scale) / c.scale) + c.zero)
//
// a_step and b_step are 1 (a run of n elements) or 0 (one element, broadcast).
enum class QBinaryOp { kAdd, kMul };
struct QParams {
  float scale = 1.0f;
  int32_t zero = 0;
};
void qlinear_binary_u8(Isa isa, QBinaryOp op, const uint8_t* a, size_t a_step, QParams pa,
                       const uint8_t* b, size_t b_step, QParams pb, QParams pc, uint8_t* y,
                       size_t n);
void qlinear_binary_s8(Isa isa, QBinaryOp op, const int8_t* a, size_t a_step, QParams pa,
                       const int8_t* b, size_t b_step, QParams pb, QParams pc, int8_t* y, size_t n);

// QLinearLookup: y[i] = table[x[i] ^ flip] over bytes (flip 0x80 maps int8 storage to
// the table's order -128..127). AVX-512 with VBMI (cpu_has_avx512_vbmi) looks up 64
// bytes per step; other CPUs one by one.
void lookup_8bit(Isa isa, const uint8_t* x, size_t n, uint8_t flip, const uint8_t* table,
                 uint8_t* y);

// The range of x[0, n) widened to include 0 (NaNs ignored): DynamicQuantizeLinear's.
void range_with_zero(Isa isa, const float* x, size_t n, float* lo, float* hi);

}  // namespace infer::cpu::simd
