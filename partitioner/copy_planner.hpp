// Step 3 of partitioning: the copies between devices that every run makes. They are
// scheduler edges, not graph nodes.
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "partitioner/capability.hpp"
#include "partitioner/graph_deps.hpp"
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

// The same rules for one value, from a placement alone (node n on backend_of[n]), before
// any grouping: the (source, destination) backend pairs it is copied between, kHost
// standing for the host. Constants are never copied per run. Appends to `out`.
struct ValueCopy {
  size_t src = kHost;
  size_t dst = kHost;
};
void copies_of_value(const ir::Graph& graph, const GraphFacts& facts, ir::ValueId value,
                     const std::vector<size_t>& backend_of,
                     const std::vector<BackendCapabilities>& backends,
                     std::vector<ValueCopy>& out);

}  // namespace infer::partitioner
