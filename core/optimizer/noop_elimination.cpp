#include "optimizer/noop_elimination.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/constant_folding.hpp"

namespace infer::optimizer {
namespace {

bool present(const ir::Node& node, size_t input) {
  return input < node.inputs.size() && node.inputs[input] != ir::kNoValue;
}

// An output nobody can observe: omitted, or without readers, not a graph output and not
// captured.
bool unused_output(const ir::Node& node, size_t output, const GraphIndex& index) {
  if (output >= node.outputs.size() || node.outputs[output] == ir::kNoValue) return true;
  const ir::ValueId v = node.outputs[output];
  return index.consumers(v).empty() && !index.is_graph_output(v) && !index.is_captured(v);
}

bool is_noop_dropout(const ir::Graph& graph, const ir::Node& node, const GraphIndex& index,
                     int64_t opset) {
  if (!unused_output(node, 1, index)) return false;
  // Before opset 12 there is no training mode an inference runtime could honour.
  if (opset < 12 || !present(node, 2)) return true;
  std::optional<bool> training = bool_constant(graph, node.inputs[2]);
  return training.has_value() && !*training;
}

bool is_noop_cast(const ir::Graph& graph, const ir::Node& node) {
  const ir::Attribute* to = node.attr("to");
  if (to == nullptr || to->type != ir::AttrType::kInt || !present(node, 0)) return false;
  const DataType in = graph.value(node.inputs[0]).dtype;
  return in != DataType::kUndefined && static_cast<int64_t>(in) == to->i;
}

bool is_noop_transpose(const ir::Graph& graph, const ir::Node& node) {
  const ir::Attribute* perm = node.attr("perm");
  if (perm == nullptr) {
    // The default reverses the dims: a no-op only for rank 0 and 1.
    const ir::Shape& s = graph.value(node.inputs[0]).shape;
    return s.rank_known() && s.rank() <= 1;
  }
  for (size_t i = 0; i < perm->ints.size(); ++i)
    if (perm->ints[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool is_noop_pad(const ir::Graph& graph, const ir::Node& node, int64_t opset) {
  std::optional<std::vector<int64_t>> pads;
  if (opset >= 11) {
    if (!present(node, 1)) return false;
    pads = int_constant(graph, node.inputs[1]);
  } else {
    const ir::Attribute* a = node.attr("pads");
    if (a == nullptr) a = node.attr("paddings");  // opset 1's name
    if (a != nullptr) pads = a->ints;
  }
  if (!pads) return false;
  for (int64_t p : *pads)
    if (p != 0) return false;
  return true;
}

// The constant int list of Slice's input `input` (opset 10+) or attribute `attr`.
std::optional<std::vector<int64_t>> slice_param(const ir::Graph& graph, const ir::Node& node,
                                                int64_t opset, size_t input,
                                                const std::string& attr) {
  if (opset >= 10) {
    if (!present(node, input)) return std::nullopt;
    return int_constant(graph, node.inputs[input]);
  }
  const ir::Attribute* a = node.attr(attr);
  if (a == nullptr) return std::nullopt;
  return a->ints;
}

bool is_noop_slice(const ir::Graph& graph, const ir::Node& node, int64_t opset) {
  const ir::Shape& shape = graph.value(node.inputs[0]).shape;
  if (!shape.rank_known()) return false;
  const auto rank = static_cast<int64_t>(shape.rank());
  auto starts = slice_param(graph, node, opset, 1, "starts");
  auto ends = slice_param(graph, node, opset, 2, "ends");
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::vector<int64_t> axes;
  const bool has_axes = opset >= 10 ? present(node, 3) : node.attr("axes") != nullptr;
  if (has_axes) {
    auto a = slice_param(graph, node, opset, 3, "axes");
    if (!a) return false;
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> steps(starts->size(), 1);
  if (opset >= 10 && present(node, 4)) {
    auto s = int_constant(graph, node.inputs[4]);
    if (!s) return false;
    steps = *s;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size()) return false;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || steps[i] != 1) return false;
    const ir::Dim& d = (*shape.dims)[static_cast<size_t>(axis)];
    const int64_t start = (*starts)[i];
    const int64_t end = (*ends)[i];
    if (!d.is_known()) {
      // Only the canonical "everything" survives without the size.
      if (start != 0 || end != kMax) return false;
      continue;
    }
    // A negative start counts from the end and clamps at 0: anything <= -dim is 0.
    if (!(start == 0 || (start < 0 && start <= -d.value))) return false;
    if (end < d.value) return false;
  }
  return true;
}

bool is_noop(const ir::Graph& graph, const ir::Node& node, const GraphIndex& index, int64_t opset) {
  if (!(node.domain.empty() || node.domain == "ai.onnx") || has_subgraphs(node)) return false;
  if (!present(node, 0) || node.outputs.empty() || node.outputs[0] == ir::kNoValue) return false;
  const ir::Value& in = graph.value(node.inputs[0]);
  const ir::Value& out = graph.value(node.outputs[0]);
  const std::string& op = node.op_type;
  if (op == "Identity") return node.outputs.size() == 1;
  if (op == "Dropout") return is_noop_dropout(graph, node, index, opset);
  if (op == "Cast") return is_noop_cast(graph, node);
  if (op == "Reshape" || op == "Expand") return same_shape(in.shape, out.shape);
  if (op == "Transpose") return is_noop_transpose(graph, node);
  if (op == "Pad") return is_noop_pad(graph, node, opset);
  if (op == "Slice") return is_noop_slice(graph, node, opset);
  return false;
}

}  // namespace

Result<int> NoopElimination::apply(ir::Graph& graph, const PassContext& context) {
  const GraphIndex index(graph);
  const int64_t opset = context.opset();
  std::vector<bool> remove(graph.node_count(), false);
  int removed = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& node = graph.node(id);
    if (!is_noop(graph, node, index, opset)) continue;
    if (remove_forwarding_node(graph, index, id, node.inputs[0], node.outputs[0], remove))
      ++removed;
  }
  if (removed > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return removed;
}

}  // namespace infer::optimizer
