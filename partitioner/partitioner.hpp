// Partitioner v1: assigns each node to a backend by priority (with placement pins), spills
// what exceeds a backend's memory budget, then lets a cost model (per-node time
// estimates, link bandwidth and latency) move small islands and boundary nodes where that
// saves time, groups the nodes into partitions whose dependency graph is acyclic, and
// lists the copies between devices. It takes capability answers as plain data; see
// capability.hpp. Every node's reason says why it landed where it did, with the numbers.
#pragma once

#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "partitioner/capability.hpp"
#include "partitioner/partition_plan.hpp"

namespace infer::partitioner {

inline constexpr const char* kFallbackBackend = "cpu";

// The backends to query, in priority order: the user's list, then "cpu" as the implicit
// last fallback unless it is already listed or `strict` is set. An empty list means
// {"cpu"} (strict or not). A name listed twice is InvalidArgument.
Result<std::vector<std::string>> backend_priority(const std::vector<std::string>& requested,
                                                  bool strict);

// Knobs of the cost-driven passes. The defaults are what sessions use.
struct PartitionOptions {
  // False: placement by priority, pins and memory budgets only (v0 behaviour).
  bool cost_model = true;
  // An island (connected nodes of one backend, within one partition, surrounded by other
  // backends) with fewer nodes than this is considered for moving, as a whole, to a
  // neighbouring backend. Three: a lone activation or a bias-add-plus-activation pair
  // between two regions of another device costs two copies (and two synchronizations)
  // for almost no compute, while a region of three or more usually holds a heavy op.
  size_t min_island_nodes = 3;
  // A move must save at least this much estimated time. Estimates are rough; a move that
  // saves less than a microsecond is noise, and refusing it keeps plans stable.
  double min_gain_us = 1.0;
  // Rounds of single-node boundary moves (region growth); each round visits every
  // boundary node once. Plans settle in one or two rounds; the cap bounds the time.
  int max_growth_rounds = 8;
  // When > 0, symbolic and unknown dims count as this size in the cost model (e.g. 1
  // for a batch of one), so that graphs with a symbolic batch can be priced. 0: sizes
  // that depend on such dims are unknown, and decisions that need them are not made.
  int64_t assumed_symbolic_dim = 0;
};

struct PartitionRequest {
  const ir::Graph* graph = nullptr;
  std::vector<BackendCapabilities> backends;  // priority order, fallback included
  bool strict = false;                        // only changes how an unclaimed node is reported
  std::vector<Pin> pins;
  PartitionOptions options;
};

// Errors:
//  - a pin naming a node that is not in the graph, a backend that is not enabled, or a
//    backend that says NO for the node: InvalidArgument naming the node and the backend;
//  - nodes no backend supports: Unsupported, ONE message listing each such node as
//    "node 'x' (Op, domain 'd'): ..." with every backend's reason;
//  - a memory budget that cannot be met because the nodes left on the backend are pinned
//    or supported by no later backend: InvalidArgument naming the backend, what it
//    needs and the budget;
//  - capability tables that do not have one answer per node: Internal.
Result<PartitionPlan> partition(const PartitionRequest& request);

// "node 'x' (Op, domain 'd')", with 'ai.onnx' for the default domain.
std::string describe_node_with_domain(const ir::Node& node);

}  // namespace infer::partitioner
