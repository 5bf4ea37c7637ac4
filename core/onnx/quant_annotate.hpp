// Quantization descriptors for values that DequantizeLinear reads.
#pragma once

#include "ir/graph.hpp"

namespace infer::onnx_io {

// For each DequantizeLinear (default domain) whose scale (input 1) is constant - an
// initializer or the output of a Constant node - sets ir::Value::quant on its input 0:
//   scale of rank 0 -> per-tensor;
//   scale of rank 1 -> per-axis along `axis` (default 1, made non-negative with the
//                      input's rank when that is known);
//   scale of the input's rank with a `block_size` attribute > 0 -> block-wise
//                      (opset 21) along `axis`;
// with storage = the input's dtype (else the zero point's, else uint8, ONNX's default),
// scale and zero_point (kNoValue when absent) ids. A value that several
// DequantizeLinear nodes read with different parameters gets no descriptor, since none
// would be true for all its readers. Bodies are annotated too.
void annotate_quantization(ir::Graph& graph);

}  // namespace infer::onnx_io
