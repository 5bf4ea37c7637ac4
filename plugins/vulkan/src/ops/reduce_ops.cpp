// Reductions of the Vulkan plugin: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
// ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare
// (reduce_rows / reduce_cols) and ArgMax / ArgMin (reduce_arg_rows / reduce_arg_cols).
//
// The axes are an attribute before the opset where they became an input (13 for
// ReduceSum, 18 for the others) and a constant input from then on; keepdims and
// noop_with_empty_axes follow ONNX (a no-op reduction is an alias of the input). The
// input's dims are grouped into alternating runs of kept and reduced dims (at most 4 of
// each). When the innermost dim is reduced, one workgroup reduces each output with a
// shared-memory tree over contiguous reads; otherwise one invocation reduces each output,
// neighbouring invocations reading neighbouring elements. float32 only, accumulated in
// float32 (the CPU plugin accumulates in double: tolerances in the tests allow for it).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

using Dims = std::vector<int64_t>;

constexpr uint32_t kLanes = 128;
constexpr size_t kMaxRuns = 4;
constexpr int64_t kMaxElements = int64_t{1} << 31;
// Rows shorter than this reduce faster one per invocation than one per workgroup.
constexpr int64_t kMinRowForWorkgroup = 16;

struct KindName {
  const char* op;
  uint32_t code;  // the shaders' OP numbering
};
constexpr KindName kKinds[] = {
    {"ReduceSum", 0},       {"ReduceMean", 1},      {"ReduceMax", 2}, {"ReduceMin", 3},
    {"ReduceProd", 4},      {"ReduceL1", 5},        {"ReduceL2", 6},  {"ReduceLogSum", 7},
    {"ReduceLogSumExp", 8}, {"ReduceSumSquare", 9},
};

uint32_t kind_of(std::string_view op) {
  for (const KindName& k : kKinds)
    if (op == k.op) return k.code;
  return 0;
}

// The opset from which the axes are an input rather than an attribute.
int64_t axes_input_opset(std::string_view op) { return op == "ReduceSum" ? 13 : 18; }

uint32_t row_lanes(int64_t n) { return n <= 64 ? 64 : n <= 512 ? 128 : 256; }

double reduce_flops(const infer_node_view& node) { return view_elements(node_input(node, 0)); }

// ---------------------------------------------------------------------------------
// Reduce*

infer_support reduce_check(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = node_input(node, 0);
  if (x == nullptr) return no(reason, "input 0 is missing");
  if (x->dtype != INFER_DTYPE_FLOAT32)
    return no(reason, "unsupported dtype " + dtype_name(x->dtype) + " (float32 only)");
  if (node.opset >= axes_input_opset(node.op_type)) {
    const infer_value_view* axes = node_input(node, 1);
    if (axes != nullptr) {
      if (axes->dtype != INFER_DTYPE_INT64)
        return no(reason, "axes input has dtype " + dtype_name(axes->dtype) + ", expected int64");
      if (axes->const_data == nullptr) return no(reason, "axes input must be a constant");
    }
  }
  return INFER_SUPPORT_YES;
}

bool reduce_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const bool from_input = node.opset >= axes_input_opset(node.op_type);
  Dims axes;
  if (!from_input) {
    axes = node.attr_ints("axes", {});
  } else if (in.size() > 1 && in[1].present) {
    if (in[1].host_data == nullptr || in[1].dtype != INFER_DTYPE_INT64)
      return fail(node, error, "axes input must be a constant int64 tensor");
    axes.resize(static_cast<size_t>(in[1].elements()));
    if (!axes.empty()) std::memcpy(axes.data(), in[1].host_data, axes.size() * sizeof(int64_t));
  }
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  const bool noop = from_input && node.attr_int("noop_with_empty_axes", 0) != 0;
  if (axes.empty() && noop) {
    out->outputs.push_back(TensorDesc{x.dtype, x.dims});
    out->alias_of_input = {0};
    return true;
  }
  std::vector<char> reduced(x.dims.size(), axes.empty() ? 1 : 0);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return fail(
          node, error,
          "axes value " + std::to_string(a) + " is out of range for input " + dims_text(x.dims));
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = 1;
  }
  Dims out_dims;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (!reduced[d])
      out_dims.push_back(x.dims[d]);
    else if (keepdims)
      out_dims.push_back(1);
  }
  // Alternating runs of kept and reduced dims; size-1 dims belong to neither.
  Dims kept_size, kept_stride, red_size, red_stride;
  int64_t stride = 1;
  int last_class = -1;  // 0 kept, 1 reduced
  for (size_t d = x.dims.size(); d-- > 0;) {
    const int64_t n = x.dims[d];
    if (n != 1) {
      const int cls = reduced[d] ? 1 : 0;
      Dims& sizes = cls ? red_size : kept_size;
      Dims& strides = cls ? red_stride : kept_stride;
      if (cls == last_class) {
        sizes.front() *= n;
      } else {
        sizes.insert(sizes.begin(), n);
        strides.insert(strides.begin(), stride);
      }
      last_class = cls;
    }
    stride *= n;
  }
  if (kept_size.size() > kMaxRuns || red_size.size() > kMaxRuns)
    return fail(
        node, error,
        "the reduced and kept dims of " + dims_text(x.dims) + " alternate more than 4 times");
  int64_t outputs = 1, count = 1;
  for (int64_t s : kept_size) outputs *= s;
  for (int64_t s : red_size) count *= s;
  if (x.elements() == 0) {
    // Empty reductions still give one value per output: recount with the zero dims.
    outputs = 1;
    count = 1;
    for (size_t d = 0; d < x.dims.size(); ++d) (reduced[d] ? count : outputs) *= x.dims[d];
    kept_size.assign(1, outputs);
    kept_stride.assign(1, 0);
    red_size.clear();
    red_stride.clear();
  }
  out->outputs.push_back(TensorDesc{INFER_DTYPE_FLOAT32, out_dims});
  if (outputs == 0) return true;
  if (x.elements() >= kMaxElements)
    return fail(node, error, "input " + dims_text(x.dims) + " is too large");

  const uint32_t op = kind_of(node.op_type);
  // The innermost reduced run is contiguous when it is the last run of the input.
  const bool rows = last_class == 1 && count >= kMinRowForWorkgroup;
  Dispatch d;
  d.shader = find_shader(rows ? "reduce_rows" : "reduce_cols");
  if (d.shader == nullptr) return fail(node, error, "a reduce shader is missing from the build");
  d.spec = {rows ? row_lanes(count) : kLanes, 1, 1, op};
  d.push.assign(4 + 4 * kMaxRuns, 0);
  d.push[0] = static_cast<uint32_t>(outputs);
  d.push[1] = static_cast<uint32_t>(count);
  d.push[2] = static_cast<uint32_t>(kept_size.size());
  d.push[3] = static_cast<uint32_t>(red_size.size());
  for (size_t i = 0; i < kept_size.size(); ++i) {
    d.push[4 + i] = static_cast<uint32_t>(kept_size[i]);
    d.push[4 + kMaxRuns + i] = static_cast<uint32_t>(kept_stride[i]);
  }
  for (size_t i = 0; i < red_size.size(); ++i) {
    d.push[4 + 2 * kMaxRuns + i] = static_cast<uint32_t>(red_size[i]);
    d.push[4 + 3 * kMaxRuns + i] = static_cast<uint32_t>(red_stride[i]);
  }
  // An empty input has no buffer to bind; the shader never reads it (count is 0).
  d.bindings = {x.elements() == 0 ? Operand::output(0) : Operand::input(0), Operand::output(0)};
  set_groups(
      &d, rows ? static_cast<uint64_t>(outputs) : div_up(static_cast<uint64_t>(outputs), kLanes));
  out->dispatches.push_back(std::move(d));
  return true;
}

// ---------------------------------------------------------------------------------
// ArgMax / ArgMin

infer_support arg_check(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = node_input(node, 0);
  if (x == nullptr) return no(reason, "input 0 is missing");
  if (x->dtype != INFER_DTYPE_FLOAT32)
    return no(reason, "unsupported dtype " + dtype_name(x->dtype) + " (float32 only)");
  return INFER_SUPPORT_YES;
}

bool arg_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
              std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = node.attr_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    return fail(node, error,
                "axis " + std::to_string(axis) + " is out of range for input " + dims_text(x.dims));
  if (axis < 0) axis += rank;
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  const bool last = node.opset >= 12 && node.attr_int("select_last_index", 0) != 0;
  int64_t outer = 1, inner = 1;
  Dims out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t s = x.dims[static_cast<size_t>(d)];
    if (d < axis) outer *= s;
    if (d > axis) inner *= s;
    if (d != axis)
      out_dims.push_back(s);
    else if (keepdims)
      out_dims.push_back(1);
  }
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  out->outputs.push_back(TensorDesc{INFER_DTYPE_INT64, out_dims});
  if (outer * inner == 0) return true;
  if (n == 0)
    return fail(node, error,
                "cannot take " + node.op_type + " over axis " + std::to_string(axis) +
                    " of size 0 in " + dims_text(x.dims));
  if (x.elements() >= kMaxElements)
    return fail(node, error, "input " + dims_text(x.dims) + " is too large");
  const bool rows = inner == 1 && n >= kMinRowForWorkgroup;
  const uint32_t is_max = node.op_type == "ArgMax" ? 1u : 0u;
  Dispatch d;
  d.shader = find_shader(rows ? "reduce_arg_rows" : "reduce_arg_cols");
  if (d.shader == nullptr)
    return fail(node, error, "an arg-reduce shader is missing from the build");
  d.spec = {rows ? row_lanes(n) : kLanes, 1, 1, is_max, last ? 1u : 0u};
  if (rows) {
    d.push = {static_cast<uint32_t>(outer), static_cast<uint32_t>(n)};
    set_groups(&d, static_cast<uint64_t>(outer));
  } else {
    const uint64_t columns = static_cast<uint64_t>(outer * inner);
    d.push = {static_cast<uint32_t>(columns), static_cast<uint32_t>(n),
              static_cast<uint32_t>(inner)};
    set_groups(&d, div_up(columns, kLanes));
  }
  d.bindings = {Operand::input(0), Operand::output(0)};
  out->dispatches.push_back(std::move(d));
  return true;
}

}  // namespace

void add_reduce_ops(std::vector<OpKernel>& table) {
  for (const KindName& k : kKinds)
    table.push_back({"", k.op, reduce_check, reduce_plan, reduce_flops});
  table.push_back({"", "ArgMax", arg_check, arg_plan, reduce_flops});
  table.push_back({"", "ArgMin", arg_check, arg_plan, reduce_flops});
}

}  // namespace infer::vk
