// Step 2 of partitioning: groups the placed nodes into partitions.
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "partitioner/graph_deps.hpp"
#include "partitioner/partition_plan.hpp"

namespace infer::partitioner {

// First, walks the nodes in topological order: a node joins the most recent partition of
// its backend when every partition it reads from comes no later than that partition;
// otherwise it opens a new partition. Every partition then reads only from partitions
// created before it, so creation order is an execution order and the partition graph
// cannot have a cycle, while interleaved independent branches of one backend still share
// a partition.
// Then, merges two partitions of one backend whenever no path leads from one to the other
// through a third partition: such a merge cannot close a cycle, and it saves the copies
// and the synchronization between them (the walk alone splits more than it must when
// the node order interleaves independent work of two backends). The partitions are then
// put in a topological order, earliest first node first, and named p0, p1, ...
// Fills `partition_of_node`, and each partition's inputs, outputs and dependencies.
std::vector<Partition> group_partitions(const ir::Graph& graph, const GraphFacts& facts,
                                        const std::vector<size_t>& backend_of,
                                        std::vector<size_t>& partition_of_node);

// The same, from assignments.
std::vector<Partition> group_partitions(const ir::Graph& graph,
                                        const std::vector<NodeAssignment>& assignments,
                                        std::vector<size_t>& partition_of_node);

}  // namespace infer::partitioner
