#include "optimizer/activation_fusion.hpp"

#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {

Result<int> ActivationFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (!fusions_enabled(context)) return 0;
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int fused = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& act = graph.node(id);
    std::optional<FusedActivation> activation = match_activation(graph, act);
    if (!activation) continue;
    const ir::ValueId x = act.inputs[0];
    const ir::NodeId anchor_id = index.producer_id(x);
    if (anchor_id == ir::kNoNode) continue;
    const char* fused_op = fused_form_of(graph.node(anchor_id));
    if (fused_op == nullptr || graph.node(anchor_id).outputs[0] != x) continue;
    if (!index.has_single_use(x)) continue;
    const DataType dt = graph.value(x).dtype;
    if (!is_fusion_float(dt) || graph.value(act.outputs[0]).dtype != dt) continue;

    ir::Node& anchor = graph.node(anchor_id);
    anchor.op_type = fused_op;
    anchor.domain = kFusedDomain;
    set_activation(anchor, *activation);
    anchor.outputs[0] = act.outputs[0];
    remove[id] = true;
    ++fused;
  }
  if (fused == 0) return 0;
  INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer
