// Normalization operators of the Vulkan plugin: Softmax and LogSoftmax (softmax_rows /
// softmax_cols), LayerNormalization (ONNX-17 and ai.infer) and InstanceNormalization
// (layernorm), BatchNormalization in inference mode (norm_batch), Gelu (ONNX-20 and
// ai.infer; gelu) and the fused ai.infer Attention (attention_scores, attention_softmax,
// attention_pv: scores into a scratch buffer, softmax in place, then times V).
//
// Row reductions run one workgroup per row with shared-memory trees; reductions along a
// non-innermost axis run one invocation per column so that reads stay coalesced. All of
// them compute in float32, the only dtype these kernels take.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

using Dims = std::vector<int64_t>;

constexpr uint32_t kLanes = 128;  // workgroup size of the element-wise kernels
constexpr uint32_t kTile = 16;    // attention tiles are kTile x kTile
constexpr int64_t kMaxElements = int64_t{1} << 31;

// One workgroup per row: a power of two that suits the row length.
uint32_t row_lanes(int64_t n) { return n <= 64 ? 64 : n <= 512 ? 128 : 256; }

bool get_shader(const NodeInfo& node, const char* name, Dispatch* d, std::string* error) {
  d->shader = find_shader(name);
  if (d->shader == nullptr)
    return fail(node, error, std::string("shader ") + name + " is missing from the build");
  return true;
}

// Appends dispatch `d` of shader `name` over `groups` workgroups (folded by set_groups).
bool add_dispatch(const NodeInfo& node, const char* name, Dispatch d, uint64_t groups, OpPlan* out,
                  std::string* error) {
  if (!get_shader(node, name, &d, error)) return false;
  set_groups(&d, groups);
  out->dispatches.push_back(std::move(d));
  return true;
}

// Declares output 0 as float32 with the dims of `x`, as every op here but Attention
// has it. Returns x's element count: 0 when there is nothing to compute, -1 (with *error
// set) when the shaders' 32-bit indices cannot reach every element. Callers return
// `n == 0` for n <= 0.
int64_t same_shape_output(const NodeInfo& node, const TensorDesc& x, OpPlan* out,
                          std::string* error) {
  out->outputs.push_back(TensorDesc{INFER_DTYPE_FLOAT32, x.dims});
  const int64_t n = x.elements();
  if (n >= kMaxElements) {
    fail(node, error, "input " + dims_text(x.dims) + " is too large");
    return -1;
  }
  return n;
}

// `axis` of a rank-`rank` input made non-negative; false (with *error) when out of range.
bool resolve_axis(const NodeInfo& node, const TensorDesc& x, int64_t* axis, std::string* error) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (*axis < -rank || *axis >= rank)
    return fail(
        node, error,
        "axis " + std::to_string(*axis) + " is out of range for input " + dims_text(x.dims));
  if (*axis < 0) *axis += rank;
  return true;
}

// The epsilon attribute (ONNX's default 1e-5) as a push constant.
uint32_t push_epsilon(const NodeInfo& node) {
  return push_float(static_cast<float>(node.attr_float("epsilon", 1e-5)));
}

// Every present input of the node must be float32.
bool inputs_f32(const infer_node_view& node, std::string* reason) {
  for (size_t i = 0; i < node.num_inputs; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v != nullptr && v->dtype != INFER_DTYPE_FLOAT32) {
      *reason = "unsupported dtype " + dtype_name(v->dtype) + " of input " + std::to_string(i) +
                " (float32 only)";
      return false;
    }
  }
  if (node_input(node, 0) == nullptr) {
    *reason = "input 0 is missing";
    return false;
  }
  return true;
}

// Only the first output may be used (LayerNormalization's Mean/InvStdDev, BatchNorm's
// training statistics).
bool only_first_output(const infer_node_view& node, std::string* reason) {
  for (size_t i = 1; i < node.num_outputs; ++i) {
    if (node.outputs[i] != nullptr) {
      *reason = "output " + std::to_string(i) + " is not supported (only output 0)";
      return false;
    }
  }
  return true;
}

// OpKernel::flops of an op that costs `kPerElement` operations per element of input 0.
template <int kPerElement>
double per_element_flops(const infer_node_view& node) {
  const double n = view_elements(node_input(node, 0));
  return n < 0 ? -1 : kPerElement * n;
}

// ---------------------------------------------------------------------------------
// Softmax / LogSoftmax.

infer_support softmax_check(const infer_node_view& node, std::string* reason) {
  if (!inputs_f32(node, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool softmax_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const bool legacy = node.opset < 13;  // coerce to 2-D at `axis`
  int64_t axis = node.attr_int("axis", legacy ? 1 : -1);
  int64_t outer = 1, n = 1, inner = 1;
  if (rank > 0) {
    if (!resolve_axis(node, x, &axis, error)) return false;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t s = x.dims[static_cast<size_t>(d)];
      if (d < axis)
        outer *= s;
      else if (d == axis || legacy)
        n *= s;
      else
        inner *= s;
    }
  }
  if (const int64_t count = same_shape_output(node, x, out, error); count <= 0) return count == 0;
  const uint32_t log = node.op_type == "LogSoftmax" ? 1u : 0u;
  Dispatch d;
  d.bindings = {Operand::input(0), Operand::output(0)};
  if (inner == 1) {
    d.spec = {row_lanes(n), 1, 1, log};
    d.push = {static_cast<uint32_t>(outer), static_cast<uint32_t>(n)};
    return add_dispatch(node, "softmax_rows", std::move(d), static_cast<uint64_t>(outer), out,
                        error);
  }
  d.spec = {kLanes, 1, 1, log};
  const uint64_t columns = static_cast<uint64_t>(outer * inner);
  d.push = {static_cast<uint32_t>(columns), static_cast<uint32_t>(n), static_cast<uint32_t>(inner)};
  return add_dispatch(node, "softmax_cols", std::move(d), div_up(columns, kLanes), out, error);
}

// ---------------------------------------------------------------------------------
// LayerNormalization and InstanceNormalization.

infer_support layernorm_check(const infer_node_view& node, std::string* reason) {
  if (!inputs_f32(node, reason)) return INFER_SUPPORT_NO;
  if (!only_first_output(node, reason)) return INFER_SUPPORT_NO;
  if (node_input(node, 1) == nullptr) return no(reason, "input Scale is missing");
  return INFER_SUPPORT_YES;
}

// The number of leading elements of a parameter that broadcasts (from the right) over the
// normalized dims `norm`, when its non-1 dims are a suffix of them: row element i then
// uses element i % count. 0 when it broadcasts some other way.
int64_t suffix_count(const Dims& param, const Dims& norm) {
  size_t first = 0;
  while (first < param.size() && param[first] == 1) ++first;
  const size_t k = param.size() - first;
  if (k > norm.size()) return 0;
  int64_t count = 1;
  for (size_t i = 0; i < k; ++i) {
    if (param[first + i] != norm[norm.size() - k + i]) return 0;
    count *= param[first + i];
  }
  return count;
}

// The layernorm shader over `rows` rows of `n` elements. `params` are its push constants
// {scale count, bias count, channels}: LayerNormalization broadcasts Scale and B along
// the row, InstanceNormalization picks them per channel (`per_channel`, spec constant 3).
bool add_layernorm(const NodeInfo& node, int64_t rows, int64_t n, std::array<uint32_t, 3> params,
                   bool per_channel, bool has_bias, OpPlan* out, std::string* error) {
  Dispatch d;
  d.spec = {row_lanes(n), 1, 1, per_channel ? 1u : 0u, has_bias ? 1u : 0u};
  d.push = {static_cast<uint32_t>(rows), static_cast<uint32_t>(n), params[0], params[1], params[2],
            push_epsilon(node)};
  d.bindings = {Operand::input(0), Operand::input(1),
                has_bias ? Operand::input(2) : Operand::input(1), Operand::output(0)};
  return add_dispatch(node, "layernorm", std::move(d), static_cast<uint64_t>(rows), out, error);
}

bool layernorm_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = node.attr_int("axis", -1);
  if (!resolve_axis(node, x, &axis, error)) return false;
  const Dims norm(x.dims.begin() + axis, x.dims.end());
  int64_t rows = 1, n = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : n) *= x.dims[static_cast<size_t>(d)];
  const bool has_bias = in.size() > 2 && in[2].present;
  const int64_t scale_n = suffix_count(in[1].dims, norm);
  const int64_t bias_n = has_bias ? suffix_count(in[2].dims, norm) : 1;
  if (scale_n == 0 || bias_n == 0)
    return fail(node, error,
                "Scale " + dims_text(in[1].dims) +
                    (has_bias ? " and B " + dims_text(in[2].dims) : std::string()) +
                    " must broadcast from the right over the normalized dims " + dims_text(norm));
  if (const int64_t count = same_shape_output(node, x, out, error); count <= 0) return count == 0;
  return add_layernorm(node, rows, n,
                       {static_cast<uint32_t>(scale_n), static_cast<uint32_t>(bias_n), 1u}, false,
                       has_bias, out, error);
}

infer_support instancenorm_check(const infer_node_view& node, std::string* reason) {
  if (!inputs_f32(node, reason)) return INFER_SUPPORT_NO;
  if (node_input(node, 1) == nullptr || node_input(node, 2) == nullptr)
    return no(reason, "inputs scale and B are required");
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && x->rank < 3) return no(reason, "input must have at least 3 dims");
  return INFER_SUPPORT_YES;
}

bool instancenorm_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                       std::string* error) {
  const TensorDesc& x = in[0];
  if (x.dims.size() < 3)
    return fail(node, error,
                "input must have at least 3 dims (N, C, D1, ...), got " + dims_text(x.dims));
  const int64_t C = x.dims[1];
  const int64_t rows = x.dims[0] * C;
  const int64_t n = rows == 0 ? 0 : x.elements() / rows;
  for (size_t i = 1; i < 3; ++i)
    if (in[i].elements() != C || in[i].dims.size() != 1)
      return fail(node, error,
                  std::string(i == 1 ? "scale " : "B ") + dims_text(in[i].dims) + " must be [" +
                      std::to_string(C) + "] for input " + dims_text(x.dims));
  if (const int64_t count = same_shape_output(node, x, out, error); count <= 0) return count == 0;
  return add_layernorm(node, rows, n, {1u, 1u, static_cast<uint32_t>(C)}, true, true, out, error);
}

// ---------------------------------------------------------------------------------
// BatchNormalization (inference).

infer_support batchnorm_check(const infer_node_view& node, std::string* reason) {
  if (node.opset < 7) return no(reason, "opset " + std::to_string(node.opset) + " is below 7");
  if (!inputs_f32(node, reason)) return INFER_SUPPORT_NO;
  if (node.num_inputs < 5) return no(reason, "inputs scale, B, mean and var are required");
  for (size_t i = 1; i < 5; ++i)
    if (node_input(node, i) == nullptr)
      return no(reason, "input " + std::to_string(i) + " is missing");
  if (sdk::attr_int(&node, "training_mode", 0) != 0)
    return no(reason, "unsupported attribute training_mode=1");
  if (node.opset < 9 && sdk::attr_int(&node, "spatial", 1) != 1)
    return no(reason, "unsupported attribute spatial=0");
  if (!only_first_output(node, reason)) return INFER_SUPPORT_NO;
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && x->rank < 2) return no(reason, "input must have at least 2 dims");
  return INFER_SUPPORT_YES;
}

bool batchnorm_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& x = in[0];
  if (x.dims.size() < 2)
    return fail(node, error,
                "input must have at least 2 dims (N, C, ...), got " + dims_text(x.dims));
  const int64_t C = x.dims[1];
  int64_t inner = 1;
  for (size_t d = 2; d < x.dims.size(); ++d) inner *= x.dims[d];
  static const char* const kNames[] = {"", "scale", "B", "mean", "var"};
  for (size_t i = 1; i < 5; ++i)
    if (in[i].elements() != C)
      return fail(node, error,
                  std::string(kNames[i]) + " " + dims_text(in[i].dims) + " must hold " +
                      std::to_string(C) + " values for input " + dims_text(x.dims));
  const int64_t n = same_shape_output(node, x, out, error);
  if (n <= 0) return n == 0;
  Dispatch d;
  d.spec = {kLanes, 1, 1};
  d.push = {static_cast<uint32_t>(n), static_cast<uint32_t>(inner), static_cast<uint32_t>(C),
            push_epsilon(node)};
  d.bindings = {Operand::input(0), Operand::input(1), Operand::input(2),
                Operand::input(3), Operand::input(4), Operand::output(0)};
  return add_dispatch(node, "norm_batch", std::move(d), div_up(static_cast<uint64_t>(n), kLanes),
                      out, error);
}

// ---------------------------------------------------------------------------------
// Gelu.

infer_support gelu_check(const infer_node_view& node, std::string* reason) {
  if (!inputs_f32(node, reason)) return INFER_SUPPORT_NO;
  const std::string approx = sdk::attr_string(&node, "approximate", "none");
  if (approx != "none" && approx != "tanh")
    return no(reason, "unsupported attribute approximate=" + approx);
  return INFER_SUPPORT_YES;
}

bool gelu_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
               std::string* error) {
  const TensorDesc& x = in[0];
  const std::string approx = node.attr_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return fail(node, error, "unsupported attribute approximate=" + approx);
  const int64_t n = same_shape_output(node, x, out, error);
  if (n <= 0) return n == 0;
  Dispatch d;
  d.spec = {kLanes, 1, 1, approx == "tanh" ? 1u : 0u};
  d.push = {static_cast<uint32_t>(n)};
  d.bindings = {Operand::input(0), Operand::output(0)};
  return add_dispatch(node, "gelu", std::move(d), div_up(static_cast<uint64_t>(n), kLanes), out,
                      error);
}

// ---------------------------------------------------------------------------------
// Attention (ai.infer).

infer_support attention_check(const infer_node_view& node, std::string* reason) {
  if (!inputs_f32(node, reason)) return INFER_SUPPORT_NO;
  if (node.num_inputs < 3 || node_input(node, 1) == nullptr || node_input(node, 2) == nullptr)
    return no(reason, "inputs Q, K and V are required");
  const infer_attr_view* heads = node_attr(node, "num_heads");
  if (heads == nullptr || heads->type != INFER_ATTR_INT || heads->i < 1)
    return no(reason, "attribute num_heads (int >= 1) is required");
  const infer_attr_view* scale = node_attr(node, "scale");
  if (scale == nullptr || scale->type != INFER_ATTR_FLOAT)
    return no(reason, "attribute scale (float) is required");
  static const char* const kNames[] = {"Q", "K", "V"};
  for (size_t i = 0; i < 3; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v->rank >= 0 && v->rank != 3)
      return no(reason, std::string("input ") + kNames[i] + " must be 3-D");
    if (v->rank == 3 && v->dims[2] >= 0 && v->dims[2] % heads->i != 0)
      return no(reason, std::string("num_heads does not divide the last dim of ") + kNames[i]);
  }
  const infer_value_view* mask = node_input(node, 3);
  if (mask != nullptr && mask->rank > 4) return no(reason, "mask rank is above 4");
  return INFER_SUPPORT_YES;
}

bool attention_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& q = in[0];
  const TensorDesc& k = in[1];
  const TensorDesc& v = in[2];
  const bool has_mask = in.size() > 3 && in[3].present;
  const int64_t H = node.attr_int("num_heads", 0);
  if (H < 1) return fail(node, error, "attribute num_heads must be 1 or more");
  if (q.dims.size() != 3 || k.dims.size() != 3 || v.dims.size() != 3)
    return fail(node, error,
                "Q " + dims_text(q.dims) + ", K " + dims_text(k.dims) + " and V " +
                    dims_text(v.dims) + " must be 3-D [batch, sequence, heads * size]");
  if (q.dims[0] != k.dims[0] || q.dims[0] != v.dims[0] || k.dims[1] != v.dims[1] ||
      q.dims[2] != k.dims[2] || q.dims[2] % H != 0 || v.dims[2] % H != 0)
    return fail(node, error,
                "Q " + dims_text(q.dims) + ", K " + dims_text(k.dims) + " and V " +
                    dims_text(v.dims) + " do not fit together with num_heads " + std::to_string(H));
  const int64_t B = q.dims[0], Sq = q.dims[1], Sk = k.dims[1];
  const int64_t Dk = q.dims[2] / H, Dv = v.dims[2] / H;
  const Dims scores = {B, H, Sq, Sk};
  uint32_t mask_stride[4] = {0, 0, 0, 0};
  if (has_mask) {
    const Dims& m = in[3].dims;
    if (m.size() > 4) return fail(node, error, "mask " + dims_text(m) + " has more than 4 dims");
    const size_t lead = 4 - m.size();
    int64_t stride = 1;
    for (size_t i = m.size(); i-- > 0;) {
      if (m[i] != 1 && m[i] != scores[lead + i])
        return fail(
            node, error,
            "mask " + dims_text(m) + " does not broadcast to the scores " + dims_text(scores));
      mask_stride[lead + i] = m[i] == 1 ? 0u : static_cast<uint32_t>(stride);
      stride *= m[i];
    }
  }
  out->outputs.push_back(TensorDesc{INFER_DTYPE_FLOAT32, {B, Sq, H * Dv}});
  if (B * Sq * H * Dv == 0) return true;
  if (Sk == 0) return fail(node, error, "K and V have no positions (Sk = 0)");
  const int64_t score_count = B * H * Sq * Sk;
  if (score_count >= kMaxElements || q.elements() >= kMaxElements || k.elements() >= kMaxElements ||
      v.elements() >= kMaxElements)
    return fail(node, error, "the scores " + dims_text(scores) + " are too large");
  if (B * H > 65535) return fail(node, error, "batch * heads is above 65535");
  out->temps.push_back(static_cast<uint64_t>(score_count) * sizeof(float));

  Dispatch s;
  if (!get_shader(node, "attention_scores", &s, error)) return false;
  s.spec = {kTile, kTile, 1, has_mask ? 1u : 0u};
  s.push = {static_cast<uint32_t>(Sq),
            static_cast<uint32_t>(Sk),
            static_cast<uint32_t>(Dk),
            static_cast<uint32_t>(H),
            push_float(static_cast<float>(node.attr_float("scale", 1.0))),
            mask_stride[0],
            mask_stride[1],
            mask_stride[2],
            mask_stride[3]};
  s.bindings = {Operand::input(0), Operand::input(1),
                has_mask ? Operand::input(3) : Operand::input(0), Operand::temp(0)};
  s.groups[0] = div_up(static_cast<uint64_t>(Sk), kTile);
  s.groups[1] = div_up(static_cast<uint64_t>(Sq), kTile);
  s.groups[2] = static_cast<uint32_t>(B * H);
  out->dispatches.push_back(std::move(s));

  Dispatch sm;
  sm.spec = {row_lanes(Sk), 1, 1};
  sm.push = {static_cast<uint32_t>(B * H * Sq), static_cast<uint32_t>(Sk)};
  sm.bindings = {Operand::temp(0)};
  if (!add_dispatch(node, "attention_softmax", std::move(sm), static_cast<uint64_t>(B * H * Sq),
                    out, error))
    return false;

  Dispatch pv;
  if (!get_shader(node, "attention_pv", &pv, error)) return false;
  pv.spec = {kTile, kTile, 1};
  pv.push = {static_cast<uint32_t>(Sq), static_cast<uint32_t>(Sk), static_cast<uint32_t>(Dv),
             static_cast<uint32_t>(H)};
  pv.bindings = {Operand::temp(0), Operand::input(2), Operand::output(0)};
  pv.groups[0] = div_up(static_cast<uint64_t>(Dv), kTile);
  pv.groups[1] = div_up(static_cast<uint64_t>(Sq), kTile);
  pv.groups[2] = static_cast<uint32_t>(B * H);
  out->dispatches.push_back(std::move(pv));
  return true;
}

double attention_flops(const infer_node_view& node) {
  const infer_value_view* q = node_input(node, 0);
  const infer_value_view* k = node_input(node, 1);
  const infer_value_view* v = node_input(node, 2);
  if (q == nullptr || k == nullptr || v == nullptr || q->rank != 3 || k->rank != 3 || v->rank != 3)
    return -1;
  const double qn = view_elements(q), vn = view_elements(v);
  if (qn < 0 || vn < 0 || k->dims[1] < 0) return -1;
  const int64_t H = sdk::attr_int(&node, "num_heads", 1);
  const double sk = static_cast<double>(k->dims[1]);
  const double sq = static_cast<double>(q->dims[1]);
  const double b = static_cast<double>(q->dims[0]);
  // Q·Kᵀ over every head is 2·(B·Sq·H·Dk)·Sk; P·V is 2·(B·Sq·H·Dv)·Sk; softmax ~5 per score.
  return 2 * qn * sk + 2 * (vn / sk) * sq * sk + 5 * b * static_cast<double>(H) * sq * sk;
}

}  // namespace

void add_norm_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "Softmax", softmax_check, softmax_plan, per_element_flops<5>});
  table.push_back({"", "LogSoftmax", softmax_check, softmax_plan, per_element_flops<5>});
  table.push_back(
      {"", "LayerNormalization", layernorm_check, layernorm_plan, per_element_flops<8>});
  table.push_back(
      {"ai.infer", "LayerNormalization", layernorm_check, layernorm_plan, per_element_flops<8>});
  table.push_back(
      {"", "InstanceNormalization", instancenorm_check, instancenorm_plan, per_element_flops<8>});
  table.push_back(
      {"", "BatchNormalization", batchnorm_check, batchnorm_plan, per_element_flops<2>});
  table.push_back({"", "Gelu", gelu_check, gelu_plan, per_element_flops<12>});
  table.push_back({"ai.infer", "Gelu", gelu_check, gelu_plan, per_element_flops<12>});
  table.push_back({"ai.infer", "Attention", attention_check, attention_plan, attention_flops});
}

}  // namespace infer::vk
