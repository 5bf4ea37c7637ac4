// Data-movement operators of the Vulkan plugin: Transpose, Concat, Slice, Expand, Tile
// (one strided-copy shader, shape_copy.comp), Gather (gather.comp) and Pad
// (shape_pad.comp). The alias operators (Reshape, Flatten, Squeeze, Unsqueeze, Identity)
// are in shape_alias_ops.cpp, the helpers all of them share in shape_util.hpp.
//
// Every copy moves whole elements as 32-bit words (one word for float32/int32/uint32, two
// for int64/uint64/float64), so the shaders need neither 64-bit integers nor 8- or
// 16-bit storage; other dtypes are refused at partition time. Shape-like inputs (Slice's
// starts/ends/axes/steps, Expand's shape, Tile's repeats, Pad's pads and axes) must be
// constants, since the plan is made on the host before the device runs; a node whose
// shape input is computed at run time is left to another backend.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "shape_util.hpp"

namespace infer::vk {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------
// Transpose.

infer_support transpose_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  const infer_value_view* x = node_input(node, 0);
  if (x->rank > static_cast<int64_t>(kMaxCopyRank))
    return no(reason, "rank " + std::to_string(x->rank) + " is above 6");
  return INFER_SUPPORT_YES;
}

bool transpose_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& x = in[0];
  const size_t rank = x.dims.size();
  Dims perm = node.attr_ints("perm", {});
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank)
    return fail(node, error,
                "perm " + dims_text(perm) + " does not match input " + dims_text(x.dims));
  std::vector<char> seen(rank, 0);
  for (int64_t& p : perm) {
    int64_t a;
    if (!norm_axis(p, static_cast<int64_t>(rank), &a) || seen[static_cast<size_t>(a)])
      return fail(node, error, "perm " + dims_text(perm) + " is not a permutation");
    seen[static_cast<size_t>(a)] = 1;
    p = a;
  }
  Dims dims(rank);
  for (size_t i = 0; i < rank; ++i) dims[i] = x.dims[static_cast<size_t>(perm[i])];
  if (!declare_output(node, x, TensorDesc{x.dtype, dims}, SizeCheck::kInput, out, error))
    return false;
  const Dims in_str = strides_of(x.dims), out_str = strides_of(dims);
  StridedCopy c;
  for (size_t i = 0; i < rank; ++i)
    c.add(dims[i], in_str[static_cast<size_t>(perm[i])], out_str[i]);
  return add_copy(node, c, copy_words(x.dtype), Operand::input(0), Operand::output(0), out, error);
}

// ---------------------------------------------------------------------------------
// Concat.

infer_support concat_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (node.opset >= 4 && node_attr(node, "axis") == nullptr)
    return no(reason, "attribute axis is required");
  for (size_t i = 0; i < node.num_inputs; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v == nullptr) return no(reason, "input " + std::to_string(i) + " is missing");
    if (v->dtype != node_input(node, 0)->dtype) return no(reason, "inputs have different dtypes");
  }
  return INFER_SUPPORT_YES;
}

bool concat_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x0 = in[0];
  int64_t axis;
  if (!axis_attr(node, 1, x0, &axis, error)) return false;
  const size_t ax = static_cast<size_t>(axis);
  Dims dims = x0.dims;
  dims[ax] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const TensorDesc& t = in[i];
    bool same = t.dims.size() == x0.dims.size();
    for (size_t d = 0; same && d < t.dims.size(); ++d) same = d == ax || t.dims[d] == x0.dims[d];
    if (!same)
      return fail(node, error,
                  "input " + std::to_string(i) + " " + dims_text(t.dims) +
                      " does not match input 0 " + dims_text(x0.dims) + " outside axis " +
                      std::to_string(axis));
    dims[ax] += t.dims[ax];
  }
  if (!declare_output(node, x0, TensorDesc{x0.dtype, dims}, SizeCheck::kOutput, out, error))
    return false;
  const uint32_t words = copy_words(x0.dtype);
  const Dims out_str = strides_of(dims);
  int64_t offset = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Dims in_str = strides_of(in[i].dims);
    StridedCopy c;
    c.dst_base = offset * out_str[ax];
    for (size_t d = 0; d < dims.size(); ++d) c.add(in[i].dims[d], in_str[d], out_str[d]);
    if (!add_copy(node, c, words, Operand::input(static_cast<uint32_t>(i)), Operand::output(0), out,
                  error))
      return false;
    offset += in[i].dims[ax];
  }
  return true;
}

// ---------------------------------------------------------------------------------
// Slice.

infer_support slice_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (node.opset < 10) return INFER_SUPPORT_YES;
  if (!const_ints_ok(node, 1, "starts", true, reason) ||
      !const_ints_ok(node, 2, "ends", true, reason) ||
      !const_ints_ok(node, 3, "axes", false, reason) ||
      !const_ints_ok(node, 4, "steps", false, reason))
    return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool slice_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  Dims starts, ends, axes, steps;
  if (node.opset < 10) {
    starts = node.attr_ints("starts", {});
    ends = node.attr_ints("ends", {});
    axes = node.attr_ints("axes", {});
  } else {
    if (!input_ints(in, 1, &starts) || !input_ints(in, 2, &ends))
      return fail(node, error, "starts and ends must be constant int tensors");
    if (in.size() > 3 && in[3].present && !input_ints(in, 3, &axes))
      return fail(node, error, "axes must be a constant int tensor");
    if (in.size() > 4 && in[4].present && !input_ints(in, 4, &steps))
      return fail(node, error, "steps must be a constant int tensor");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return fail(node, error,
                "starts " + dims_text(starts) + ", ends " + dims_text(ends) + ", axes " +
                    dims_text(axes) + " and steps " + dims_text(steps) +
                    " must have the same length");
  const Dims in_str = strides_of(x.dims);
  Dims begin(x.dims.size(), 0), step(x.dims.size(), 1), dims = x.dims;
  std::vector<char> seen(x.dims.size(), 0);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a;
    if (!norm_axis(axes[i], rank, &a) || seen[static_cast<size_t>(a)])
      return fail(node, error,
                  "axes " + dims_text(axes) + " is invalid for input " + dims_text(x.dims));
    seen[static_cast<size_t>(a)] = 1;
    const size_t d = static_cast<size_t>(a);
    const int64_t n = x.dims[d];
    const int64_t st = steps[i];
    if (st == 0) return fail(node, error, "steps " + dims_text(steps) + " has a zero");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += n;
    if (e < 0) e += n;
    int64_t count;
    if (n == 0) {
      count = 0;
      s = 0;
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      count = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    begin[d] = s;
    step[d] = st;
    dims[d] = count;
  }
  if (!declare_output(node, x, TensorDesc{x.dtype, dims}, SizeCheck::kInput, out, error))
    return false;
  if (count_of(dims) == 0) return true;
  const Dims out_str = strides_of(dims);
  StridedCopy c;
  for (size_t d = 0; d < dims.size(); ++d) {
    c.src_base += begin[d] * in_str[d];
    c.add(dims[d], in_str[d] * step[d], out_str[d]);
  }
  return add_copy(node, c, copy_words(x.dtype), Operand::input(0), Operand::output(0), out, error);
}

// ---------------------------------------------------------------------------------
// Expand and Tile.

// A copy op whose input 1 (`what`) is a required constant int tensor: Expand, Tile.
infer_support copy_with_const_check(const infer_node_view& node, const char* what,
                                    std::string* reason) {
  if (!copy_dtype_ok(node, reason) || !const_ints_ok(node, 1, what, true, reason))
    return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

infer_support expand_check(const infer_node_view& node, std::string* reason) {
  return copy_with_const_check(node, "shape", reason);
}

bool expand_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x = in[0];
  Dims shape;
  if (!input_ints(in, 1, &shape))
    return fail(node, error, "shape input must be a constant int tensor");
  const size_t rank = std::max(shape.size(), x.dims.size());
  Dims dims(rank), src_str(rank, 0);
  const Dims in_str = strides_of(x.dims);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t xi = static_cast<int64_t>(i) - static_cast<int64_t>(rank - x.dims.size());
    const int64_t si = static_cast<int64_t>(i) - static_cast<int64_t>(rank - shape.size());
    const int64_t xd = xi >= 0 ? x.dims[static_cast<size_t>(xi)] : 1;
    const int64_t sd = si >= 0 ? shape[static_cast<size_t>(si)] : 1;
    if (xd != 1 && sd != 1 && xd != sd)
      return fail(
          node, error,
          "input " + dims_text(x.dims) + " does not broadcast to shape " + dims_text(shape));
    dims[i] = xd == 1 ? sd : xd;
    if (xi >= 0 && xd != 1) src_str[i] = in_str[static_cast<size_t>(xi)];
  }
  if (!declare_output(node, x, TensorDesc{x.dtype, dims}, SizeCheck::kOutput, out, error))
    return false;
  const Dims out_str = strides_of(dims);
  StridedCopy c;
  for (size_t i = 0; i < rank; ++i) c.add(dims[i], src_str[i], out_str[i]);
  return add_copy(node, c, copy_words(x.dtype), Operand::input(0), Operand::output(0), out, error);
}

infer_support tile_check(const infer_node_view& node, std::string* reason) {
  return copy_with_const_check(node, "repeats", reason);
}

bool tile_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
               std::string* error) {
  const TensorDesc& x = in[0];
  Dims reps;
  if (!input_ints(in, 1, &reps))
    return fail(node, error, "repeats input must be a constant int tensor");
  if (reps.size() != x.dims.size())
    return fail(node, error,
                "repeats " + dims_text(reps) + " does not match input " + dims_text(x.dims));
  Dims dims(x.dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (reps[d] < 0)
      return fail(node, error, "repeats " + dims_text(reps) + " has a negative value");
    dims[d] = x.dims[d] * reps[d];
  }
  if (!declare_output(node, x, TensorDesc{x.dtype, dims}, SizeCheck::kOutput, out, error))
    return false;
  const Dims in_str = strides_of(x.dims), out_str = strides_of(dims);
  StridedCopy c;
  for (size_t d = 0; d < dims.size(); ++d)
    c.add(dims[d], in_str[d], out_str[d], reps[d] > 1 ? x.dims[d] : 0);
  return add_copy(node, c, copy_words(x.dtype), Operand::input(0), Operand::output(0), out, error);
}

// ---------------------------------------------------------------------------------
// Gather.

infer_support gather_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  const infer_value_view* idx = node_input(node, 1);
  if (idx == nullptr) return no(reason, "indices input is missing");
  if (idx->dtype != INFER_DTYPE_INT64 && idx->dtype != INFER_DTYPE_INT32)
    return no(reason, "indices dtype " + dtype_name(idx->dtype) + " is not int64 or int32");
  return INFER_SUPPORT_YES;
}

bool gather_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x = in[0];
  const TensorDesc& idx = in[1];
  int64_t axis;
  if (!axis_attr(node, 0, x, &axis, error)) return false;
  const size_t ax = static_cast<size_t>(axis);
  int64_t inner = 1;
  for (size_t d = ax + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  const int64_t axis_n = x.dims[ax];
  Dims dims(x.dims.begin(), x.dims.begin() + axis);
  dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
  dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  const int64_t n_idx = idx.elements();
  if (idx.host_data != nullptr) {
    Dims values;
    desc_ints(idx, &values);
    for (int64_t v : values)
      if (v < -axis_n || v >= axis_n)
        return fail(node, error,
                    "index " + std::to_string(v) + " is out of range for axis " +
                        std::to_string(axis) + " of " + dims_text(x.dims));
  }
  const TensorDesc y{x.dtype, dims};
  if (!declare_output(node, x, y, SizeCheck::kBoth, out, error)) return false;
  const int64_t n = y.elements();
  if (n == 0) return true;
  if (axis_n == 0)
    return fail(node, error, "cannot gather from the empty axis of " + dims_text(x.dims));
  const uint32_t words = copy_words(x.dtype);
  Dispatch d;
  d.spec = {kLanes, 1, 1, words, idx.dtype == INFER_DTYPE_INT64 ? 2u : 1u};
  d.push = {static_cast<uint32_t>(n), static_cast<uint32_t>(inner), static_cast<uint32_t>(n_idx),
            static_cast<uint32_t>(axis_n)};
  d.bindings = {Operand::input(0), Operand::input(1), Operand::output(0)};
  return add_dispatch(node, "gather", std::move(d), n, out, error);
}

// ---------------------------------------------------------------------------------
// Pad.

int pad_mode(const std::string& mode, int64_t opset) {
  if (mode == "constant") return 0;
  if (mode == "reflect") return 1;
  if (mode == "edge") return 2;
  if (mode == "wrap" && opset >= 19) return 3;
  return -1;
}

infer_support pad_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  const std::string mode = sdk::attr_string(&node, "mode", "constant");
  if (pad_mode(mode, node.opset) < 0) return no(reason, "unsupported attribute mode=" + mode);
  const infer_value_view* x = node_input(node, 0);
  if (x->rank > static_cast<int64_t>(kMaxCopyRank))
    return no(reason, "rank " + std::to_string(x->rank) + " is above 6");
  if (node.opset < 11) return INFER_SUPPORT_YES;
  if (!const_ints_ok(node, 1, "pads", true, reason) ||
      !const_ints_ok(node, 3, "axes", false, reason))
    return INFER_SUPPORT_NO;
  const infer_value_view* value = node_input(node, 2);
  if (value != nullptr && value->dtype != x->dtype)
    return no(reason,
              "constant_value dtype " + dtype_name(value->dtype) + " differs from the data's");
  return INFER_SUPPORT_YES;
}

bool pad_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
              std::string* error) {
  const TensorDesc& x = in[0];
  const size_t rank = x.dims.size();
  const uint32_t words = copy_words(x.dtype);
  const int mode = pad_mode(node.attr_string("mode", "constant"), node.opset);
  if (mode < 0) return fail(node, error, "unsupported mode " + node.attr_string("mode", ""));
  Dims pads, axes;
  uint32_t value[2] = {0, 0};
  bool value_from_buffer = false;
  if (node.opset < 11) {
    pads = node.attr_ints(node.opset < 2 ? "paddings" : "pads", {});
    const double v = node.attr_float("value", 0.0);
    if (x.dtype == INFER_DTYPE_FLOAT32) {
      value[0] = spec_float(static_cast<float>(v));
    } else if (x.dtype == INFER_DTYPE_FLOAT64) {
      std::memcpy(value, &v, sizeof v);
    } else {
      const int64_t iv = static_cast<int64_t>(v);
      std::memcpy(value, &iv, words * 4);
    }
  } else {
    if (!input_ints(in, 1, &pads))
      return fail(node, error, "pads input must be a constant int tensor");
    if (in.size() > 3 && in[3].present && !input_ints(in, 3, &axes))
      return fail(node, error, "axes input must be a constant int tensor");
    if (in.size() > 2 && in[2].present) {
      if (in[2].elements() != 1)
        return fail(node, error,
                    "constant_value must hold one element, got " + dims_text(in[2].dims));
      if (in[2].host_data != nullptr)
        std::memcpy(value, in[2].host_data, words * 4);
      else
        value_from_buffer = true;
    }
  }
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  if (pads.size() != 2 * axes.size())
    return fail(node, error,
                "pads " + dims_text(pads) + " must have 2 values per padded axis (" +
                    std::to_string(axes.size()) + " axes)");
  Dims begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a;
    if (!norm_axis(axes[i], static_cast<int64_t>(rank), &a))
      return fail(node, error,
                  "axes " + dims_text(axes) + " is invalid for input " + dims_text(x.dims));
    begin[static_cast<size_t>(a)] = pads[i];
    end[static_cast<size_t>(a)] = pads[i + axes.size()];
  }
  Dims dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    dims[d] = x.dims[d] + begin[d] + end[d];
    if (dims[d] < 0)
      return fail(node, error,
                  "pads " + dims_text(pads) + " remove more than dim " + std::to_string(d) +
                      " of " + dims_text(x.dims) + " holds");
  }
  if (rank > kMaxCopyRank) return fail(node, error, "rank above 6 is not supported");
  const TensorDesc y{x.dtype, dims};
  if (!declare_output(node, x, y, SizeCheck::kBoth, out, error)) return false;
  const int64_t n = y.elements();
  if (n == 0) return true;
  if (x.elements() == 0 && mode != 0)
    return fail(node, error,
                "mode " + node.attr_string("mode", "") + " cannot pad the empty input " +
                    dims_text(x.dims));
  Dispatch d;
  d.spec = {kLanes, 1, 1, words, static_cast<uint32_t>(mode), value_from_buffer ? 1u : 0u};
  d.push.assign(4 + 3 * kMaxCopyRank, 0);
  d.push[0] = static_cast<uint32_t>(n);
  d.push[1] = static_cast<uint32_t>(rank);
  d.push[2] = value[0];
  d.push[3] = value[1];
  for (size_t i = 0; i < rank; ++i) {
    d.push[4 + i] = static_cast<uint32_t>(dims[i]);
    d.push[4 + kMaxCopyRank + i] = static_cast<uint32_t>(x.dims[i]);
    d.push[4 + 2 * kMaxCopyRank + i] = static_cast<uint32_t>(static_cast<int32_t>(begin[i]));
  }
  // An empty input cannot be bound as a buffer of its own: the constant mode never reads
  // it, so the output stands in for it.
  const Operand src = x.elements() == 0 ? Operand::output(0) : Operand::input(0);
  d.bindings = {src, Operand::output(0), value_from_buffer ? Operand::input(2) : src};
  return add_dispatch(node, "shape_pad", std::move(d), n, out, error);
}

}  // namespace

void add_shape_ops(std::vector<OpKernel>& table) {
  shape_ops::add_alias_ops(table);  // Reshape, Flatten, Squeeze, Unsqueeze, Identity
  table.push_back({"", "Transpose", transpose_check, transpose_plan, nullptr});
  table.push_back({"", "Concat", concat_check, concat_plan, nullptr});
  table.push_back({"", "Slice", slice_check, slice_plan, nullptr});
  table.push_back({"", "Expand", expand_check, expand_plan, nullptr});
  table.push_back({"", "Tile", tile_check, tile_plan, nullptr});
  table.push_back({"", "Gather", gather_check, gather_plan, nullptr});
  table.push_back({"", "Pad", pad_check, pad_plan, nullptr});
}

}  // namespace infer::vk
