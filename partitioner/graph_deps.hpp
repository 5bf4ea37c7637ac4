// The values each node depends on, including those a subgraph (If/Loop/Scan body) reads
// from the enclosing graph by name: those are not listed as node inputs, yet their
// producers must run first.
#pragma once

#include <vector>

#include "ir/graph.hpp"

namespace infer::partitioner {

// Direct inputs (omitted optional inputs skipped) followed by captured values
// (ir::Graph::implicit_inputs: read at any depth of the node's subgraphs), one list per
// node, indexed by NodeId.
std::vector<std::vector<ir::ValueId>> node_dependencies(const ir::Graph& graph);

// The producing node of every value (kNoNode for graph inputs, constants and values no
// node writes), computed from the node list so that it does not rely on the caller
// having refreshed Value::producer.
inline constexpr ir::NodeId kNoNode = UINT32_MAX;
std::vector<ir::NodeId> value_producers(const ir::Graph& graph);

// Everything the placement passes ask of the graph's structure, computed once.
struct GraphFacts {
  std::vector<std::vector<ir::ValueId>> deps;      // per node: node_dependencies()
  std::vector<ir::NodeId> producers;               // per value: value_producers()
  // Per value: nodes depending on it, ascending, a node whose subgraph captures it included
  // (the body runs where its node runs, so the value must be copied there too).
  std::vector<std::vector<ir::NodeId>> consumers;
  std::vector<bool> is_output;                     // per value: a graph output
  // Per node: the producers of what it depends on and the consumers of what it makes,
  // each once, ascending.
  std::vector<std::vector<ir::NodeId>> neighbours;
};
GraphFacts graph_facts(const ir::Graph& graph);

}  // namespace infer::partitioner
