#include "partitioner/grouping.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "partitioner/graph_deps.hpp"

namespace infer::partitioner {
namespace {

void fill_inputs_and_outputs(const ir::Graph& g, const std::vector<ir::NodeId>& producers,
                             const std::vector<size_t>& partition_of_node,
                             std::vector<Partition>& parts) {
  const auto consumers = g.consumers();
  std::set<ir::ValueId> graph_outputs(g.outputs.begin(), g.outputs.end());
  for (size_t p = 0; p < parts.size(); ++p) {
    Partition& part = parts[p];
    std::set<ir::ValueId> seen_inputs;
    for (ir::NodeId id : part.nodes) {
      for (ir::ValueId v : g.node(id).inputs) {
        if (v == ir::kNoValue || g.value(v).is_constant()) continue;
        const ir::NodeId producer = producers[v];
        const bool produced_here = producer != kNoNode && partition_of_node[producer] == p;
        if (!produced_here && seen_inputs.insert(v).second) part.inputs.push_back(v);
      }
    }
    for (ir::NodeId id : part.nodes) {
      for (ir::ValueId v : g.node(id).outputs) {
        if (v == ir::kNoValue) continue;
        bool escapes = graph_outputs.count(v) > 0;
        for (ir::NodeId c : consumers[v])
          if (partition_of_node[c] != p) escapes = true;
        if (escapes) part.outputs.push_back(v);
      }
    }
  }
}

}  // namespace

std::vector<Partition> group_partitions(const ir::Graph& g,
                                        const std::vector<NodeAssignment>& assignments,
                                        std::vector<size_t>& partition_of_node) {
  const auto deps = node_dependencies(g);
  const auto producers = value_producers(g);
  std::vector<Partition> parts;
  std::vector<std::set<size_t>> part_deps;
  std::map<size_t, size_t> latest_of_backend;  // backend -> most recent partition
  partition_of_node.assign(g.node_count(), kHost);

  for (ir::NodeId id = 0; id < g.node_count(); ++id) {
    const size_t backend = assignments[id].backend;
    std::set<size_t> reads;
    for (ir::ValueId v : deps[id]) {
      if (producers[v] != kNoNode) reads.insert(partition_of_node[producers[v]]);
    }
    const size_t latest_read = reads.empty() ? 0 : *reads.rbegin();
    auto it = latest_of_backend.find(backend);
    size_t target;
    if (it != latest_of_backend.end() && (reads.empty() || latest_read <= it->second)) {
      target = it->second;
    } else {
      target = parts.size();
      Partition fresh;
      fresh.name = "p" + std::to_string(target);
      fresh.backend = backend;
      parts.push_back(std::move(fresh));
      part_deps.emplace_back();
      latest_of_backend[backend] = target;
    }
    parts[target].nodes.push_back(id);
    partition_of_node[id] = target;
    for (size_t r : reads)
      if (r != target) part_deps[target].insert(r);
  }
  for (size_t p = 0; p < parts.size(); ++p)
    parts[p].depends_on.assign(part_deps[p].begin(), part_deps[p].end());
  fill_inputs_and_outputs(g, producers, partition_of_node, parts);
  return parts;
}

}  // namespace infer::partitioner
