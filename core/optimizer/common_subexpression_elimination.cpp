#include "optimizer/common_subexpression_elimination.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "optimizer/constant_folding.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool same_tensor(const ir::TensorData& a, const ir::TensorData& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() && a.size_bytes() == b.size_bytes() &&
         (a.size_bytes() == 0 || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

// Floats compare by bit pattern: 0.0 and -0.0 are different attributes (and NaN equals
// itself), which "exactly the same node" requires.
bool same_double(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool same_attribute(const ir::Attribute& a, const ir::Attribute& b) {
  if (a.name != b.name || a.type != b.type || a.i != b.i || a.s != b.s || a.ints != b.ints ||
      a.strings != b.strings || !same_double(a.f, b.f) || a.floats.size() != b.floats.size() ||
      a.tensors.size() != b.tensors.size() || !a.graphs.empty() || !b.graphs.empty())
    return false;
  for (size_t i = 0; i < a.floats.size(); ++i)
    if (!same_double(a.floats[i], b.floats[i])) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (!a.tensors[i] || !b.tensors[i]) {
      if (a.tensors[i] != b.tensors[i]) return false;
    } else if (!same_tensor(*a.tensors[i], *b.tensors[i])) {
      return false;
    }
  }
  return true;
}

std::vector<const ir::Attribute*> sorted_attributes(const ir::Node& node) {
  std::vector<const ir::Attribute*> attrs;
  for (const ir::Attribute& a : node.attributes) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(),
            [](const ir::Attribute* x, const ir::Attribute* y) { return x->name < y->name; });
  return attrs;
}

bool same_computation(const ir::Node& a, const ir::Node& b) {
  if (a.domain != b.domain || a.op_type != b.op_type || a.inputs != b.inputs ||
      a.outputs.size() != b.outputs.size() || a.attributes.size() != b.attributes.size())
    return false;
  const auto aa = sorted_attributes(a);
  const auto ba = sorted_attributes(b);
  for (size_t i = 0; i < aa.size(); ++i)
    if (!same_attribute(*aa[i], *ba[i])) return false;
  return true;
}

bool mergeable(const ir::Node& node) {
  const bool known_domain = node.domain.empty() || node.domain == "ai.onnx" ||
                            node.domain == "ai.onnx.ml" || node.domain == "ai.infer";
  // Dropout is random in training mode; in inference noop_elimination removes it anyway.
  return known_domain && !node.inputs.empty() && !has_subgraphs(node) && !is_random_op(node) &&
         node.op_type != "Dropout";
}

// The part of a node's identity that is cheap to hash; same_computation() decides.
std::string signature(const ir::Node& node) {
  std::string key = node.domain + '\n' + node.op_type + '\n';
  for (ir::ValueId v : node.inputs) key += std::to_string(v) + ',';
  key += '\n';
  for (const ir::Attribute* a : sorted_attributes(node)) key += a->name + ',';
  return key;
}

// Redirects node inputs reading a duplicate small constant to the first identical one.
int merge_constants(ir::Graph& graph) {
  std::vector<bool> is_input(graph.value_count(), false);
  for (ir::ValueId v : graph.inputs)
    if (v < is_input.size()) is_input[v] = true;
  std::unordered_multimap<size_t, ir::ValueId> seen;
  std::vector<ir::ValueId> canonical(graph.value_count(), ir::kNoValue);
  bool any = false;
  for (ir::ValueId v = 0; v < graph.value_count(); ++v) {
    const ir::Value& value = graph.value(v);
    if (!value.is_constant() || value.quant || value.outer_scope || is_input[v] ||
        value.constant->size_bytes() > CommonSubexpressionElimination::kMaxConstantBytes)
      continue;
    const ir::TensorData& t = *value.constant;
    const size_t h = std::hash<std::string_view>{}(
                         std::string_view(static_cast<const char*>(t.data()), t.size_bytes())) ^
                     (static_cast<size_t>(t.dtype()) * 0x9e3779b97f4a7c15ull) ^
                     (t.dims().size() << 7);
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      if (same_tensor(*graph.value(it->second).constant, t)) {
        canonical[v] = it->second;
        any = true;
        break;
      }
    }
    if (canonical[v] == ir::kNoValue) seen.emplace(h, v);
  }
  if (!any) return 0;
  // One rewrite per duplicate that some node still read.
  std::vector<bool> redirected(graph.value_count(), false);
  int count = 0;
  for (ir::Node& node : graph.mutable_nodes())
    for (ir::ValueId& in : node.inputs)
      if (in != ir::kNoValue && in < canonical.size() && canonical[in] != ir::kNoValue) {
        if (!redirected[in]) ++count;
        redirected[in] = true;
        in = canonical[in];
      }
  return count;
}

// Whether every output of `later` can be replaced by the same output of `earlier`,
// mirroring bypass()'s conditions so that no merge stops halfway.
bool outputs_replaceable(const ir::Graph& graph, const GraphIndex& index, const ir::Node& earlier,
                         const ir::Node& later) {
  for (size_t j = 0; j < later.outputs.size(); ++j) {
    const ir::ValueId dropped = later.outputs[j];
    if (dropped == ir::kNoValue) continue;
    const ir::ValueId kept = earlier.outputs[j];
    if (kept == ir::kNoValue) return false;
    if (index.is_graph_output(dropped) || index.is_captured(dropped)) {
      if (index.is_graph_output(kept) || index.is_captured(kept)) return false;
      if (graph.value(kept).dtype != graph.value(dropped).dtype) return false;
    }
  }
  return true;
}

}  // namespace

Result<int> CommonSubexpressionElimination::apply(ir::Graph& graph, const PassContext&) {
  int rewrites = merge_constants(graph);
  // The index reads producers from the graph; merges below that move an output name
  // rebuild the links so that it stays right.
  graph.rebuild_links();
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  std::unordered_map<std::string, std::vector<ir::NodeId>> table;
  int merged = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& node = graph.node(id);
    if (!mergeable(node)) continue;
    std::vector<ir::NodeId>& candidates = table[signature(node)];
    ir::NodeId match = ir::kNoNode;
    for (ir::NodeId c : candidates)
      if (same_computation(graph.node(c), node) &&
          outputs_replaceable(graph, index, graph.node(c), node)) {
        match = c;
        break;
      }
    if (match == ir::kNoNode) {
      candidates.push_back(id);
      continue;
    }
    bool renamed = false;
    const std::vector<ir::ValueId> outputs = node.outputs;
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (outputs[j] == ir::kNoValue) continue;
      renamed = renamed || index.is_graph_output(outputs[j]) || index.is_captured(outputs[j]);
      // Cannot fail: outputs_replaceable() checked bypass()'s conditions.
      bypass(graph, index, graph.node(match).outputs[j], outputs[j]);
    }
    ir::Node& gone = graph.node(id);
    gone.inputs.clear();
    gone.outputs.clear();
    remove[id] = true;
    if (renamed) graph.rebuild_links();
    ++merged;
  }
  if (rewrites + merged > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return rewrites + merged;
}

}  // namespace infer::optimizer
