// Turns the partitioner's decisions into the steps of an ExecutionPlan: copy modes,
// dependency edges and how each edge is released, input bindings and output sources.
#pragma once

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "partitioner/partition_plan.hpp"
#include "runtime/execution_plan.hpp"

namespace infer::runtime {

// Expects plan.devices (one per partitioner backend, same order) and plan.partitions
// (compiled, same order as `partitions.partitions`, with their view-order inputs and
// outputs) to be filled; fills everything else.
Status build_step_graph(const ir::Graph& graph, const partitioner::PartitionPlan& partitions,
                        ExecutionPlan& plan);

}  // namespace infer::runtime
