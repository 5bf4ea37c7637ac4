// Islands: connected groups of nodes on one backend within one partition. A small island
// between regions of another backend is the "ping-pong" users see: two copies and two
// synchronizations for a little compute.
#pragma once

#include <vector>

#include "partitioner/placement_state.hpp"

namespace infer::partitioner {

struct Island {
  size_t backend = 0;
  std::vector<ir::NodeId> nodes;  // ascending
};

// Every island of the current placement, ordered by first node. Nodes are connected when
// one reads what the other makes (subgraph captures included).
std::vector<Island> find_islands(const PlacementState& state);

// Islands with fewer nodes than options().min_island_nodes and no pinned node: the ones
// the island pass may move as a whole.
std::vector<Island> small_islands(const PlacementState& state);

}  // namespace infer::partitioner
