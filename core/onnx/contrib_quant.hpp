// ONNX Runtime's QOperator format: quantize_static(quant_format=QOperator) writes its
// quantized elementwise, pooling, concatenation, softmax and Gemm nodes as contrib
// operators of the com.microsoft domain (QLinearAdd, QLinearSigmoid, QGemm, ...), beside
// ONNX's QLinearConv and QLinearMatMul. The loader expands each into the QDQ form it
// stands for (DequantizeLinear of each input, the float operator, QuantizeLinear), before
// ONNX's checker and shape inference see the graph: the graph then holds standard
// operators only, runs at every optimization level, and from level 2 the QDQ passes turn
// it back into 8-bit kernels (ai.infer QLinearAdd, QLinearLookup, MatMulIntegerToFloat).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"

namespace infer::onnx_io {

// Rewrites, in `graph` and its bodies, every com.microsoft node of:
//   QLinearAdd, QLinearMul          (A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?)
//   QLinearSigmoid, QLinearLeakyRelu (X, X_scale, X_zp?, Y_scale, Y_zp?), alpha
//   QLinearSoftmax                   (X, X_scale, X_zp?, Y_scale, Y_zp), axis, opset
//   QLinearGlobalAveragePool         (X, x_scale, x_zp, y_scale, y_zp), channels_last 0
//   QLinearAveragePool               (X, x_scale, x_zp?, y_scale, y_zp?), AveragePool's
//                                    attributes, channels_last 0
//   QLinearConcat                    (Y_scale, Y_zp, then X_i, X_i_scale, X_i_zp), axis
//   QGemm                            (A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?,
//                                    y_zp?), alpha, transA, transB; C int32 with scale
//                                    a_scale * b_scale; no y_scale: float32 output
// into DequantizeLinear / the float operator / QuantizeLinear, keeping its outputs' names.
// `default_opset` is the model's ONNX opset (the form of Softmax and ReduceMean chosen).
// Errors name the node: a channels_last layout, a Softmax whose axis semantics the model's
// opset cannot express, a missing required input.
Status expand_contrib_quant_ops(::onnx::GraphProto& graph, int64_t default_opset);

}  // namespace infer::onnx_io
