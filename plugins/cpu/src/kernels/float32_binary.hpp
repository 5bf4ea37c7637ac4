// float32 elementwise binary arithmetic with numpy broadcasting on the SIMD library's
// vector loops (elementwise_binary.cpp): Add/Sub/Mul/Div, and Max/Min for the variadic
// kernels (math_variadic.cpp).
#pragma once

#include "../kernel.hpp"
#include "math_common.hpp"
#include "simd/vec.hpp"

namespace infer::cpu::kernels {

// y = a op b over the broadcast of A and B: into out.into (which may be A or B itself),
// or a new output 0 of out.dims (or of the broadcast shape).
Status float32_binary(KernelContext& ctx, const Tensor& A, const Tensor& B, simd::BinaryOp op,
                      const math::OutSpec& out);

}  // namespace infer::cpu::kernels
