#include "runtime/input_validation.hpp"

#include <map>
#include <string>

namespace infer::runtime {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dims_word(size_t n) { return std::to_string(n) + (n == 1 ? " dim" : " dims"); }

struct Binding {
  int64_t value;
  std::string input;
  size_t dim;
};

Status check_one(const TensorInfo& info, const Tensor& t, std::map<std::string, Binding>& symbols) {
  const std::string where = "input '" + info.name + "'";
  if (t.dtype() != info.dtype)
    return invalid_argument(where + ": expected dtype " + std::string(dtype_name(info.dtype)) +
                            ", got " + std::string(dtype_name(t.dtype())));
  const auto& shape = t.shape();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return invalid_argument(where + ": dim " + std::to_string(i) + " is " +
                              std::to_string(shape[i]) + " (dims must not be negative)");
  if (t.size_bytes() != storage_bytes(t.dtype(), t.element_count()))
    return invalid_argument(where + ": the tensor holds " + std::to_string(t.size_bytes()) +
                            " bytes, " + std::string(dtype_name(t.dtype())) + " " +
                            shape_text(shape) + " needs " +
                            std::to_string(storage_bytes(t.dtype(), t.element_count())));
  if (!info.rank_known) return Status::ok();
  if (shape.size() != info.dims.size())
    return invalid_argument(where + ": expected " + dims_word(info.dims.size()) + " " +
                            info.shape_string() + ", got " + dims_word(shape.size()) + " " +
                            shape_text(shape));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (info.dims[i] >= 0) {
      if (shape[i] != info.dims[i])
        return invalid_argument(where + ": dim " + std::to_string(i) + " is " +
                                std::to_string(info.dims[i]) + " in the model, got " +
                                std::to_string(shape[i]));
      continue;
    }
    const std::string symbol = i < info.dim_params.size() ? info.dim_params[i] : "";
    if (symbol.empty()) continue;  // an unnamed unknown dim takes any size
    auto [it, inserted] = symbols.emplace(symbol, Binding{shape[i], info.name, i});
    if (!inserted && it->second.value != shape[i])
      return invalid_argument(where + ": dim " + std::to_string(i) + " ('" + symbol + "') is " +
                              std::to_string(shape[i]) + ", but '" + symbol + "' is " +
                              std::to_string(it->second.value) + " in input '" + it->second.input +
                              "' dim " + std::to_string(it->second.dim));
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<const Tensor*>> validate_inputs(const std::vector<TensorInfo>& declared,
                                                   const std::vector<NamedTensor>& given) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < declared.size(); ++i) index.emplace(declared[i].name, i);

  std::vector<const Tensor*> ordered(declared.size(), nullptr);
  for (const NamedTensor& nt : given) {
    auto it = index.find(nt.name);
    if (it == index.end()) {
      std::string names;
      for (const TensorInfo& d : declared) names += (names.empty() ? "" : ", ") + d.name;
      return invalid_argument("unknown input '" + nt.name +
                              "' (model inputs: " + (names.empty() ? "none" : names) + ")");
    }
    if (ordered[it->second] != nullptr)
      return invalid_argument("input '" + nt.name + "' is given twice");
    ordered[it->second] = &nt.tensor;
  }
  for (size_t i = 0; i < declared.size(); ++i)
    if (ordered[i] == nullptr)
      return invalid_argument("missing input '" + declared[i].name + "' (" +
                              std::string(dtype_name(declared[i].dtype)) + " " +
                              declared[i].shape_string() + ")");

  std::map<std::string, Binding> symbols;
  for (size_t i = 0; i < declared.size(); ++i)
    INFER_RETURN_IF_ERROR(check_one(declared[i], *ordered[i], symbols));
  return ordered;
}

}  // namespace infer::runtime
