// MaxPool, AveragePool (1-D and 2-D windows: kernel_shape, pads, strides, dilations,
// ceil_mode, auto_pad, count_include_pad) on pool2d.comp, one output pixel per
// invocation; GlobalAveragePool and GlobalMaxPool (any number of spatial dims) on
// pool_global.comp, one workgroup per (n, c) plane with a shared-memory tree.
// float32 only. MaxPool's optional Indices output and 3-D windows are not implemented
// (check says NO): the partitioner then leaves those nodes to another backend.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "conv_window.hpp"
#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

constexpr int64_t kMaxGroups = 65535;

bool check_x(const NodeInfo& node, std::span<const TensorDesc> in, std::string* error) {
  if (in.empty() || !in[0].present) return fail(node, error, "expected input X");
  if (in[0].dtype != INFER_DTYPE_FLOAT32)
    return fail(node, error, "input X is " + dtype_name(in[0].dtype) + ", expected float32");
  if (in[0].dims.size() < 3)
    return fail(
        node, error,
        "X has shape " + dims_text(in[0].dims) + ", expected at least 3 dims (N, C, spatial...)");
  if (in[0].elements() > 0x7fffffff)
    return fail(node, error, "tensors of 2^31 elements or more are not supported");
  return true;
}

bool plan_pool(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
               std::string* error) {
  if (!check_x(node, in, error)) return false;
  const TensorDesc& X = in[0];
  const bool is_max = node.op_type == "MaxPool";
  if (X.dims.size() > 4)
    return fail(node, error,
                "X has shape " + dims_text(X.dims) + ": 3-D pooling is not implemented");
  const std::vector<int64_t> in_sp(X.dims.begin() + 2, X.dims.end());
  const std::vector<int64_t> ks = node.attr_ints("kernel_shape", {});
  if (ks.size() != in_sp.size())
    return fail(node, error,
                "kernel_shape " + dims_text(ks) + " does not match X " + dims_text(X.dims));
  Window2 w;
  if (!plan_window2(node, in_sp, ks, node.attr_int("ceil_mode", 0) != 0, &w, error)) return false;
  TensorDesc Y;
  Y.dtype = INFER_DTYPE_FLOAT32;
  Y.dims = {X.dims[0], X.dims[1]};
  if (in_sp.size() == 2) Y.dims.push_back(w.out_h);
  Y.dims.push_back(w.out_w);
  if (!fits_i32({Y.elements(), w.in_h + w.pad_top + w.pad_bottom, w.in_w + w.pad_left + w.pad_right,
                 w.k_h * w.d_h + w.out_h * w.s_h, w.k_w * w.d_w + w.out_w * w.s_w}))
    return fail(node, error, "sizes of 2^31 or more are not supported");
  out->outputs = {Y};
  if (Y.elements() == 0) return true;
  const Shader* shader = find_shader("pool2d");
  if (shader == nullptr) return fail(node, error, "shader pool2d is not embedded in this build");
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  const int64_t P = w.out_h * w.out_w;
  const int64_t planes = X.dims[0] * X.dims[1];
  // 128 invocations at most: the largest workgroup every Vulkan device must support.
  const uint32_t wg = P <= 64 ? 64 : 128;
  Dispatch d;
  d.shader = shader;
  d.spec = {wg, 1, 1, is_max ? 1u : 0u, node.attr_int("count_include_pad", 0) != 0 ? 1u : 0u};
  d.push = {u(w.in_h),    u(w.in_w),     u(w.out_h),      u(w.out_w),     u(w.k_h),
            u(w.k_w),     u(w.s_h),      u(w.s_w),        u(w.d_h),       u(w.d_w),
            u(w.pad_top), u(w.pad_left), u(w.pad_bottom), u(w.pad_right), u(planes)};
  d.bindings = {Operand::input(0), Operand::output(0)};
  const int64_t groups = (P + wg - 1) / wg;
  d.groups[0] = static_cast<uint32_t>(std::min(kMaxGroups, groups));
  d.groups[1] = static_cast<uint32_t>(std::min(kMaxGroups, (groups + kMaxGroups - 1) / kMaxGroups));
  d.groups[2] = static_cast<uint32_t>(std::min(kMaxGroups, planes));
  out->dispatches.push_back(d);
  return true;
}

bool plan_global_pool(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                      std::string* error) {
  if (!check_x(node, in, error)) return false;
  const TensorDesc& X = in[0];
  TensorDesc Y;
  Y.dtype = INFER_DTYPE_FLOAT32;
  Y.dims = X.dims;
  std::fill(Y.dims.begin() + 2, Y.dims.end(), 1);
  const int64_t planes = X.dims[0] * X.dims[1];
  int64_t S = 1;
  for (size_t i = 2; i < X.dims.size(); ++i) S *= X.dims[i];
  out->outputs = {Y};
  if (planes == 0) return true;
  if (S == 0) return fail(node, error, "global pooling over an empty input " + dims_text(X.dims));
  const Shader* shader = find_shader("pool_global");
  if (shader == nullptr)
    return fail(node, error, "shader pool_global is not embedded in this build");
  // Small planes (7x7 at the end of a CNN) would leave most of 128 invocations idle;
  // 128 is the largest workgroup every Vulkan device must support.
  const uint32_t wg = S <= 1024 ? 64 : 128;
  Dispatch d;
  d.shader = shader;
  d.spec = {wg, 1, 1, node.op_type == "GlobalMaxPool" ? 1u : 0u};
  d.push = {static_cast<uint32_t>(S), static_cast<uint32_t>(planes)};
  d.bindings = {Operand::input(0), Operand::output(0)};
  d.groups[0] = static_cast<uint32_t>(std::min(kMaxGroups, planes));
  d.groups[1] = static_cast<uint32_t>(std::min(kMaxGroups, (planes + kMaxGroups - 1) / kMaxGroups));
  out->dispatches.push_back(d);
  return true;
}

bool check_input(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = node_input(node, 0);
  if (node.num_inputs != 1 || x == nullptr) {
    *reason = "expected 1 input";
    return false;
  }
  if (x->dtype != INFER_DTYPE_FLOAT32) {
    *reason = "input X is " + dtype_name(x->dtype) + ", only float32 is implemented";
    return false;
  }
  if (x->rank >= 0 && x->rank < 3) {
    *reason = "input rank " + std::to_string(x->rank) + " < 3";
    return false;
  }
  return true;
}

infer_support check_pool(const infer_node_view& node, std::string* reason) {
  if (!check_input(node, reason)) return INFER_SUPPORT_NO;
  if (node.num_outputs > 1 && node.outputs[1] != nullptr) {
    *reason = "MaxPool's Indices output is not implemented";
    return INFER_SUPPORT_NO;
  }
  const std::span<const int64_t> ks = sdk::attr_ints(&node, "kernel_shape");
  if (ks.empty()) {
    *reason = "kernel_shape is required";
    return INFER_SUPPORT_NO;
  }
  if (ks.size() > 2) {
    *reason = std::to_string(ks.size()) + "-D pooling is not implemented (1-D and 2-D only)";
    return INFER_SUPPORT_NO;
  }
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && x->rank - 2 != static_cast<int64_t>(ks.size())) {
    *reason = "kernel_shape has " + std::to_string(ks.size()) + " values for input rank " +
              std::to_string(x->rank);
    return INFER_SUPPORT_NO;
  }
  if (!check_window_view(node, static_cast<int64_t>(ks.size()), reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

infer_support check_global_pool(const infer_node_view& node, std::string* reason) {
  return check_input(node, reason) ? INFER_SUPPORT_YES : INFER_SUPPORT_NO;
}

// One compare or add per window tap.
double flops_pool(const infer_node_view& node) {
  const double outputs = view_elements(node.num_outputs > 0 ? node.outputs[0] : nullptr);
  if (outputs < 0) return -1;
  double taps = 1;
  for (int64_t k : sdk::attr_ints(&node, "kernel_shape")) taps *= static_cast<double>(k);
  return outputs * taps;
}

double flops_global_pool(const infer_node_view& node) { return view_elements(node_input(node, 0)); }

}  // namespace

void add_pool_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "MaxPool", check_pool, plan_pool, flops_pool});
  table.push_back({"", "AveragePool", check_pool, plan_pool, flops_pool});
  table.push_back(
      {"", "GlobalAveragePool", check_global_pool, plan_global_pool, flops_global_pool});
  table.push_back({"", "GlobalMaxPool", check_global_pool, plan_global_pool, flops_global_pool});
}

}  // namespace infer::vk
