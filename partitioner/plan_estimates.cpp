#include "partitioner/plan_estimates.hpp"

#include "partitioner/memory_budget.hpp"

namespace infer::partitioner {

void estimate_plan(const ir::Graph& g, const GraphFacts& facts, const CostModel& cost,
                   size_t undecided, PartitionPlan& plan) {
  PlanEstimates& est = plan.estimates;
  est = PlanEstimates{};
  est.undecided = undecided;
  est.backends.resize(plan.backends.size());
  std::vector<size_t> backend_of;
  for (const NodeAssignment& a : plan.assignments) backend_of.push_back(a.backend);
  for (size_t b = 0; b < plan.backends.size(); ++b) {
    BackendEstimate& be = est.backends[b];
    be.memory_budget_bytes = cost.backend(b).memory_budget_bytes;
    const MemoryUse use = memory_use(g, facts, cost, backend_of, b);
    be.memory_bytes = use.total();
    be.memory_values_of_unknown_size = use.unknown_values;
  }
  for (const Partition& p : plan.partitions) ++est.backends[p.backend].partitions;
  for (const NodeAssignment& a : plan.assignments) {
    BackendEstimate& be = est.backends[a.backend];
    ++be.nodes;
    if (a.est_time_us >= 0)
      be.compute_us += a.est_time_us;
    else
      ++be.nodes_without_estimate;
  }
  for (CopyEdge& c : plan.copies) {
    // Estimated with the cost model's sizes (symbolic dims as assumed), while c.bytes
    // stays the exact static size or -1.
    c.est_time_us = cost.copy_time_us(c.src_backend, c.dst_backend, cost.value_bytes(c.value));
    if (c.est_time_us >= 0)
      est.transfer_us += c.est_time_us;
    else
      ++est.copies_without_estimate;
  }
}

}  // namespace infer::partitioner
