// matmul_integer_to_float_fusion: the float tail of a dynamically quantized MatMul (as
// ONNX Runtime's quantize_dynamic and `infer-quantize --mode dynamic` write it) folds
// into the integer product: ai.infer.MatMulIntegerToFloat (sdk/FUSED_OPS.md), whose
// backend can scale and add the bias while the accumulators are still in registers.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, at default-domain opset 13 or newer:
//
//   MatMulInteger(A, B, a_zp, b_zp) -> acc                 (B a 2-D constant [K, N])
//   Cast(acc, to=float32) -> f
//   Mul(a_scale, b_scale) -> s                             (either order)
//   Mul(f, s) -> y  [-> Add(y, bias) -> z]                 (either order)
//
// where a_scale has one element (DynamicQuantizeLinear's y_scale), b_scale is a float32
// constant of one element or [N], bias a float32 constant [N], and acc, f, s and y are
// each read only by the next node of the chain. The chain becomes
//
//   ai.infer.MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp, b_zp[, bias]) -> y (or z)
//
// computing exactly the chain's float32 operations: float(acc) * (a_scale * b_scale[n])
// [+ bias[n]].
class MatMulIntegerToFloatFusion final : public Pass {
 public:
  static constexpr const char* kName = "matmul_integer_to_float_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
