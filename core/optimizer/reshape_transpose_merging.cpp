#include "optimizer/reshape_transpose_merging.hpp"

#include <cstdint>
#include <optional>
#include <vector>

#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool is_onnx(const ir::Node& node, const char* op) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op;
}

bool has_input(const ir::Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != ir::kNoValue;
}

// Whether Reshape(mid, s2) may read x instead of mid (= Reshape(x, s1)).
bool can_merge_reshape(const ir::Graph& graph, const ir::Node& outer, ir::ValueId x,
                       ir::ValueId mid) {
  if (!has_input(outer, 1)) return false;
  std::optional<std::vector<int64_t>> s2 = int_constant(graph, outer.inputs[1]);
  if (!s2) return false;
  bool has_zero = false;
  for (int64_t d : *s2) has_zero = has_zero || d == 0;
  if (!has_zero) return true;
  if (outer.attr_int("allowzero", 0) != 0) return false;
  // Each 0 copies dim i of mid; reading x instead must copy the same size.
  const ir::Shape& xs = graph.value(x).shape;
  const ir::Shape& ms = graph.value(mid).shape;
  if (!xs.rank_known() || !ms.rank_known()) return false;
  for (size_t i = 0; i < s2->size(); ++i) {
    if ((*s2)[i] != 0) continue;
    if (i >= xs.rank() || i >= ms.rank() || !same_dim((*xs.dims)[i], (*ms.dims)[i])) return false;
  }
  return true;
}

// The permutation of a Transpose: its attribute, or the reversal for a known rank.
std::optional<std::vector<int64_t>> permutation(const ir::Graph& graph, const ir::Node& node) {
  std::vector<int64_t> perm;
  if (const ir::Attribute* a = node.attr("perm")) {
    perm = a->ints;
  } else {
    const ir::Shape& s = graph.value(node.inputs[0]).shape;
    if (!s.rank_known()) return std::nullopt;
    for (size_t i = s.rank(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
      return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

Result<int> ReshapeTransposeMerging::apply(ir::Graph& graph, const PassContext&) {
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int merged = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& outer = graph.node(id);
    const bool reshape = is_onnx(outer, "Reshape");
    if ((!reshape && !is_onnx(outer, "Transpose")) || !has_input(outer, 0)) continue;
    const ir::ValueId mid = outer.inputs[0];
    const ir::NodeId inner_id = index.producer_id(mid);
    if (inner_id == ir::kNoNode || remove[inner_id] || !index.has_single_use(mid)) continue;
    const ir::Node& inner = graph.node(inner_id);
    if (!is_onnx(inner, reshape ? "Reshape" : "Transpose") || !has_input(inner, 0)) continue;
    const ir::ValueId x = inner.inputs[0];

    if (reshape) {
      if (!can_merge_reshape(graph, outer, x, mid)) continue;
      graph.node(id).inputs[0] = x;
    } else {
      std::optional<std::vector<int64_t>> p1 = permutation(graph, inner);
      std::optional<std::vector<int64_t>> p2 = permutation(graph, outer);
      if (!p1 || !p2 || p1->size() != p2->size()) continue;
      // out[i] = mid[p2[i]] = x[p1[p2[i]]].
      std::vector<int64_t> perm(p2->size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = (*p1)[static_cast<size_t>((*p2)[i])];
      ir::Node& out_node = graph.node(id);
      out_node.inputs[0] = x;
      set_attr(out_node, attr_ints("perm", perm));
      // The pair cancels: the outer node now forwards x. When bypass() refuses (x is a
      // graph input and the output a graph output) the identity Transpose stays.
      if (is_identity(perm))
        remove_forwarding_node(graph, index, id, x, out_node.outputs[0], remove);
    }
    remove[inner_id] = true;
    ++merged;
  }
  if (merged > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return merged;
}

}  // namespace infer::optimizer
