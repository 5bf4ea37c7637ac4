// qdq_lookup_fusion: an elementwise float function between DequantizeLinear and
// QuantizeLinear (a Relu, Sigmoid, Clip, ... of a QDQ model) becomes a 256-entry table
// lookup on 8-bit data: ai.infer.QLinearLookup (sdk/FUSED_OPS.md).
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, at default-domain opset 13 or newer:
//
//   DequantizeLinear(x_q, x_scale, x_zp) -> x  ->  F(x, consts...) -> y
//     ->  QuantizeLinear(y, y_scale, y_zp) -> y_q
//
// where F is a default-domain elementwise function of one tensor (Relu, LeakyRelu, Clip,
// Sigmoid, Tanh, HardSigmoid, HardSwish, Elu, Selu, Celu, Softplus, Softsign, Gelu, Erf,
// Abs, Neg, Exp, Log, Sqrt, Reciprocal, Sin, Cos, Floor, Ceil, Round, Sign, Identity,
// ThresholdedRelu, Shrink, Mish) whose other inputs (Clip's bounds) are constants; both
// DequantizeLinear and QuantizeLinear are per tensor with 8-bit types; y is float32 (or
// not yet typed) and read only by the QuantizeLinear. The chain is a function of x_q's
// 256 possible values, so F becomes
//
//   ai.infer.QLinearLookup(x_q, table) -> y_q
//
// with table[i] = the chain evaluated on the i-th value of x_q's type (0..255 for uint8,
// -128..127 for int8), computed by the context's evaluator on the backend's own kernels:
// the lookup is bit-identical to the chain. Without an evaluator the pass does nothing.
class QdqLookupFusion final : public Pass {
 public:
  static constexpr const char* kName = "qdq_lookup_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
