// IEEE binary16 and bfloat16 conversions, for generating float16/bfloat16 inputs and
// for showing and saving such outputs. Both directions round to nearest even and keep
// infinities and NaN.
#pragma once

#include <cstdint>

namespace infer::cli {

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace infer::cli
