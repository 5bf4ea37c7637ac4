#include "partitioner/graph_deps.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace infer::partitioner {
namespace {

void collect_captured_names(const ir::Graph& graph, std::set<std::string>& names) {
  for (ir::ValueId v = 0; v < graph.value_count(); ++v)
    if (graph.value(v).outer_scope) names.insert(graph.value(v).name);
  for (const ir::Node& node : graph.nodes())
    for (const ir::Attribute& attr : node.attributes)
      for (const auto& sub : attr.graphs)
        if (sub) collect_captured_names(*sub, names);
}

}  // namespace

std::vector<std::vector<ir::ValueId>> node_dependencies(const ir::Graph& graph) {
  std::vector<std::vector<ir::ValueId>> deps(graph.node_count());
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& node = graph.node(id);
    for (ir::ValueId v : node.inputs)
      if (v != ir::kNoValue) deps[id].push_back(v);
    std::set<std::string> captured;
    for (const ir::Attribute& attr : node.attributes)
      for (const auto& sub : attr.graphs)
        if (sub) collect_captured_names(*sub, captured);
    for (const std::string& name : captured)
      if (auto v = graph.find_value(name)) deps[id].push_back(*v);
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
  f.readers.resize(graph.value_count());
  f.is_output.assign(graph.value_count(), false);
  for (ir::ValueId v : graph.outputs)
    if (v != ir::kNoValue && v < graph.value_count()) f.is_output[v] = true;
  f.neighbours.resize(graph.node_count());
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    for (ir::ValueId v : graph.node(id).inputs) {
      if (v == ir::kNoValue) continue;
      auto& r = f.readers[v];
      if (r.empty() || r.back() != id) r.push_back(id);
    }
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
