// Builds the public PlanReport (--explain) from the partitioner's plan.
#pragma once

#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "ir/graph.hpp"
#include "partitioner/partition_plan.hpp"

namespace infer::runtime {

PlanReport make_plan_report(const ir::Graph& graph, const partitioner::PartitionPlan& plan,
                            std::vector<std::string> changed_passes);

}  // namespace infer::runtime
