// The table of operator kernels: every family's add_*_ops, called once.
#pragma once

#include <string_view>
#include <vector>

#include "op_kernel.hpp"

namespace infer::vk {

// The kernel for (domain, op_type), or nullptr. The ONNX domain may be spelled "" or
// "ai.onnx".
const OpKernel* find_kernel(std::string_view domain, std::string_view op_type);
// Every kernel (for documentation and tests).
const std::vector<OpKernel>& all_kernels();

}  // namespace infer::vk
