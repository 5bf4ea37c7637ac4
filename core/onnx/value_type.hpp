// ONNX element types and TypeProtos -> infer's DataType and ir::Shape.
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

#include "infer/dtype.hpp"
#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::onnx_io {

// A TensorProto.DataType number -> DataType. ONNX's numbering is infer's, so this only
// validates: string is Unsupported ("tensor 'x' has dtype string, which infer does not
// support"), numbers past the newest type infer knows are Unsupported, 0 is
// InvalidArgument. The 4-bit types (21, 22) are accepted although onnx 1.12's enum lacks
// them, since the raw numbers are what the file holds.
Result<DataType> convert_dtype(int32_t raw, const std::string& tensor_name);

struct ValueType {
  DataType dtype = DataType::kUndefined;  // undefined when the file does not say
  ir::Shape shape;                        // rank unknown when the file does not say
};

// The type of a value (graph input/output, value_info). Only tensors are supported:
// sequences, maps, optionals, opaque and sparse tensors are Unsupported naming the value.
// A missing type or element type is not an error here (callers that need one check).
Result<ValueType> convert_value_type(const onnx::TypeProto& type, const std::string& value_name);

// Combines two descriptions of one value: the element type of `a` unless it is
// undefined; dims of equal-rank shapes are merged dim by dim (a known size beats a
// symbol, which beats unknown); with different ranks `a` wins, and an unknown rank
// loses to a known one.
ValueType merge_value_types(const ValueType& a, const ValueType& b);

}  // namespace infer::onnx_io
