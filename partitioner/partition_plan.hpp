// The partitioner's answer: where every node runs and why, the partitions (groups of
// nodes compiled and run as one executable), and the copies the scheduler must make
// between devices. Plain data, so the runtime, --explain and the tests all read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace infer::partitioner {

// Stands for the host (the application's tensors) where a backend or partition index is
// expected: the source of graph inputs and the destination of graph outputs.
inline constexpr size_t kHost = std::numeric_limits<size_t>::max();

struct NodeAssignment {
  size_t backend = 0;   // index into the request's backends
  bool pinned = false;  // placed by a placement pin
  // For --explain: "example: supported", "cpu: fallback (example: unsupported op Conv)".
  std::string reason;
};

struct Partition {
  std::string name;               // "p0", "p1", ... in execution order
  size_t backend = 0;             // index into the request's backends
  std::vector<ir::NodeId> nodes;  // ascending, hence topological
  // Non-constant values the nodes read but do not produce, in order of first use (node
  // order, then input position): the same order GraphViewSet gives the partition view.
  std::vector<ir::ValueId> inputs;
  // Values the nodes produce that another partition reads or that are graph outputs, in
  // production order.
  std::vector<ir::ValueId> outputs;
  // Partitions whose outputs this one reads (directly or through a subgraph capture),
  // ascending. Every entry is smaller than this partition's own index, so the index
  // order is a valid execution order and the partition graph is acyclic.
  std::vector<size_t> depends_on;
};

// One value moved between devices once per run.
struct CopyEdge {
  ir::ValueId value = ir::kNoValue;
  size_t src_partition = kHost;  // the producing partition; kHost for a graph input
  size_t src_backend = kHost;    // kHost for a graph input
  size_t dst_backend = kHost;    // kHost for a graph output read back by the host
  // The partitions on dst_backend that read the copied value (empty for a graph output).
  std::vector<size_t> dst_partitions;
  int64_t bytes = -1;  // -1 when the shape is not static (known only at run time)
};

struct PartitionPlan {
  std::vector<std::string> backends;        // the request's backends, in priority order
  std::vector<NodeAssignment> assignments;  // one per node, indexed by NodeId
  std::vector<Partition> partitions;        // in a valid execution order
  std::vector<CopyEdge> copies;
  // The partition that contains each node, indexed by NodeId.
  std::vector<size_t> partition_of_node;
};

}  // namespace infer::partitioner
