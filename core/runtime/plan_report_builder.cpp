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
    report.nodes.push_back(NodePlacement{n.name, n.op_type, n.domain,
                                         backend_name(plan.assignments[id].backend),
                                         plan.assignments[id].reason});
  }
  for (const partitioner::Partition& p : plan.partitions)
    report.partitions.push_back(PartitionSummary{p.name, backend_name(p.backend), p.nodes.size()});
  for (const partitioner::CopyEdge& c : plan.copies)
    report.copies.push_back(CopySummary{g.value(c.value).name, backend_name(c.src_backend),
                                        backend_name(c.dst_backend), c.bytes});
  report.passes = std::move(changed_passes);
  return report;
}

}  // namespace infer::runtime
