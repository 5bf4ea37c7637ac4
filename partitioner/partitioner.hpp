// Partitioner v0: assigns each node to a backend by priority (with placement pins), groups
// nodes into partitions whose dependency graph is acyclic, and lists the copies between
// devices. It takes capability answers as plain data; see capability.hpp.
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

struct PartitionRequest {
  const ir::Graph* graph = nullptr;
  std::vector<BackendCapabilities> backends;  // priority order, fallback included
  bool strict = false;                        // only changes how an unclaimed node is reported
  std::vector<Pin> pins;
};

// Errors:
//  - a pin naming a node that is not in the graph, a backend that is not enabled, or a
//    backend that says NO for the node: InvalidArgument naming the node and the backend;
//  - nodes no backend supports: Unsupported, ONE message listing each such node as
//    "node 'x' (Op, domain 'd'): ..." with every backend's reason;
//  - capability tables that do not have one answer per node: Internal.
Result<PartitionPlan> partition(const PartitionRequest& request);

// "node 'x' (Op, domain 'd')", with 'ai.onnx' for the default domain.
std::string describe_node_with_domain(const ir::Node& node);

}  // namespace infer::partitioner
