// TensorProto -> ir::TensorData: every numeric ONNX dtype, from raw_data, from the typed
// fields, or from external data.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "onnx/external_data.hpp"

namespace infer::onnx_io {

// Converts `tensor`, naming it `tensor_name` in messages. Large raw_data is moved out of
// the proto instead of copied (the proto is left without it), which is why `tensor` is
// not const. The bytes follow ONNX's raw_data layout: little-endian, row-major, 4-bit
// types packed two per byte with the first element in the low nibble, bool as one byte.
//
// Errors: string tensors and segmented tensors are Unsupported; a size that does not
// match the dtype and dims, several data fields, values in a field the dtype does not
// use, or a negative dim are InvalidArgument.
Result<ir::TensorDataPtr> convert_tensor(onnx::TensorProto& tensor, const std::string& tensor_name,
                                         ExternalData& external);

}  // namespace infer::onnx_io
