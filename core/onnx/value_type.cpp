// See value_type.hpp.
#include "onnx/value_type.hpp"

#include <string>
#include <vector>

namespace infer::onnx_io {

Result<DataType> convert_dtype(int32_t raw, const std::string& tensor_name) {
  if (raw == 0)
    return invalid_argument("tensor '" + tensor_name + "' has no element type (UNDEFINED)");
  if (raw == static_cast<int32_t>(DataType::kString))
    return unsupported("tensor '" + tensor_name +
                       "' has dtype string, which infer does not support");
  if (!dtype_is_valid(raw))
    return unsupported("tensor '" + tensor_name + "' has dtype " + std::to_string(raw) +
                       ", which infer does not know (it knows ONNX types 1 to 22)");
  return static_cast<DataType>(raw);
}

Result<ValueType> convert_value_type(const onnx::TypeProto& type, const std::string& value_name) {
  ValueType out;
  switch (type.value_case()) {
    case onnx::TypeProto::VALUE_NOT_SET:
      return out;
    case onnx::TypeProto::kTensorType:
      break;
    case onnx::TypeProto::kSparseTensorType:
      return unsupported("value '" + value_name +
                         "' is a sparse tensor, which infer does not support");
    case onnx::TypeProto::kSequenceType:
      return unsupported("value '" + value_name +
                         "' has type sequence, which infer does not support");
    case onnx::TypeProto::kMapType:
      return unsupported("value '" + value_name + "' has type map, which infer does not support");
    case onnx::TypeProto::kOptionalType:
      return unsupported("value '" + value_name +
                         "' has type optional, which infer does not support");
    default:
      return unsupported("value '" + value_name + "' has a non-tensor type (TypeProto case " +
                         std::to_string(static_cast<int>(type.value_case())) +
                         "), which infer does not support");
  }
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  if (tensor.elem_type() != 0) {
    INFER_ASSIGN_OR_RETURN(out.dtype, convert_dtype(tensor.elem_type(), value_name));
  }
  if (tensor.has_shape()) {
    std::vector<ir::Dim> dims;
    dims.reserve(static_cast<size_t>(tensor.shape().dim_size()));
    for (const auto& d : tensor.shape().dim()) {
      // A negative dim_value is not valid ONNX; it carries no size, so it reads as unknown
      // rather than failing a model that is otherwise fine.
      if (d.has_dim_value() && d.dim_value() >= 0)
        dims.push_back(ir::Dim::known(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty())
        dims.push_back(ir::Dim::symbol(d.dim_param()));
      else
        dims.push_back(ir::Dim{});
    }
    out.shape.dims = std::move(dims);
  }
  return out;
}

ValueType merge_value_types(const ValueType& a, const ValueType& b) {
  ValueType out = a;
  if (out.dtype == DataType::kUndefined) out.dtype = b.dtype;
  if (!a.shape.rank_known()) {
    out.shape = b.shape;
  } else if (b.shape.rank_known() && a.shape.rank() == b.shape.rank()) {
    for (size_t i = 0; i < a.shape.rank(); ++i) {
      ir::Dim& d = (*out.shape.dims)[i];
      const ir::Dim& other = (*b.shape.dims)[i];
      if (d.is_known()) continue;
      if (other.is_known() || (d.param.empty() && !other.param.empty())) d = other;
    }
  }
  return out;
}

}  // namespace infer::onnx_io
