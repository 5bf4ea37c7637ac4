#include "input_feed.hpp"

#include "input_generator.hpp"
#include "named_arg.hpp"
#include "npy.hpp"
#include "tensor_convert.hpp"

namespace infer::cli {
namespace {

std::string declared_names(const std::vector<TensorInfo>& declared) {
  std::string names;
  for (const TensorInfo& info : declared) names += (names.empty() ? "" : ", ") + info.name;
  return names.empty() ? "(none)" : names;
}

const InputSource* find_source(const std::vector<InputSource>& sources, const std::string& name) {
  for (const InputSource& source : sources)
    if (source.name == name) return &source;
  return nullptr;
}

// The --shape value to suggest: the declared dims with every unknown one set to 1.
std::string suggested_shape(const TensorInfo& info) {
  std::vector<int64_t> dims = info.dims;
  for (int64_t& dim : dims)
    if (dim < 0) dim = 1;
  return dims_to_arg(dims);
}

std::string declared_shape(const TensorInfo& info) {
  return info.rank_known ? info.shape_string() : std::string("unknown rank");
}

}  // namespace

Result<std::vector<int64_t>> resolve_generated_shape(const TensorInfo& info,
                                                     const std::vector<int64_t>* given,
                                                     const std::string& origin, bool strict,
                                                     std::vector<std::string>* defaulted) {
  if (given != nullptr) {
    if (!info.rank_known) return *given;
    const std::string what = "input '" + info.name + "': the shape " + dims_to_arg(*given) + " from " + origin;
    if (given->size() != info.dims.size()) {
      return invalid_argument(what + " has " + std::to_string(given->size()) + " dims but the model declares " +
                              std::to_string(info.dims.size()) + " (" + declared_shape(info) + ")");
    }
    for (size_t i = 0; i < given->size(); ++i) {
      if (info.dims[i] >= 0 && info.dims[i] != (*given)[i]) {
        return invalid_argument(what + " has " + std::to_string((*given)[i]) + " in dim " + std::to_string(i) +
                                " but the model declares " + std::to_string(info.dims[i]) + " (" +
                                declared_shape(info) + ")");
      }
    }
    return *given;
  }
  if (!info.rank_known) {
    return invalid_argument("input '" + info.name + "' has an unknown rank: give its shape with --shape " + info.name +
                            "=DIMS (e.g. 1x3x224x224)");
  }
  std::vector<int64_t> dims = info.dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) continue;
    const std::string param = i < info.dim_params.size() ? info.dim_params[i] : "";
    if (strict) {
      const std::string dim =
          param.empty() ? "an unknown dim " + std::to_string(i) : "symbolic dim '" + param + "'";
      return invalid_argument("input '" + info.name + "' has " + dim +
                              ": give its shape with --shape " + info.name + "=" +
                              suggested_shape(info));
    }
    dims[i] = 1;
    if (defaulted != nullptr)
      defaulted->push_back(info.name + " dim " + std::to_string(i) +
                           (param.empty() ? "" : " ('" + param + "')"));
  }
  return dims;
}

Result<InputFeed> prepare_inputs(const std::vector<TensorInfo>& declared,
                                 const std::vector<InputSource>& sources, bool strict) {
  for (const InputSource& source : sources) {
    bool known = false;
    for (const TensorInfo& info : declared) known = known || info.name == source.name;
    if (!known) {
      return invalid_argument("input '" + source.name + "' (from " + source.origin +
                              ") is not an input of the model; its inputs are: " + declared_names(declared));
    }
  }
  InputFeed feed;
  std::vector<std::string> defaulted;  // "image dim 0 ('batch')", ...
  std::string suggestion;              // "--shape image=1x1x8x8 --shape ..."
  for (const TensorInfo& info : declared) {
    const InputSource* source = find_source(sources, info.name);
    HostArray array;
    std::string file;
    if (source != nullptr && !source->file.empty()) {
      file = source->file;
      INFER_ASSIGN_OR_RETURN(array, read_npy(file));
      if (source->shape && *source->shape != array.shape) {
        return invalid_argument("input '" + info.name + "': the shape " + dims_to_arg(*source->shape) +
                                " given for it does not match the shape " + shape_to_string(array.shape) + " of '" +
                                file + "'");
      }
    } else {
      const std::vector<int64_t>* given = source != nullptr && source->shape ? &*source->shape : nullptr;
      const size_t before = defaulted.size();
      INFER_ASSIGN_OR_RETURN(
          std::vector<int64_t> shape,
          resolve_generated_shape(info, given, source != nullptr ? source->origin : "", strict,
                                  &defaulted));
      if (defaulted.size() != before)
        suggestion += (suggestion.empty() ? "" : " ") + std::string("--shape ") + info.name + "=" +
                      dims_to_arg(shape);
      INFER_ASSIGN_OR_RETURN(array, generate_input(info.name, info.dtype, shape));
    }
    Result<Tensor> tensor = to_tensor(array);
    if (!tensor.is_ok()) return tensor.status().with_context("input '" + info.name + "'");
    feed.reports.push_back(InputReport{info.name, array.dtype, array.shape, file});
    feed.tensors.push_back(NamedTensor{info.name, std::move(tensor).value()});
  }
  if (!defaulted.empty()) {
    std::string dims;
    for (const std::string& d : defaulted) dims += (dims.empty() ? "" : ", ") + d;
    feed.notice = "symbolic dims set to 1: " + dims + "; choose them with " + suggestion +
                  " (other sizes), or --strict to require them";
  }
  return feed;
}

}  // namespace infer::cli
