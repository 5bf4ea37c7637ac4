// The values each node depends on, including those a subgraph (If/Loop/Scan body) reads
// from the enclosing graph by name: those are not listed as node inputs, yet their
// producers must run first.
#pragma once

#include <vector>

#include "ir/graph.hpp"

namespace infer::partitioner {

// Direct inputs (omitted optional inputs skipped) followed by captured values, one list
// per node, indexed by NodeId. Captured names that the graph does not define (they come
// from an even further enclosing scope) are ignored.
std::vector<std::vector<ir::ValueId>> node_dependencies(const ir::Graph& graph);

// The producing node of every value (kNoNode for graph inputs, constants and values no
// node writes), computed from the node list so that it does not rely on the caller
// having refreshed Value::producer.
inline constexpr ir::NodeId kNoNode = UINT32_MAX;
std::vector<ir::NodeId> value_producers(const ir::Graph& graph);

}  // namespace infer::partitioner
