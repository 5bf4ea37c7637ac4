#include "runtime/plan_report_builder.hpp"

namespace infer::runtime {

PlanReport make_plan_report(const ir::Graph& g, const partitioner::PartitionPlan& plan,
                            std::vector<std::string> changed_passes) {
  auto backend_name = [&](size_t b) {
    return b == partitioner::kHost ? std::string("host") : plan.backends[b];
  };
  PlanReport report;
  for (ir::NodeId id = 0; id < g.node_count(); ++id) {
    const ir::Node& n = g.node(id);
    const partitioner::NodeAssignment& a = plan.assignments[id];
    NodePlacement placement;
    placement.node = n.name;
    placement.op_type = n.op_type;
    placement.domain = n.domain;
    placement.backend = backend_name(a.backend);
    placement.reason = a.reason;
    placement.est_time_us = a.est_time_us;
    placement.pinned = a.pinned;
    placement.moved = a.moved;
    report.nodes.push_back(std::move(placement));
  }
  for (const partitioner::Partition& p : plan.partitions) {
    PartitionSummary summary{p.name, backend_name(p.backend), p.nodes.size()};
    summary.est_time_us = 0;
    for (ir::NodeId id : p.nodes) {
      const double t = plan.assignments[id].est_time_us;
      if (t < 0) {
        summary.est_time_us = -1;
        break;
      }
      summary.est_time_us += t;
    }
    report.partitions.push_back(std::move(summary));
  }
  for (const partitioner::CopyEdge& c : plan.copies) {
    CopySummary copy{g.value(c.value).name, backend_name(c.src_backend),
                     backend_name(c.dst_backend), c.bytes};
    copy.est_time_us = c.est_time_us;
    report.copies.push_back(std::move(copy));
  }
  const partitioner::PlanEstimates& est = plan.estimates;
  for (size_t b = 0; b < est.backends.size(); ++b) {
    const partitioner::BackendEstimate& be = est.backends[b];
    if (be.partitions == 0) continue;
    BackendSummary summary;
    summary.backend = plan.backends[b];
    summary.partitions = be.partitions;
    summary.nodes = be.nodes;
    summary.est_compute_us = be.compute_us;
    summary.nodes_without_estimate = be.nodes_without_estimate;
    summary.est_memory_bytes = be.memory_bytes;
    summary.memory_values_of_unknown_size = be.memory_values_of_unknown_size;
    summary.memory_budget_bytes = be.memory_budget_bytes;
    report.backends.push_back(std::move(summary));
  }
  report.est_transfer_us = est.transfer_us;
  report.copies_without_estimate = est.copies_without_estimate;
  report.undecided_placements = est.undecided;
  report.passes = std::move(changed_passes);
  return report;
}

}  // namespace infer::runtime
