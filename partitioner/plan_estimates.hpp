// The cost model's totals for a finished plan: per backend its partitions, nodes,
// estimated compute and resident memory; for the copies their estimated time.
#pragma once

#include "partitioner/cost_model.hpp"
#include "partitioner/graph_deps.hpp"
#include "partitioner/partition_plan.hpp"

namespace infer::partitioner {

// Fills plan.estimates and each copy's est_time_us (from plan.assignments,
// plan.partitions and plan.copies, which must be final). `undecided` comes from the
// passes.
void estimate_plan(const ir::Graph& graph, const GraphFacts& facts, const CostModel& cost,
                   size_t undecided, PartitionPlan& plan);

}  // namespace infer::partitioner
