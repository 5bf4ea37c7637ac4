#include "runtime/signature.hpp"

#include <string>

namespace infer::runtime {

TensorInfo tensor_info_of(const ir::Value& value) {
  TensorInfo info;
  info.name = value.name;
  info.dtype = value.dtype;
  info.rank_known = value.shape.rank_known();
  if (info.rank_known) {
    for (const ir::Dim& d : *value.shape.dims) {
      info.dims.push_back(d.is_known() ? d.value : -1);
      info.dim_params.push_back(d.is_known() ? std::string() : d.param);
    }
  }
  return info;
}

Result<std::vector<TensorInfo>> signature_of(const ir::Graph& graph,
                                             const std::vector<ir::ValueId>& values,
                                             const char* kind) {
  std::vector<TensorInfo> out;
  for (ir::ValueId id : values) {
    if (id >= graph.value_count())
      return internal_error(std::string("model ") + kind + " #" + std::to_string(id) +
                            " does not exist");
    const ir::Value& v = graph.value(id);
    if (v.dtype == DataType::kUndefined || !dtype_is_valid(static_cast<int32_t>(v.dtype)))
      return invalid_argument(std::string("model ") + kind + " '" + v.name +
                              "' has no known dtype");
    if (v.dtype == DataType::kString)
      return invalid_argument(std::string("model ") + kind + " '" + v.name +
                              "' has dtype string, which infer does not support");
    out.push_back(tensor_info_of(v));
  }
  return out;
}

}  // namespace infer::runtime
