#include "runtime/fused_fallback.hpp"

#include <cstdint>

#include "optimizer/fused_decomposition.hpp"
#include "runtime/capability_collector.hpp"

namespace infer::runtime {

Result<std::vector<std::string>> decompose_unclaimed_fused_nodes(
    ir::Model& model, const optimizer::PassContext& context, const std::vector<Backend>& backends,
    std::shared_ptr<host::GraphViewSet>& views,
    std::vector<partitioner::BackendCapabilities>& capabilities, const Logger& log) {
  const ir::Graph& graph = *model.graph;
  std::vector<ir::NodeId> fused;
  bool any_unclaimed = false;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    if (!optimizer::is_decomposable_fused_node(graph.node(id))) continue;
    fused.push_back(id);
    any_unclaimed = any_unclaimed || first_claiming(capabilities, id) == SIZE_MAX;
  }
  std::vector<std::string> described;
  if (fused.empty() || (backends.size() == 1 && !any_unclaimed)) return described;

  ir::Model trial = model;
  trial.graph = std::make_shared<ir::Graph>(graph);
  INFER_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> parts,
                         optimizer::decompose_fused_nodes(*trial.graph, fused, context));
  INFER_ASSIGN_OR_RETURN(const TrialCapabilities trial_caps,
                         collect_trial_capabilities(trial, backends, log));

  std::vector<ir::NodeId> chosen;
  for (size_t i = 0; i < fused.size(); ++i) {
    const size_t fused_backend = first_claiming(capabilities, fused[i]);
    size_t decomposed_backend = SIZE_MAX;
    for (size_t b = 0; b < trial_caps.tables.size() && decomposed_backend == SIZE_MAX; ++b) {
      bool all = true;
      for (const std::string& name : parts[i]) all = all && trial_caps.claims(b, name);
      if (all) decomposed_backend = b;
    }
    if (fused_backend == SIZE_MAX || decomposed_backend < fused_backend) {
      chosen.push_back(fused[i]);
      const std::string why = fused_backend == SIZE_MAX
                                  ? "no backend claims it"
                                  : backends[decomposed_backend].name +
                                        " runs its decomposition and comes before " +
                                        backends[fused_backend].name;
      described.push_back(graph.node(fused[i]).describe() + ": decomposed (" + why + ")");
    }
  }
  if (chosen.empty()) return described;
  INFER_RETURN_IF_ERROR(
      optimizer::decompose_fused_nodes(*model.graph, chosen, context).status());
  INFER_ASSIGN_OR_RETURN(views, host::GraphViewSet::build(model));
  capabilities = collect_capabilities(*views, backends, log);
  return described;
}

}  // namespace infer::runtime
