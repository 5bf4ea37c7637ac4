// Step 2 of partitioning: groups the placed nodes into partitions.
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "partitioner/partition_plan.hpp"

namespace infer::partitioner {

// Walks the nodes in topological order. A node joins the most recent partition of its
// backend when every partition it reads from comes no later than that partition;
// otherwise it opens a new partition. Every partition then reads only from partitions
// created before it, so creation order is an execution order and the partition graph
// cannot have a cycle, while interleaved independent branches of one backend still share
// a partition. (Consecutive runs alone would be correct too, but split more.) Fills
// `partition_of_node`, and each partition's inputs, outputs and dependencies.
std::vector<Partition> group_partitions(const ir::Graph& graph,
                                        const std::vector<NodeAssignment>& assignments,
                                        std::vector<size_t>& partition_of_node);

}  // namespace infer::partitioner
