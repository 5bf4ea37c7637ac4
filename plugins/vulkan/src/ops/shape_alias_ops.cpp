// The alias operators of the Vulkan plugin: Reshape, Flatten, Squeeze, Unsqueeze and
// Identity. Their output is input 0's bytes under another shape, so they record no
// dispatch: the plan marks the output as an alias of input 0 and the runtime reuses (or
// copies) the input's bytes. They work for every dtype but string.
#include <cstring>
#include <string>
#include <vector>

#include "shape_util.hpp"

namespace infer::vk::shape_ops {
namespace {

OpPlan alias_plan(infer_dtype dtype, Dims dims) {
  OpPlan p;
  TensorDesc t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  p.outputs.push_back(std::move(t));
  p.alias_of_input = {0};
  return p;
}

infer_support reshape_check(const infer_node_view& node, std::string* reason) {
  if (!alias_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (node.opset < 5) return INFER_SUPPORT_YES;  // the shape is an attribute
  if (!const_ints_ok(node, 1, "shape", true, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool reshape_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  Dims shape;
  if (node.opset < 5) {
    shape = node.attr_ints("shape", {});
  } else if (!input_ints(in, 1, &shape)) {
    return fail(node, error, "shape input must be a constant int64 tensor");
  }
  const bool allowzero = node.opset >= 14 && node.attr_int("allowzero", 0) != 0;
  Dims dims(shape.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s == 0 && !allowzero) {
      if (i >= x.dims.size())
        return fail(node, error,
                    "shape " + dims_text(shape) + " copies dim " + std::to_string(i) +
                        " of the input " + dims_text(x.dims) + ", which has no such dim");
      dims[i] = x.dims[i];
    } else if (s == -1) {
      if (infer_at >= 0) return fail(node, error, "shape " + dims_text(shape) + " has two -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    } else if (s < 0) {
      return fail(node, error, "shape " + dims_text(shape) + " has a negative value");
    } else {
      dims[i] = s;
    }
    known *= dims[i];
  }
  const int64_t total = x.elements();
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return fail(node, error, "cannot reshape " + dims_text(x.dims) + " to " + dims_text(shape));
    dims[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    return fail(node, error,
                "cannot reshape " + dims_text(x.dims) + " (" + std::to_string(total) +
                    " elements) to " + dims_text(shape));
  }
  *out = alias_plan(x.dtype, std::move(dims));
  return true;
}

infer_support flatten_check(const infer_node_view& node, std::string* reason) {
  return alias_dtype_ok(node, reason) ? INFER_SUPPORT_YES : INFER_SUPPORT_NO;
}

bool flatten_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank)
    return fail(node, error,
                "axis " + std::to_string(axis) + " is out of range for input " + dims_text(x.dims));
  if (axis < 0) axis += rank;
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? a : b) *= x.dims[static_cast<size_t>(d)];
  *out = alias_plan(x.dtype, {a, b});
  return true;
}

bool squeeze_axes_from_input(const infer_node_view& node) { return node.opset >= 13; }

infer_support squeeze_check(const infer_node_view& node, std::string* reason) {
  if (!alias_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (!squeeze_axes_from_input(node)) return INFER_SUPPORT_YES;
  const bool unsqueeze = std::strcmp(node.op_type, "Unsqueeze") == 0;
  if (!const_ints_ok(node, 1, "axes", unsqueeze, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool squeeze_axes(const NodeInfo& node, std::span<const TensorDesc> in, Dims* axes,
                  std::string* error) {
  if (node.opset < 13) {
    *axes = node.attr_ints("axes", {});
    return true;
  }
  axes->clear();
  if (in.size() < 2 || !in[1].present) return true;
  if (!desc_ints(in[1], axes)) return fail(node, error, "axes input must be a constant");
  return true;
}

bool squeeze_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  Dims axes;
  if (!squeeze_axes(node, in, &axes, error)) return false;
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<char> drop(x.dims.size(), 0);
  if (axes.empty()) {
    for (size_t d = 0; d < x.dims.size(); ++d) drop[d] = x.dims[d] == 1;
  }
  for (int64_t a : axes) {
    int64_t ax;
    if (!norm_axis(a, rank, &ax))
      return fail(node, error,
                  "axis " + std::to_string(a) + " is out of range for input " + dims_text(x.dims));
    if (x.dims[static_cast<size_t>(ax)] != 1)
      return fail(node, error,
                  "cannot squeeze dim " + std::to_string(ax) + " of " + dims_text(x.dims) +
                      ": its size is not 1");
    drop[static_cast<size_t>(ax)] = 1;
  }
  Dims dims;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (!drop[d]) dims.push_back(x.dims[d]);
  *out = alias_plan(x.dtype, std::move(dims));
  return true;
}

bool unsqueeze_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& x = in[0];
  Dims axes;
  if (!squeeze_axes(node, in, &axes, error)) return false;
  if (axes.empty()) return fail(node, error, "axes is empty");
  const int64_t out_rank = static_cast<int64_t>(x.dims.size() + axes.size());
  std::vector<char> added(static_cast<size_t>(out_rank), 0);
  for (int64_t a : axes) {
    int64_t ax;
    if (!norm_axis(a, out_rank, &ax))
      return fail(node, error,
                  "axis " + std::to_string(a) + " is out of range for output rank " +
                      std::to_string(out_rank));
    if (added[static_cast<size_t>(ax)])
      return fail(node, error, "axes " + dims_text(axes) + " repeat axis " + std::to_string(ax));
    added[static_cast<size_t>(ax)] = 1;
  }
  Dims dims;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    dims.push_back(added[static_cast<size_t>(d)] ? 1 : x.dims[next++]);
  *out = alias_plan(x.dtype, std::move(dims));
  return true;
}

infer_support identity_check(const infer_node_view& node, std::string* reason) {
  return alias_dtype_ok(node, reason) ? INFER_SUPPORT_YES : INFER_SUPPORT_NO;
}

bool identity_plan(const NodeInfo&, std::span<const TensorDesc> in, OpPlan* out, std::string*) {
  *out = alias_plan(in[0].dtype, in[0].dims);
  return true;
}

}  // namespace

void add_alias_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "Reshape", reshape_check, reshape_plan, nullptr});
  table.push_back({"", "Flatten", flatten_check, flatten_plan, nullptr});
  table.push_back({"", "Squeeze", squeeze_check, squeeze_plan, nullptr});
  table.push_back({"", "Unsqueeze", squeeze_check, unsqueeze_plan, nullptr});
  table.push_back({"", "Identity", identity_check, identity_plan, nullptr});
}

}  // namespace infer::vk::shape_ops
