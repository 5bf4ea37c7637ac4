#include "partitioner/graph_deps.hpp"

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

}  // namespace infer::partitioner
