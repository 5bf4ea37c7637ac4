#include "partitioner/graph_deps.hpp"

#include <algorithm>

namespace infer::partitioner {

std::vector<std::vector<ir::ValueId>> node_dependencies(const ir::Graph& graph) {
  std::vector<std::vector<ir::ValueId>> deps(graph.node_count());
  std::vector<std::vector<ir::ValueId>> implicit = graph.all_implicit_inputs();
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    for (ir::ValueId v : graph.node(id).inputs)
      if (v != ir::kNoValue) deps[id].push_back(v);
    deps[id].insert(deps[id].end(), implicit[id].begin(), implicit[id].end());
  }
  return deps;
}

std::vector<ir::NodeId> value_producers(const ir::Graph& graph) {
  std::vector<ir::NodeId> producers(graph.value_count(), kNoNode);
  for (ir::NodeId id = 0; id < graph.node_count(); ++id)
    for (ir::ValueId v : graph.node(id).outputs)
      if (v != ir::kNoValue && v < producers.size()) producers[v] = id;
  return producers;
}

GraphFacts graph_facts(const ir::Graph& graph) {
  GraphFacts f;
  f.deps = node_dependencies(graph);
  f.producers = value_producers(graph);
  f.consumers.resize(graph.value_count());
  f.is_output.assign(graph.value_count(), false);
  for (ir::ValueId v : graph.outputs)
    if (v != ir::kNoValue && v < graph.value_count()) f.is_output[v] = true;
  f.neighbours.resize(graph.node_count());
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    for (ir::ValueId v : f.deps[id]) {
      auto& c = f.consumers[v];
      if (c.empty() || c.back() != id) c.push_back(id);  // nodes are visited in order
      const ir::NodeId p = f.producers[v];
      if (p != kNoNode && p != id) {
        f.neighbours[id].push_back(p);
        f.neighbours[p].push_back(id);
      }
    }
  }
  for (auto& n : f.neighbours) {
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
  }
  return f;
}

}  // namespace infer::partitioner
