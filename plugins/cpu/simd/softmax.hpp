// Row-wise Softmax and LogSoftmax over contiguous float32 rows, vectorized per ISA:
// max-subtract, exp (vec.hpp's polynomial), sum and scale in three passes over the row.
#pragma once

#include <cstddef>

#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

// y = softmax(x) (log = false) or log_softmax(x) (log = true) over n >= 1 elements;
// y may be x. A row of only -inf gives exp(-inf - 0) / 0 = NaN, as the plugin's
// reference kernel does (it takes the max as 0 when the max is -inf).
void softmax_row(Isa isa, const float* x, float* y, size_t n, bool log = false);

// `rows` rows of n elements, row r at x + r * n, in parallel on `threads`.
void softmax_rows(Isa isa, const Threads& threads, const float* x, float* y, size_t rows,
                  size_t n, bool log = false);

}  // namespace infer::cpu::simd
