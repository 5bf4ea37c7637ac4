// gelu_fusion: the elementwise GELU chains exporters write become one ai.infer Gelu node.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, for x of a float type (x itself may have other readers), the erf form
//   a = Add(Erf(Div(x, √2)), 1)        or Erf(Mul(x, 1/√2))
// and the tanh form
//   a = Add(Tanh(Mul(√(2/π), Add(x, Mul(0.044715, x³)))), 1)
//       with x³ = Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)
// followed by one of the three ways torch writes 0.5·x·a:
//   Mul(Mul(x, a), 0.5)   Mul(x, Mul(a, 0.5))   Mul(Mul(x, 0.5), a)
// Every Mul/Add accepts either operand order. Constants are one-element constants of x's
// dtype (no higher rank than x, so they broadcast nothing), equal to the reference value
// within 1e-4 relative; every intermediate has a single use. The final value keeps its
// name and becomes the output of ai.infer Gelu(x; approximate = "none" or "tanh"), named
// after the Erf/Tanh node. Fires only at default-domain opset >= 13.
//
// ONNX Gelu-20 exists, but the pass emits ai.infer Gelu at every opset: one fused op to
// support in backends and decompositions, with the same semantics.
class GeluFusion final : public Pass {
 public:
  static constexpr const char* kName = "gelu_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
