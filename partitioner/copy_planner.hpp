// Step 3 of partitioning: the copies between devices that every run makes. They are
// scheduler edges, not graph nodes.
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "partitioner/capability.hpp"
#include "partitioner/partition_plan.hpp"

namespace infer::partitioner {

// One copy per (value, destination backend):
//  - a value produced on one backend and read by a partition on another;
//  - a graph input read by a partition whose backend is not host-addressable;
//  - a graph output produced on a backend that is not host-addressable (to kHost).
// Host-addressable backends read graph inputs and produce graph outputs in place.
// Bytes are computed when the value's shape is static, else -1.
std::vector<CopyEdge> plan_copies(const ir::Graph& graph, const std::vector<Partition>& partitions,
                                  const std::vector<size_t>& partition_of_node,
                                  const std::vector<BackendCapabilities>& backends);

}  // namespace infer::partitioner
