// Copies a strided view of a tensor into a contiguous output: the workhorse of
// Transpose, Slice and Expand. out[i_0, ..., i_n] = in[base + sum_d i_d * in_strides[d]],
// with strides in elements (0 repeats an element, negative steps backwards).
#pragma once

#include "../kernel.hpp"

namespace infer::cpu {

void strided_copy(const KernelContext& ctx, const void* in, int64_t base, const Dims& out_dims,
                  const Dims& in_strides, size_t element_size, void* out);

}  // namespace infer::cpu
