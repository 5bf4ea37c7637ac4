// hardswish_fusion: the elementwise HardSwish chains exporters write (PaddlePaddle's
// x * Clip(x + 3, 0, 6) / 6, torch's x * HardSigmoid(x) below opset 14) become one
// HardSwish: the ONNX operator from opset 14, below it the activation of the Conv, Gemm
// or MatMul producing x.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, for x of a float type,
//   c = Clip(Add(x, 3), 0, 6)          (Clip's bounds as inputs or, before opset 11,
//                                       attributes; the Add in either operand order)
//   y = Div(Mul(x, c), 6)  or  Mul(Mul(x, c), 1/6)  or  Mul(x, Div(c, 6))  or  Mul(x, Mul(c, 1/6))
// and y = Mul(x, HardSigmoid(x; alpha = 1/6, beta = 0.5)), every Mul in either operand
// order. Constants are one-element constants of x's dtype no higher in rank than x, equal
// to the reference within 1e-4 relative (1e-3 for float16, 8e-3 for bfloat16); every
// intermediate has a single use. y keeps its name.
//
// From opset 14 the last node becomes HardSwish(x) (activation_fusion may then fold it
// into x's producer). Below 14 there is no HardSwish operator: the chain folds into x's
// producer when it is a Conv, Gemm or MatMul (or a fused one without an activation) whose
// output only the chain reads, as that operator's HardSwish activation; else it stays.
// Fires from kMinFusionOpset (9) on.
class HardSwishFusion final : public Pass {
 public:
  static constexpr const char* kName = "hardswish_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
