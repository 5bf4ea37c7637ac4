// conv_add_fusion: absorbs the Add that follows a convolution, either as more bias or as
// FusedConv's residual input Z.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// For an Add one of whose inputs is the output of a Conv, or of an ai.infer FusedConv
// without an activation, read by nothing but that Add (not a graph output), on a float
// type, at default-domain opset 9 or newer (kMinFusionOpset):
//
// (a) Bias: the other input is a constant broadcastable as one value per output channel:
//     after right-aligning it with the convolution's rank r (= rank of W), every dim is
//     1 except dim 1, which is 1 or M (the output channels, W's dim 0). E.g. [M,1,1] or
//     [1,M,1,1] for a 2-D conv, [M,1] for 1-D, [M,1,1,1] for 3-D, or a scalar. The
//     constant is added to B (B created when absent; an existing B must be a constant).
//     A FusedConv's residual Z is unaffected: the bias sum commutes with it.
// (b) Residual: the other input is not a constant, has the convolution output's dtype and
//     provably its shape (same_shape), and the convolution has no Z yet. The node becomes
//     an ai.infer FusedConv (Conv attributes kept) with Z = that input.
//
// In both cases the convolution takes over the Add's output value and the Add goes. The
// residual input may be produced after the convolution in node order; commit() restores
// topological order. It cannot depend on the convolution's output, since that output's
// only reader is the Add (checked anyway before rewriting).
class ConvAddFusion final : public Pass {
 public:
  static constexpr const char* kName = "conv_add_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
  // A bias Add and then a residual Add can follow one convolution.
  int max_iterations() const override { return 4; }
};

}  // namespace infer::optimizer
