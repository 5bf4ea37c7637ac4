// Layer normalization of contiguous float32 rows, vectorized per ISA:
//   y = (x - mean) / sqrt(var + eps) * gamma + beta
// with the population variance computed in two passes (sum, then sum of squared
// deviations), so rows with a large mean keep their precision.
#pragma once

#include <cstddef>

#include "isa.hpp"

namespace infer::cpu::simd {

// One row of n >= 1 elements; gamma and beta (n each) may be null (1 and 0). y may be x.
// mean_out / inv_std_out (may be null) receive the row's mean and 1 / sqrt(var + eps).
void layernorm_row(Isa isa, const float* x, float* y, size_t n, const float* gamma,
                   const float* beta, float eps, float* mean_out = nullptr,
                   float* inv_std_out = nullptr);

}  // namespace infer::cpu::simd
