// float16 <-> float32 for whole runs, with the hardware conversions (F16C, AVX-512) where
// the ISA has them: the Cast kernel between float16 and float32, which the float32
// widening of float16 models (core/runtime/precision_fallback) puts at every widened
// node's edges. Results are bit for bit those of the plugin's scalar conversions
// (src/half.hpp): round to nearest even, subnormals kept; a NaN becomes sign | 0x7e00 as a
// half, and a half NaN keeps its payload bits as a float (the hardware would quiet it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa.hpp"

namespace infer::cpu::simd {

// The leading elements of x[0, n) converted to y, as many as the ISA converts in whole
// or masked vectors: n for AVX2 and AVX-512, 0 for the others (the caller converts
// from the returned index on).
size_t half_to_float_run(Isa isa, const uint16_t* x, float* y, size_t n);
size_t float_to_half_run(Isa isa, const float* x, uint16_t* y, size_t n);

}  // namespace infer::cpu::simd
