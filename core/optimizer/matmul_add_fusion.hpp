// matmul_add_fusion: MatMul followed by a bias Add becomes one ai.infer FusedMatMul.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Add(MatMul(A, B), bias) (either Add operand order) becomes FusedMatMul(A, B, bias)
// named after the MatMul and writing the Add's output value, when: the default-domain
// opset is 9 or newer (kMinFusionOpset); the MatMul (or a FusedMatMul with neither bias nor activation)
// output is read only by that Add and is not a graph output; its dtype is a float type
// and the Add's output has the same dtype; B has a known rank of at least 2 and a known
// last dim N; A's rank is known, so the product's rank R is; `bias` is a constant of the
// same dtype whose dims are [N] or [1, ..., 1, N] with at most R dims, so that the Add
// neither broadcasts the product to a larger shape nor adds anything but a row bias. A
// bias of rank > 1 is reshaped into a new 1-D constant.
class MatMulAddFusion final : public Pass {
 public:
  static constexpr const char* kName = "matmul_add_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
