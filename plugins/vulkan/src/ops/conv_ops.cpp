// Conv and ai.infer FusedConv (sdk/FUSED_OPS.md: Y = act(Conv(X, W, B) + Z)) over 1-D
// and 2-D inputs, with auto_pad, pads, strides, dilations and groups. Two shaders:
//  - conv_gemm.comp: an implicit GEMM per (image, group), weights [Mg, Cg*KH*KW] times
//    the im2col matrix gathered on the fly into shared memory; a 1x1 stride-1 unpadded
//    conv reads X's channel planes directly (POINTWISE);
//  - conv_depthwise.comp: convs whose groups have one input channel each (depthwise,
//    any channel multiplier, and single-channel inputs), one output pixel per invocation.
// Bias, residual Z and the activation run in either shader's epilogue, so a FusedConv is
// one dispatch. 1-D convs are 2-D convs of height 1; 3-D convs are not implemented (check
// says NO). Weights are ordinary bindings: the runtime uploads constant inputs itself.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "conv_window.hpp"
#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

constexpr uint32_t kBk = 16;
constexpr int64_t kMaxGroups = 65535;

// Tiles of conv_gemm: y over output channels of a group, x over output pixels. Local
// size y stays a multiple of TN (the shader gathers one pixel column per invocation).
struct Tiles {
  uint32_t wgx, wgy, tm, tn;
};
Tiles choose_tiles(int64_t rows, int64_t cols) {
  if (rows >= 64 && cols >= 64) return {8, 8, 8, 8};
  if (rows < 16 && cols >= 64) return {16, 4, 1, 4};
  if (cols < 16 && rows >= 64) return {4, 16, 4, 1};
  if (rows >= 32 && cols >= 32) return {8, 8, 4, 4};
  return {8, 8, 2, 2};
}

// A 1-D grid of `items` invocations in groups of `wg`, folded into x and y so neither
// exceeds 65535 (the shaders stride over x * y groups).
void fold_groups(int64_t items, uint32_t wg, Dispatch* d) {
  const int64_t groups = std::max<int64_t>(1, (items + wg - 1) / wg);
  const int64_t gy = std::min(kMaxGroups, (groups + kMaxGroups - 1) / kMaxGroups);
  d->groups[0] = static_cast<uint32_t>(std::min(kMaxGroups, groups));
  d->groups[1] = static_cast<uint32_t>(gy);
}

bool plan_conv(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
               std::string* error) {
  const bool fused = node.domain == "ai.infer";
  if (in.size() < 2 || !in[0].present || !in[1].present)
    return fail(node, error, "expected inputs X and W");
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].present && in[i].dtype != INFER_DTYPE_FLOAT32)
      return fail(
          node, error,
          "input " + std::to_string(i) + " is " + dtype_name(in[i].dtype) + ", expected float32");
  const TensorDesc& X = in[0];
  const TensorDesc& W = in[1];
  const TensorDesc* B = in.size() > 2 && in[2].present ? &in[2] : nullptr;
  const TensorDesc* Z = fused && in.size() > 3 && in[3].present ? &in[3] : nullptr;
  const size_t rank = X.dims.size();
  if (rank != 3 && rank != 4)
    return fail(node, error,
                "X has shape " + dims_text(X.dims) +
                    ", expected [N, C, W] or [N, C, H, W] (3-D convs are not "
                    "implemented)");
  if (W.dims.size() != rank)
    return fail(node, error,
                "W has shape " + dims_text(W.dims) + ", expected rank " + std::to_string(rank) +
                    " like X " + dims_text(X.dims));
  const int64_t N = X.dims[0], C = X.dims[1], M = W.dims[0];
  const int64_t G = node.attr_int("group", 1);
  if (G < 1 || C % G != 0 || M % G != 0)
    return fail(node, error,
                "group " + std::to_string(G) + " does not divide input channels " +
                    std::to_string(C) + " and output channels " + std::to_string(M));
  const int64_t Cg = C / G, Mg = M / G;
  if (W.dims[1] != Cg)
    return fail(node, error,
                "W has shape " + dims_text(W.dims) + ": dim 1 must be C/group = " +
                    std::to_string(Cg) + " for X " + dims_text(X.dims));
  const std::vector<int64_t> in_sp(X.dims.begin() + 2, X.dims.end());
  const std::vector<int64_t> k_sp(W.dims.begin() + 2, W.dims.end());
  const std::vector<int64_t> ks = node.attr_ints("kernel_shape", {});
  if (!ks.empty() && ks != k_sp)
    return fail(node, error,
                "kernel_shape " + dims_text(ks) + " does not match W " + dims_text(W.dims));
  if (B != nullptr && (B->dims.size() != 1 || B->dims[0] != M))
    return fail(
        node, error,
        "bias B has shape " + dims_text(B->dims) + ", expected [" + std::to_string(M) + "]");
  Window2 w;
  if (!plan_window2(node, in_sp, k_sp, false, &w, error)) return false;

  TensorDesc Y;
  Y.dtype = INFER_DTYPE_FLOAT32;
  Y.dims = {N, M};
  if (rank == 4) Y.dims.push_back(w.out_h);
  Y.dims.push_back(w.out_w);
  if (Z != nullptr && Z->dims != Y.dims)
    return fail(node, error,
                "residual Z has shape " + dims_text(Z->dims) +
                    ", expected the convolution's output shape " + dims_text(Y.dims));
  if (!fits_i32({X.elements(), W.elements(), Y.elements(), N * G, w.in_h + w.pad_top,
                 w.in_w + w.pad_left, w.out_h * w.s_h, w.out_w * w.s_w,
                 w.k_h * w.d_h + w.out_h * w.s_h, w.k_w * w.d_w + w.out_w * w.s_w}))
    return fail(node, error, "sizes of 2^31 elements or more are not supported");
  ActivationSpec act;
  if (!parse_activation(node, &act, error)) return false;
  out->outputs = {Y};
  if (Y.elements() == 0) return true;
  if (X.elements() == 0 || W.elements() == 0)
    return fail(node, error, "empty X or W with a non-empty output is not supported");

  const bool depthwise = Cg == 1;
  const Shader* shader = find_shader(depthwise ? "conv_depthwise" : "conv_gemm");
  if (shader == nullptr)
    return fail(node, error,
                std::string("shader ") + (depthwise ? "conv_depthwise" : "conv_gemm") +
                    " is not embedded in this build");
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  const int64_t P = w.out_h * w.out_w;
  Dispatch d;
  d.shader = shader;
  d.bindings = {Operand::input(0), Operand::input(1),
                // Absent B and Z still need valid descriptors: X stands in, never read.
                B != nullptr ? Operand::input(2) : Operand::input(0),
                Z != nullptr ? Operand::input(3) : Operand::input(0), Operand::output(0)};
  if (depthwise) {
    // 128 invocations at most: the largest workgroup every Vulkan device must support.
    const uint32_t wg = P <= 64 ? 64 : 128;
    d.spec = {
        wg, 1, 1, static_cast<uint32_t>(act.kind), B != nullptr ? 1u : 0u, Z != nullptr ? 1u : 0u};
    d.push = {u(C),     u(w.in_h),          u(w.in_w),         u(w.out_h), u(w.out_w),
              u(w.k_h), u(w.k_w),           u(w.s_h),          u(w.s_w),   u(w.d_h),
              u(w.d_w), u(w.pad_top),       u(w.pad_left),     u(Mg),      u(M),
              u(N * M), push_float(act.p0), push_float(act.p1)};
    fold_groups(P, wg, &d);
    d.groups[2] = static_cast<uint32_t>(std::min(kMaxGroups, N * M));
  } else {
    const bool pointwise = w.k_h == 1 && w.k_w == 1 && w.s_h == 1 && w.s_w == 1 && w.pad_top == 0 &&
                           w.pad_left == 0 && w.pad_bottom == 0 && w.pad_right == 0;
    const Tiles t = choose_tiles(Mg, P);
    d.spec = {t.wgx,
              t.wgy,
              1,
              t.tm,
              t.tn,
              kBk,
              static_cast<uint32_t>(act.kind),
              B != nullptr ? 1u : 0u,
              Z != nullptr ? 1u : 0u,
              pointwise ? 1u : 0u};
    d.push = {
        u(C),     u(w.in_h), u(w.in_w), u(w.out_h), u(w.out_w),         u(w.k_h),          u(w.k_w),
        u(w.s_h), u(w.s_w),  u(w.d_h),  u(w.d_w),   u(w.pad_top),       u(w.pad_left),     u(Cg),
        u(Mg),    u(G),      u(M),      u(N * G),   push_float(act.p0), push_float(act.p1)};
    const int64_t bm = static_cast<int64_t>(t.tm) * t.wgy, bn = static_cast<int64_t>(t.tn) * t.wgx;
    d.groups[0] = static_cast<uint32_t>(std::min(kMaxGroups, (P + bn - 1) / bn));
    d.groups[1] = static_cast<uint32_t>(std::min(kMaxGroups, (Mg + bm - 1) / bm));
    d.groups[2] = static_cast<uint32_t>(std::min(kMaxGroups, N * G));
  }
  out->dispatches.push_back(d);
  return true;
}

infer_support check_conv(const infer_node_view& node, std::string* reason) {
  const bool fused = std::strcmp(node.domain, "ai.infer") == 0;
  const size_t max_inputs = fused ? 4 : 3;
  if (node.num_inputs < 2 || node.num_inputs > max_inputs || node_input(node, 0) == nullptr ||
      node_input(node, 1) == nullptr) {
    *reason = "expected 2 to " + std::to_string(max_inputs) + " inputs";
    return INFER_SUPPORT_NO;
  }
  for (size_t i = 0; i < node.num_inputs; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v != nullptr && v->dtype != INFER_DTYPE_FLOAT32) {
      *reason = "input " + std::to_string(i) + " is " + dtype_name(v->dtype) +
                ", only float32 is implemented";
      return INFER_SUPPORT_NO;
    }
  }
  if (fused && !activation_supported(node, reason)) return INFER_SUPPORT_NO;
  const infer_value_view* x = node_input(node, 0);
  const infer_value_view* w = node_input(node, 1);
  int64_t rank = x->rank >= 0 ? x->rank : w->rank;
  if (rank > 4) {
    *reason = std::to_string(rank - 2) + "-D convolution is not implemented (1-D and 2-D only)";
    return INFER_SUPPORT_NO;
  }
  if (rank >= 0 && rank < 3) {
    *reason = "Conv input rank " + std::to_string(rank) + " < 3";
    return INFER_SUPPORT_NO;
  }
  const std::span<const int64_t> ks = sdk::attr_ints(&node, "kernel_shape");
  if (rank < 0 && !ks.empty()) rank = static_cast<int64_t>(ks.size()) + 2;
  if (rank > 4) {
    *reason = std::to_string(rank - 2) + "-D convolution is not implemented (1-D and 2-D only)";
    return INFER_SUPPORT_NO;
  }
  if (sdk::attr_int(&node, "group", 1) < 1) {
    *reason = "group must be >= 1";
    return INFER_SUPPORT_NO;
  }
  if (!check_window_view(node, rank >= 0 ? rank - 2 : -1, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

// 2 * (output elements) * (multiply-adds per output = Cg * KH * KW).
double flops_conv(const infer_node_view& node) {
  const infer_value_view* w = node_input(node, 1);
  const infer_value_view* y = node.num_outputs > 0 ? node.outputs[0] : nullptr;
  if (w == nullptr || y == nullptr || w->rank < 1 || y->rank < 0) return -1;
  double per_output = 1, outputs = 1;
  for (int64_t i = 1; i < w->rank; ++i) {
    if (w->dims[i] < 0) return -1;
    per_output *= static_cast<double>(w->dims[i]);
  }
  for (int64_t i = 0; i < y->rank; ++i) {
    if (y->dims[i] < 0) return -1;
    outputs *= static_cast<double>(y->dims[i]);
  }
  return 2.0 * outputs * per_output;
}

}  // namespace

void add_conv_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "Conv", check_conv, plan_conv, flops_conv});
  table.push_back({"ai.infer", "FusedConv", check_conv, plan_conv, flops_conv});
}

}  // namespace infer::vk
