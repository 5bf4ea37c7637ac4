// qdq_passthrough: runs data-movement operators directly on 8-bit data where a QDQ model
// wraps them in DequantizeLinear and QuantizeLinear with the same parameters.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, at default-domain opset 13 or newer:
//
//   DequantizeLinear(x_q, s, z) -> x  ->  Op(x, ...) -> y  ->  QuantizeLinear(y, s, z) -> y_q
//
// where Op is MaxPool (without its Indices output), Reshape, Transpose, Flatten, Squeeze,
// Unsqueeze, Identity, Slice, DepthToSpace or SpaceToDepth, or a Concat whose every input
// comes from such a DequantizeLinear; every DequantizeLinear and the QuantizeLinear have
// the same per-tensor scale, zero point and 8-bit type; and y is read only by the
// QuantizeLinear. Op then reads x_q and writes y_q itself; the QuantizeLinear goes, and
// a DequantizeLinear left without readers is removed by dead-code elimination.
//
// Exact: each Op only selects or moves elements, and QuantizeLinear(DequantizeLinear(v))
// with the same parameters is v for every 8-bit v (|v - z| <= 255 is scaled and divided
// back by the same float scale, far from a rounding tie).
class QdqPassthrough final : public Pass {
 public:
  static constexpr const char* kName = "qdq_passthrough";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
