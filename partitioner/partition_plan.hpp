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
  // True when the node runs elsewhere than on the first backend (in priority order) that
  // supports it: a memory budget spilled it, or the cost model moved it.
  bool moved = false;
  // For --explain: "example: supported", "cpu: fallback (example: unsupported op Conv)",
  // "moved to cpu: example island of 1 node (Relu) under the minimum of 3; ...".
  std::string reason;
  double est_time_us = -1;  // estimated time on `backend`; < 0 when unknown
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
  double est_time_us = -1;  // the link's estimate; < 0 when unknown
};

// The cost model's view of one backend in the final plan.
struct BackendEstimate {
  size_t partitions = 0;
  size_t nodes = 0;
  double compute_us = 0;              // sum of the nodes' known time estimates
  size_t nodes_without_estimate = 0;  // nodes whose time is unknown (not in compute_us)
  // Constants plus peak activations resident on the backend (known sizes only), and the
  // number of resident values whose size is known only at run time.
  int64_t memory_bytes = 0;
  size_t memory_values_of_unknown_size = 0;
  int64_t memory_budget_bytes = -1;  // < 0: no budget
};

struct PlanEstimates {
  std::vector<BackendEstimate> backends;  // indexed like PartitionPlan::backends
  double transfer_us = 0;                 // sum of the copies' known time estimates
  size_t copies_without_estimate = 0;
  // Placement decisions (small islands, nodes on a boundary) the cost model could not
  // price - a size known only at run time, or a link or time nobody estimated - and so
  // left as priority placed them.
  size_t undecided = 0;
};

struct PartitionPlan {
  std::vector<std::string> backends;        // the request's backends, in priority order
  std::vector<NodeAssignment> assignments;  // one per node, indexed by NodeId
  std::vector<Partition> partitions;        // in a valid execution order
  std::vector<CopyEdge> copies;
  // The partition that contains each node, indexed by NodeId.
  std::vector<size_t> partition_of_node;
  PlanEstimates estimates;
};

}  // namespace infer::partitioner
