// activation_fusion: an activation after a Conv, Gemm or MatMul (or their ai.infer fused
// forms) becomes the fused operator's `activation` attribute.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Anchors: Conv -> FusedConv, Gemm -> FusedGemm (alpha, beta, transA, transB kept),
// MatMul -> FusedMatMul (no bias), and FusedConv / FusedGemm / FusedMatMul that carry no
// activation yet (a FusedConv with a residual Z included: the activation applies after Z
// is added, as the Add + Relu it replaces did). The anchor keeps its name and takes over
// the activation's output value.
//
// Activations (sdk/FUSED_OPS.md): Relu, Tanh, Sigmoid, HardSwish, LeakyRelu (alpha,
// default 0.01), HardSigmoid (alpha 0.2, beta 0.5 by default), Clip whose min/max inputs
// are constant scalars or omitted (then -inf / +inf), and Gelu (ai.infer, or ONNX's
// opset-20 operator): approximate "none" -> "Gelu", "tanh" -> "GeluTanh".
//
// Matched only at default-domain opset 9 or newer (kMinFusionOpset; Clip in its opset 6-10
// attribute form too), on float types, when the anchor's output is read by the activation
// alone (not a graph output, not captured) and the activation's output has the same dtype.
class ActivationFusion final : public Pass {
 public:
  static constexpr const char* kName = "activation_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
