// conv_bn_folding: folds an inference-mode BatchNormalization into the Conv feeding it.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Conv(X, W, B?) -> BatchNormalization(scale, bnB, mean, var, epsilon) becomes one Conv
// with W'[m,...] = W[m,...]·s[m] and B'[m] = (B[m] - mean[m])·s[m] + bnB[m], where
// s = scale / sqrt(var + epsilon), computed in double and stored in W's dtype. The Conv
// takes over the BatchNormalization's output value (name included).
//
// Matched only when: the default-domain opset is 9 or newer (kMinFusionOpset); the producer is a
// Conv (or an ai.infer FusedConv with neither activation nor residual Z, whose bias folds the same
// way); W, B (when present) and the four BatchNormalization parameters are constants of a
// float type with one value per output channel; the Conv's output is read only by the
// BatchNormalization (not a graph output, no second reader); the BatchNormalization is in
// inference form (training_mode 0 or absent, any extra training outputs unused).
// New weight and bias constants are added, so a weight shared with another node is left
// as it was.
//
// Likewise Mul(Conv(X, W, B?), c) in either operand order, c a constant of the Conv's
// float type with one value per output channel (or one value; the shapes conv_add_fusion
// takes as a bias): W'[m,...] = W[m,...]·c[m], B'[m] = B[m]·c[m]. A BatchNormalization
// exported as Mul and Add then ends as the Conv's bias (conv_add_fusion).
class ConvBnFolding final : public Pass {
 public:
  static constexpr const char* kName = "conv_bn_folding";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
