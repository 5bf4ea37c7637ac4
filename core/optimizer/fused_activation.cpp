#include "optimizer/fused_activation.hpp"

#include <cmath>
#include <limits>

#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {

bool is_fusion_float(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 ||
         dtype == DataType::kBFloat16 || dtype == DataType::kFloat64;
}

bool is_onnx_op(const ir::Node& node, const char* op) {
  return node.domain.empty() && node.op_type == op && !has_subgraphs(node);
}

bool is_fused_op(const ir::Node& node, const char* op) {
  return node.domain == kFusedDomain && node.op_type == op;
}

bool has_activation(const ir::Node& node) { return !node.attr_string("activation", "").empty(); }

namespace {

// A Clip bound: an omitted input is unbounded; a present one must be a constant scalar
// (a tensor computed at run time cannot become an attribute).
std::optional<double> clip_bound(const ir::Graph& graph, const ir::Node& node, size_t slot,
                                 double unbounded) {
  if (slot >= node.inputs.size() || node.inputs[slot] == ir::kNoValue) return unbounded;
  std::optional<double> v = scalar_constant(graph, node.inputs[slot]);
  if (!v || std::isnan(*v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<FusedActivation> match_activation(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue) return std::nullopt;
  if (node.outputs.size() != 1 || node.outputs[0] == ir::kNoValue) return std::nullopt;
  const bool onnx = node.domain.empty() && !has_subgraphs(node);
  const std::string& op = node.op_type;
  // Every activation below except Clip reads exactly one input; an extra one would be a
  // malformed node that the fused operator must not silently drop.
  const bool unary = node.inputs.size() == 1;
  if (onnx && unary && (op == "Relu" || op == "Tanh" || op == "Sigmoid" || op == "HardSwish"))
    return FusedActivation{op, {}};
  if (onnx && unary && op == "LeakyRelu")
    return FusedActivation{op, {node.attr_float("alpha", 0.01)}};
  if (onnx && unary && op == "HardSigmoid")
    return FusedActivation{op, {node.attr_float("alpha", 0.2), node.attr_float("beta", 0.5)}};
  if (onnx && op == "Clip" && node.inputs.size() <= 3) {
    const double inf = std::numeric_limits<double>::infinity();
    // Clip-6 (opset 6 to 10) takes its bounds as attributes, defaulting to the float
    // range; Clip-11 and newer as inputs. A node with both is malformed.
    const bool attribute_form = node.attr("min") != nullptr || node.attr("max") != nullptr;
    if (attribute_form) {
      if (node.inputs.size() != 1) return std::nullopt;
      const double lo = node.attr_float("min", -inf), hi = node.attr_float("max", inf);
      if (std::isnan(lo) || std::isnan(hi)) return std::nullopt;
      return FusedActivation{op, {lo, hi}};
    }
    std::optional<double> lo = clip_bound(graph, node, 1, -inf);
    std::optional<double> hi = clip_bound(graph, node, 2, inf);
    if (!lo || !hi) return std::nullopt;
    return FusedActivation{op, {*lo, *hi}};
  }
  // Gelu: ours (produced by the gelu fusion) or ONNX's own (opset 20).
  if (unary && ((node.domain == kFusedDomain && op == "Gelu") || (onnx && op == "Gelu"))) {
    const std::string approximate = node.attr_string("approximate", "none");
    if (approximate == "none") return FusedActivation{"Gelu", {}};
    if (approximate == "tanh") return FusedActivation{"GeluTanh", {}};
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::vector<double>> per_channel_constant(const ir::Graph& graph, ir::ValueId c,
                                                        size_t rank, int64_t channels) {
  const ir::TensorData* t = constant_of(graph, c);
  if (t == nullptr || t->dims().size() > rank) return std::nullopt;
  const std::vector<int64_t>& dims = t->dims();
  const size_t offset = rank - dims.size();  // right alignment
  int64_t channel_dim = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const size_t axis = offset + i;
    if (axis == 1)
      channel_dim = dims[i];
    else if (dims[i] != 1)
      return std::nullopt;
  }
  if (channel_dim != 1 && channel_dim != channels) return std::nullopt;
  std::optional<std::vector<double>> values = float_constant(graph, c);
  if (!values) return std::nullopt;
  if (channel_dim == 1) return std::vector<double>(static_cast<size_t>(channels), (*values)[0]);
  return values;
}

const char* fused_form_of(const ir::Node& anchor) {
  if (anchor.outputs.size() != 1) return nullptr;
  if (is_onnx_op(anchor, "Conv")) return "FusedConv";
  if (is_onnx_op(anchor, "Gemm")) return "FusedGemm";
  if (is_onnx_op(anchor, "MatMul")) return "FusedMatMul";
  for (const char* op : {"FusedConv", "FusedGemm", "FusedMatMul"})
    if (is_fused_op(anchor, op)) return has_activation(anchor) ? nullptr : op;
  return nullptr;
}

void set_activation(ir::Node& node, const FusedActivation& activation) {
  set_attr(node, attr_string("activation", activation.name));
  if (activation.params.empty())
    remove_attr(node, "activation_params");
  else
    set_attr(node, attr_floats("activation_params", activation.params));
}

}  // namespace infer::optimizer
