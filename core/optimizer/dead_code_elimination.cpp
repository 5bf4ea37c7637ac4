#include "optimizer/dead_code_elimination.hpp"

#include <vector>

namespace infer::optimizer {
namespace {

int eliminate(ir::Graph& graph) {
  int removed = 0;
  // Bodies first: a capture that only dead body code needed must not keep the
  // enclosing graph's producer alive.
  for (ir::Node& node : graph.mutable_nodes())
    for (ir::Attribute& attr : node.attributes)
      for (auto& sub : attr.graphs)
        if (sub) removed += eliminate(*sub);

  std::vector<bool> live(graph.value_count(), false);
  for (ir::ValueId out : graph.outputs)
    if (out != ir::kNoValue && out < live.size()) live[out] = true;

  const size_t n = graph.node_count();
  std::vector<bool> remove(n, false);
  bool any_removed = false;
  // Reverse topological order: every consumer is decided before its producers.
  for (size_t i = n; i-- > 0;) {
    const ir::Node& node = graph.node(static_cast<ir::NodeId>(i));
    bool node_live = false;
    for (ir::ValueId out : node.outputs)
      if (out != ir::kNoValue && out < live.size() && live[out]) node_live = true;
    if (!node_live) {
      remove[i] = true;
      any_removed = true;
      ++removed;
      continue;
    }
    for (ir::ValueId in : node.inputs)
      if (in != ir::kNoValue && in < live.size()) live[in] = true;
    for (ir::ValueId v : graph.implicit_inputs(static_cast<ir::NodeId>(i)))
      if (v < live.size()) live[v] = true;
  }
  if (any_removed) {
    graph.erase_nodes(remove);
    graph.rebuild_links();
  }
  // Constants nothing reads any more (weights replaced by folded ones, folded Shape
  // arithmetic) give their bytes back; the value entry stays, so ids remain valid. This
  // is not a rewrite of the graph: what it computes is unchanged.
  std::vector<bool> is_input(graph.value_count(), false);
  for (ir::ValueId in : graph.inputs)
    if (in < is_input.size()) is_input[in] = true;
  // A quantization descriptor names its scale and zero point: plugins read them through
  // the quantized value even when no node does.
  for (ir::ValueId v = 0; v < graph.value_count(); ++v)
    if (const auto& q = graph.value(v).quant)
      for (ir::ValueId ref : {q->scale, q->zero_point})
        if (ref != ir::kNoValue && ref < live.size()) live[ref] = true;
  for (ir::ValueId v = 0; v < graph.value_count(); ++v) {
    ir::Value& value = graph.value(v);
    if (value.is_constant() && !live[v] && !is_input[v] && !value.outer_scope)
      value.constant.reset();
  }
  return removed;
}

}  // namespace

Result<int> DeadCodeElimination::apply(ir::Graph& graph, const PassContext&) {
  return eliminate(graph);
}

}  // namespace infer::optimizer
