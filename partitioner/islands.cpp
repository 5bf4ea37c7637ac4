#include "partitioner/islands.hpp"

#include <algorithm>

namespace infer::partitioner {

std::vector<Island> find_islands(const PlacementState& s) {
  const std::vector<size_t> part = s.partition_of_node();
  const size_t n = s.graph().node_count();
  std::vector<bool> seen(n, false);
  std::vector<Island> islands;
  for (ir::NodeId start = 0; start < n; ++start) {
    if (seen[start]) continue;
    Island island;
    island.backend = s.backend_of(start);
    std::vector<ir::NodeId> stack = {start};
    seen[start] = true;
    while (!stack.empty()) {
      const ir::NodeId id = stack.back();
      stack.pop_back();
      island.nodes.push_back(id);
      for (ir::NodeId m : s.facts().neighbours[id]) {
        if (seen[m] || part[m] != part[id]) continue;
        seen[m] = true;
        stack.push_back(m);
      }
    }
    std::sort(island.nodes.begin(), island.nodes.end());
    islands.push_back(std::move(island));
  }
  return islands;
}

std::vector<Island> small_islands(const PlacementState& s) {
  std::vector<Island> out;
  for (Island& island : find_islands(s)) {
    if (island.nodes.size() >= s.options().min_island_nodes) continue;
    bool pinned = false;
    for (ir::NodeId id : island.nodes) pinned = pinned || s.pinned(id);
    if (!pinned) out.push_back(std::move(island));
  }
  return out;
}

}  // namespace infer::partitioner
