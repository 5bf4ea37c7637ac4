// qdq_gemm_fusion: turns a fully connected layer or matrix product written in QDQ form
// (float Gemm or MatMul between DequantizeLinear nodes, as ONNX Runtime's quantize_static
// writes a classifier or a transformer's projections) into ai.infer's
// MatMulIntegerToFloat, which multiplies the 8-bit data with int32 accumulation and
// scales once.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, at default-domain opset 13 or newer:
//
//   DequantizeLinear(x_q, x_scale, x_zp) -> x          (per tensor)
//   DequantizeLinear(w_q, w_scale, w_zp) -> w          (w_q a 2-D constant)
//   Gemm(x, w[, c]) -> y     (alpha 1, beta 1, transA 0, transB 0 or 1; x 2-D)
//   MatMul(x, w) -> y
//
// where x_q and w_q are uint8 or int8; w_scale (and w_zp) is one element or one per
// output column (the axis of w that is N: 0 with transB, else 1); c, when given, is a
// float32 constant of N elements or the DequantizeLinear of an int32 constant of N
// elements (folded into float32 by constant folding later). The product becomes
//
//   MatMulIntegerToFloat(x_q, w_q', x_scale, w_scale, x_zp, w_zp[, c]) -> y
//
// with w_q' = w_q, or its transpose (a new K x N constant) for transB. The DequantizeLinear
// nodes left without readers go with dead-code elimination; a QuantizeLinear after y
// stays. The difference from the float graph is one rounding: the products of the 8-bit
// grids are summed exactly in int32 and scaled once, instead of summed in float32.
class QdqGemmFusion final : public Pass {
 public:
  static constexpr const char* kName = "qdq_gemm_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
