// qdq_conv_fusion: turns a convolution written in QDQ form (float Conv between
// DequantizeLinear and QuantizeLinear nodes, as ONNX Runtime's quantize_static writes
// it) into a QLinearConv, which runs on 8-bit data with int32 accumulation.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, at default-domain opset 13 or newer:
//
//   DequantizeLinear(x_q, x_scale, x_zp) -> x
//   DequantizeLinear(w_q, w_scale, w_zp) -> w          (w_q a constant)
//   [bias: a float32 constant, or DequantizeLinear(int32 constant, ...)]
//   Conv(x, w[, bias]) -> y  [-> Relu -> r]  -> QuantizeLinear(., y_scale, y_zp) -> y_q
//
// where x_q and w_q are uint8 or int8; x_scale, y_scale and the zero points of x and y
// are one-element constants; w_scale (and w_zp) is one element or one per output channel
// (1-D, axis 0); the Conv output (and the Relu's) is float32 and read only by the next node
// of the chain; and a Relu is taken only when y_zp is the lowest value of its type (uint8
// 0, int8 -128), so that saturation applies it exactly. The Conv becomes
//
//   QLinearConv(x_q, x_scale, x_zp, w_q, w_scale, w_zp, y_scale, y_zp, bias_q) -> y_q
//
// with the Conv's attributes and bias_q[m] = round(bias[m] / (x_scale * w_scale[m])) in
// int32 (exact for a bias ONNX Runtime quantized with that scale). The Relu and the
// QuantizeLinear go; a DequantizeLinear left without readers is removed by dead-code
// elimination. The difference from the float graph is the quantizer's own: the float
// Conv's result rounded once to y's grid, instead of float weights dequantized ahead.
//
// It runs before constant folding, which would otherwise turn DequantizeLinear(w_q) into
// float weights and hide the pattern.
class QdqConvFusion final : public Pass {
 public:
  static constexpr const char* kName = "qdq_conv_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
