#include "partitioner/partitioner.hpp"

#include "infer/printable.hpp"

#include "partitioner/copy_planner.hpp"
#include "partitioner/cost_model.hpp"
#include "partitioner/decision_notes.hpp"
#include "partitioner/graph_deps.hpp"
#include "partitioner/grouping.hpp"
#include "partitioner/island_merge.hpp"
#include "partitioner/memory_budget.hpp"
#include "partitioner/placement.hpp"
#include "partitioner/placement_state.hpp"
#include "partitioner/plan_estimates.hpp"
#include "partitioner/region_growth.hpp"

namespace infer::partitioner {
namespace {

Status check_request(const PartitionRequest& request) {
  if (request.graph == nullptr) return internal_error("partitioner: no graph given");
  if (request.backends.empty()) return internal_error("partitioner: no backends given");
  const ir::Graph& g = *request.graph;
  for (const BackendCapabilities& b : request.backends) {
    if (b.nodes.size() != g.node_count())
      return internal_error("partitioner: backend '" + b.name + "' has " +
                            std::to_string(b.nodes.size()) + " capability answers for " +
                            std::to_string(g.node_count()) + " nodes");
    for (const auto* link : {&b.host_to_device, &b.device_to_host})
      if (*link && (!((*link)->bandwidth_bytes_per_us > 0) || !((*link)->latency_us >= 0)))
        return internal_error("partitioner: backend '" + b.name +
                              "' has a link estimate with a bandwidth that is not positive or "
                              "a negative latency");
    if (b.throughput && (!(b.throughput->flops_per_us > 0) || !(b.throughput->bytes_per_us > 0) ||
                         !(b.throughput->launch_us >= 0)))
      return internal_error("partitioner: backend '" + b.name +
                            "' has a throughput that is not positive");
  }
  // Grouping relies on the node list being topologically ordered (the IR's invariant).
  const auto producers = value_producers(g);
  const auto deps = node_dependencies(g);
  for (ir::NodeId id = 0; id < g.node_count(); ++id)
    for (ir::ValueId v : deps[id]) {
      if (v >= g.value_count())
        return internal_error("partitioner: " + g.node(id).describe() + " reads value #" +
                              std::to_string(v) + ", which does not exist");
      if (producers[v] != kNoNode && producers[v] >= id)
        return internal_error(
            "partitioner: the graph is not topologically ordered: " + g.node(id).describe() +
            " reads '" + g.value(v).name + "', produced by a later node");
    }
  return Status::ok();
}

}  // namespace

std::string describe_node_with_domain(const ir::Node& node) {
  // Names come from model files: escaped, so a message never carries raw bytes.
  return "node '" + printable(node.name) + "' (" + printable(node.op_type) + ", domain '" +
         printable(node.domain.empty() ? std::string("ai.onnx") : node.domain) + "')";
}

Result<PartitionPlan> partition(const PartitionRequest& request) {
  INFER_RETURN_IF_ERROR(check_request(request));
  const ir::Graph& g = *request.graph;
  PartitionPlan plan;
  for (const BackendCapabilities& b : request.backends) plan.backends.push_back(b.name);

  // The passes, in order: priority (and pins), memory budgets, small islands, region
  // growth; then the notes on what stayed. Budgets come first so that the cost-driven
  // passes start from a placement that fits, and they refuse any move that would not.
  INFER_ASSIGN_OR_RETURN(std::vector<NodeAssignment> initial, assign_nodes(request));
  const CostModel cost(request);
  PlacementState state(request, cost, std::move(initial));
  INFER_RETURN_IF_ERROR(apply_memory_budgets(state));
  if (request.options.cost_model) {
    merge_small_islands(state);
    grow_regions(state);
    note_kept_decisions(state);
  }
  plan.assignments = state.finish();

  std::vector<size_t> backend_of;
  for (const NodeAssignment& a : plan.assignments) backend_of.push_back(a.backend);
  plan.partitions = group_partitions(g, state.facts(), backend_of, plan.partition_of_node);
  plan.copies = plan_copies(g, plan.partitions, plan.partition_of_node, request.backends);
  estimate_plan(g, state.facts(), cost, state.undecided(), plan);
  return plan;
}

}  // namespace infer::partitioner
