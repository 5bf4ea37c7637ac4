#include "partitioner/grouping.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <string>

namespace infer::partitioner {
namespace {

// Above this many partitions after the walk, the merge step is skipped: its reachability
// sets grow with the square of the count, and such fragmented plans come from graphs
// whose backends alternate on nearly every node, where merges are rare anyway.
constexpr size_t kMaxPartitionsToMerge = 256;

void fill_inputs_and_outputs(const ir::Graph& g, const GraphFacts& f,
                             const std::vector<size_t>& partition_of_node,
                             std::vector<Partition>& parts) {
  std::set<ir::ValueId> graph_outputs(g.outputs.begin(), g.outputs.end());
  for (size_t p = 0; p < parts.size(); ++p) {
    Partition& part = parts[p];
    std::set<ir::ValueId> seen_inputs;
    // Explicit inputs and subgraph captures alike: an If/Loop/Scan body runs where its
    // node runs and reads its captures there.
    for (ir::NodeId id : part.nodes) {
      for (ir::ValueId v : f.deps[id]) {
        if (g.value(v).is_constant()) continue;
        const ir::NodeId producer = f.producers[v];
        const bool produced_here = producer != kNoNode && partition_of_node[producer] == p;
        if (!produced_here && seen_inputs.insert(v).second) part.inputs.push_back(v);
      }
    }
    for (ir::NodeId id : part.nodes) {
      for (ir::ValueId v : g.node(id).outputs) {
        if (v == ir::kNoValue) continue;
        bool escapes = graph_outputs.count(v) > 0;
        for (ir::NodeId c : f.consumers[v])
          if (partition_of_node[c] != p) escapes = true;
        if (escapes) part.outputs.push_back(v);
      }
    }
  }
}

// The walk: returns each node's group, groups numbered in creation order.
std::vector<size_t> walk(const ir::Graph& g, const GraphFacts& f,
                         const std::vector<size_t>& backend_of, std::vector<size_t>& group_backend) {
  std::vector<size_t> group(g.node_count(), kHost);
  std::map<size_t, size_t> latest_of_backend;  // backend -> most recent group
  for (ir::NodeId id = 0; id < g.node_count(); ++id) {
    const size_t backend = backend_of[id];
    size_t latest_read = 0;
    bool reads = false;
    for (ir::ValueId v : f.deps[id]) {
      if (f.producers[v] == kNoNode) continue;
      latest_read = std::max(latest_read, group[f.producers[v]]);
      reads = true;
    }
    auto it = latest_of_backend.find(backend);
    if (it != latest_of_backend.end() && (!reads || latest_read <= it->second)) {
      group[id] = it->second;
    } else {
      group[id] = group_backend.size();
      latest_of_backend[backend] = group_backend.size();
      group_backend.push_back(backend);
    }
  }
  return group;
}

// Direct dependencies between groups: edges[a] holds the groups that read from a.
std::vector<std::set<size_t>> group_edges(const ir::Graph& g, const GraphFacts& f,
                                          const std::vector<size_t>& group, size_t count) {
  std::vector<std::set<size_t>> succ(count);
  for (ir::NodeId id = 0; id < g.node_count(); ++id)
    for (ir::ValueId v : f.deps[id]) {
      const ir::NodeId p = f.producers[v];
      if (p != kNoNode && group[p] != group[id]) succ[group[p]].insert(group[id]);
    }
  return succ;
}

// Merges groups of one backend that no third group separates, until none is left.
// `group` is renumbered densely.
void merge_groups(const ir::Graph& g, const GraphFacts& f, std::vector<size_t>& group,
                  std::vector<size_t>& group_backend) {
  if (group_backend.size() > kMaxPartitionsToMerge) return;
  for (;;) {
    const size_t n = group_backend.size();
    const auto succ = group_edges(g, f, group, n);
    // A topological order of the groups (they may no longer be numbered in one after a
    // merge), then reach[a] = the groups reachable from a by a path of length >= 1.
    std::vector<size_t> indegree(n, 0);
    for (size_t a = 0; a < n; ++a)
      for (size_t b : succ[a]) ++indegree[b];
    std::vector<size_t> order;
    for (size_t a = 0; a < n; ++a)
      if (indegree[a] == 0) order.push_back(a);
    for (size_t i = 0; i < order.size(); ++i)
      for (size_t b : succ[order[i]])
        if (--indegree[b] == 0) order.push_back(b);
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (size_t i = n; i-- > 0;) {
      const size_t a = order[i];
      for (size_t b : succ[a]) {
        reach[a][b] = true;
        for (size_t c = 0; c < n; ++c)
          if (reach[b][c]) reach[a][c] = true;
      }
    }
    // a and b (same backend) merge unless a path a -> c -> ... -> b (or b -> ... -> a)
    // passes through some c: a direct edge alone is fine.
    auto separated = [&](size_t a, size_t b) {
      for (size_t c : succ[a])
        if (c != b && reach[c][b]) return true;
      return false;
    };
    bool merged = false;
    for (size_t b = 0; b < n && !merged; ++b) {
      for (size_t a = 0; a < b && !merged; ++a) {
        if (group_backend[a] != group_backend[b]) continue;
        if (separated(a, b) || separated(b, a)) continue;
        for (size_t& x : group)
          if (x == b) x = a;
        merged = true;
      }
    }
    if (!merged) return;
    // Renumber densely.
    std::vector<size_t> renumber(n, kHost);
    std::vector<size_t> backends;
    for (size_t& x : group) {
      if (renumber[x] == kHost) {
        renumber[x] = backends.size();
        backends.push_back(group_backend[x]);
      }
      x = renumber[x];
    }
    group_backend = std::move(backends);
  }
}

}  // namespace

std::vector<Partition> group_partitions(const ir::Graph& g, const GraphFacts& f,
                                        const std::vector<size_t>& backend_of,
                                        std::vector<size_t>& partition_of_node) {
  std::vector<size_t> group_backend;
  std::vector<size_t> group = walk(g, f, backend_of, group_backend);
  merge_groups(g, f, group, group_backend);

  // Execution order: a topological order of the groups, taking among the ready ones the
  // one whose first node comes first, so that the order follows the node order.
  const size_t n = group_backend.size();
  std::vector<ir::NodeId> first_node(n, UINT32_MAX);
  for (ir::NodeId id = 0; id < g.node_count(); ++id)
    first_node[group[id]] = std::min(first_node[group[id]], id);
  const auto succ = group_edges(g, f, group, n);
  std::vector<size_t> indegree(n, 0);
  for (size_t a = 0; a < n; ++a)
    for (size_t b : succ[a]) ++indegree[b];
  using Ready = std::pair<ir::NodeId, size_t>;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
  for (size_t a = 0; a < n; ++a)
    if (indegree[a] == 0) ready.push({first_node[a], a});
  std::vector<size_t> position(n, kHost);
  std::vector<Partition> parts;
  while (!ready.empty()) {
    const size_t a = ready.top().second;
    ready.pop();
    position[a] = parts.size();
    Partition p;
    p.name = "p" + std::to_string(parts.size());
    p.backend = group_backend[a];
    parts.push_back(std::move(p));
    for (size_t b : succ[a])
      if (--indegree[b] == 0) ready.push({first_node[b], b});
  }

  partition_of_node.assign(g.node_count(), kHost);
  for (ir::NodeId id = 0; id < g.node_count(); ++id) {
    partition_of_node[id] = position[group[id]];
    parts[partition_of_node[id]].nodes.push_back(id);
  }
  std::vector<std::set<size_t>> deps(parts.size());
  for (ir::NodeId id = 0; id < g.node_count(); ++id)
    for (ir::ValueId v : f.deps[id]) {
      const ir::NodeId p = f.producers[v];
      if (p != kNoNode && partition_of_node[p] != partition_of_node[id])
        deps[partition_of_node[id]].insert(partition_of_node[p]);
    }
  for (size_t p = 0; p < parts.size(); ++p)
    parts[p].depends_on.assign(deps[p].begin(), deps[p].end());
  fill_inputs_and_outputs(g, f, partition_of_node, parts);
  return parts;
}

std::vector<Partition> group_partitions(const ir::Graph& g,
                                        const std::vector<NodeAssignment>& assignments,
                                        std::vector<size_t>& partition_of_node) {
  std::vector<size_t> backend_of;
  for (const NodeAssignment& a : assignments) backend_of.push_back(a.backend);
  return group_partitions(g, graph_facts(g), backend_of, partition_of_node);
}

}  // namespace infer::partitioner
