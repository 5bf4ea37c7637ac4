#include "partitioner/partitioner.hpp"

#include "partitioner/copy_planner.hpp"
#include "partitioner/graph_deps.hpp"
#include "partitioner/grouping.hpp"
#include "partitioner/placement.hpp"

namespace infer::partitioner {
namespace {

Status check_request(const PartitionRequest& request) {
  if (request.graph == nullptr) return internal_error("partitioner: no graph given");
  if (request.backends.empty()) return internal_error("partitioner: no backends given");
  const ir::Graph& g = *request.graph;
  for (const BackendCapabilities& b : request.backends)
    if (b.nodes.size() != g.node_count())
      return internal_error("partitioner: backend '" + b.name + "' has " +
                            std::to_string(b.nodes.size()) + " capability answers for " +
                            std::to_string(g.node_count()) + " nodes");
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
  return "node '" + node.name + "' (" + node.op_type + ", domain '" +
         (node.domain.empty() ? std::string("ai.onnx") : node.domain) + "')";
}

Result<PartitionPlan> partition(const PartitionRequest& request) {
  INFER_RETURN_IF_ERROR(check_request(request));
  const ir::Graph& g = *request.graph;
  PartitionPlan plan;
  for (const BackendCapabilities& b : request.backends) plan.backends.push_back(b.name);
  INFER_ASSIGN_OR_RETURN(plan.assignments, assign_nodes(request));
  plan.partitions = group_partitions(g, plan.assignments, plan.partition_of_node);
  plan.copies = plan_copies(g, plan.partitions, plan.partition_of_node, request.backends);
  return plan;
}

}  // namespace infer::partitioner
