// qdq_binary_fusion: an Add or Mul between DequantizeLinear and QuantizeLinear nodes (a
// residual connection of a QDQ model) becomes one ai.infer QLinearAdd / QLinearMul on
// 8-bit data (sdk/FUSED_OPS.md).
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, at default-domain opset 13 or newer:
//
//   DequantizeLinear(a_q, a_scale, a_zp) -> a
//   DequantizeLinear(b_q, b_scale, b_zp) -> b
//   Add(a, b) -> c  (or Mul)  ->  QuantizeLinear(c, c_scale, c_zp) -> c_q
//
// where every scale and zero point is a one-element constant, a_q, b_q and c_q have the
// same 8-bit type, and c is float32 (or not yet typed) and read only by the
// QuantizeLinear. The Add becomes
//
//   ai.infer.QLinearAdd(a_q, a_scale, a_zp, b_q, b_scale, b_zp, c_scale, c_zp) -> c_q
//
// (QLinearMul for Mul), with numpy broadcasting as before. Its definition is the chain
// it replaces, evaluated in float32, so a backend's result is bit-identical to the
// unfused graph's. The QuantizeLinear goes; a DequantizeLinear left without readers is
// removed by dead-code elimination.
class QdqBinaryFusion final : public Pass {
 public:
  static constexpr const char* kName = "qdq_binary_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
