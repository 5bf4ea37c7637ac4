// layer_norm_fusion: the decomposed layer normalization that exporters write (torch below
// opset 17, TF/keras) becomes one LayerNormalization node.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, with x of a float type and a known rank,
//   mean = ReduceMean(x, axes, keepdims=1)      axes: trailing consecutive axes of x
//   d    = Sub(x, mean)                         d read by exactly the two nodes below
//   sq   = Pow(d, 2) or Mul(d, d)
//   var  = ReduceMean(sq, same axes, keepdims=1)
//   std  = Sqrt(Add(var, eps))                  eps: one-element constant
//   n    = Div(d, std)
//   y    = Add(Mul(n, scale), bias)             either operand order; both optional
// where scale and bias are constants of x's dtype whose shape is exactly the normalized
// dims of x (which must be known), and every intermediate but d has a single use. The
// last matched value keeps its name and becomes the output of
// LayerNormalization(x, scale, bias?; axis = first normalized axis, epsilon = eps): ONNX's
// own at opset >= 17, else ai.infer's (sdk/FUSED_OPS.md). Without a scale Mul the node
// gets a constant scale of ones. The fused node takes the first ReduceMean's name.
// Fires only at default-domain opset >= 13. ReduceMean's axes are the attribute below
// opset 18 and the (constant) second input from 18 on.
class LayerNormFusion final : public Pass {
 public:
  static constexpr const char* kName = "layer_norm_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
