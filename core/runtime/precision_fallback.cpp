#include "runtime/precision_fallback.hpp"

#include <cstdint>
#include <set>

#include "optimizer/float32_widening.hpp"
#include "runtime/capability_collector.hpp"

namespace infer::runtime {
namespace {

// "float16", "bfloat16" or "float16/bfloat16": the low-precision dtypes `node` touches.
std::string low_precision_of(const ir::Graph& graph, const ir::Node& node) {
  std::set<std::string_view> names;
  for (const auto* list : {&node.inputs, &node.outputs})
    for (ir::ValueId v : *list)
      if (v != ir::kNoValue && optimizer::is_low_precision_float(graph.value(v).dtype))
        names.insert(dtype_name(graph.value(v).dtype));
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : "/") + std::string(n);
  return out;
}

// Why the backends refused the node: the first backend's reason, which names the dtype.
std::string refusal(const std::vector<partitioner::BackendCapabilities>& caps, ir::NodeId id,
                    size_t claiming) {
  const size_t b = claiming < caps.size() ? claiming : 0;
  if (b >= caps.size() || id >= caps[b].nodes.size()) return "no backend runs it";
  return caps[b].name + ": " + caps[b].nodes[id].reason;
}

}  // namespace

Result<std::vector<std::string>> widen_unclaimed_low_precision_nodes(
    ir::Model& model, const std::vector<Backend>& backends,
    std::shared_ptr<host::GraphViewSet>& views,
    std::vector<partitioner::BackendCapabilities>& capabilities, const Logger& log) {
  const ir::Graph& graph = *model.graph;
  std::vector<ir::NodeId> candidates;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id)
    if (first_claiming(capabilities, id) == SIZE_MAX &&
        optimizer::is_widenable(graph, graph.node(id)))
      candidates.push_back(id);
  std::vector<std::string> described;
  if (candidates.empty()) return described;

  ir::Model trial = model;
  trial.graph = std::make_shared<ir::Graph>(graph);
  INFER_RETURN_IF_ERROR(optimizer::widen_to_float32(*trial.graph, candidates).status());
  INFER_ASSIGN_OR_RETURN(const TrialCapabilities trial_caps,
                         collect_trial_capabilities(trial, backends, log));

  std::vector<ir::NodeId> chosen;
  for (ir::NodeId id : candidates) {
    const size_t claiming = trial_caps.first_claiming(graph.node(id).name);
    if (claiming == SIZE_MAX) continue;
    chosen.push_back(id);
    described.push_back(graph.node(id).describe() + ": " + low_precision_of(graph, graph.node(id)) +
                        " -> float32 (" + refusal(capabilities, id, claiming) + "; " +
                        trial_caps.tables[claiming].name + " runs it in float32)");
  }
  if (chosen.empty()) return described;
  INFER_ASSIGN_OR_RETURN(optimizer::WideningSummary summary,
                         optimizer::widen_to_float32(*model.graph, chosen));
  described.push_back(std::to_string(summary.casts) + " Cast node" +
                      (summary.casts == 1 ? "" : "s") + " and " +
                      std::to_string(summary.constants) + " float32 constant" +
                      (summary.constants == 1 ? "" : "s") + " added");
  INFER_ASSIGN_OR_RETURN(views, host::GraphViewSet::build(model));
  capabilities = collect_capabilities(*views, backends, log);
  return described;
}

}  // namespace infer::runtime
