#include "optimizer/conv_add_fusion.hpp"

#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool has_input(const ir::Node& node, size_t slot) {
  return slot < node.inputs.size() && node.inputs[slot] != ir::kNoValue;
}

// A convolution whose output an Add may still be folded into.
bool accepts_add(const ir::Node& conv) {
  if (conv.outputs.size() != 1 || conv.inputs.size() < 2) return false;
  if (is_onnx_op(conv, "Conv")) return true;
  return is_fused_op(conv, "FusedConv") && !has_activation(conv);
}

// True when node `target` is `start`'s producer or one of its ancestors.
bool depends_on(const ir::Graph& graph, const GraphIndex& index, ir::ValueId start,
                ir::NodeId target) {
  std::vector<bool> seen(graph.node_count(), false);
  std::vector<ir::NodeId> stack;
  if (ir::NodeId p = index.producer_id(start); p != ir::kNoNode) stack.push_back(p);
  while (!stack.empty()) {
    const ir::NodeId n = stack.back();
    stack.pop_back();
    if (n == target) return true;
    if (seen[n]) continue;
    seen[n] = true;
    std::vector<ir::ValueId> reads = graph.node(n).inputs;
    for (ir::ValueId v : graph.implicit_inputs(n)) reads.push_back(v);
    for (ir::ValueId v : reads)
      if (ir::NodeId p = index.producer_id(v); p != ir::kNoNode && !seen[p]) stack.push_back(p);
  }
  return false;
}

// (a): adds the constant `c` to the convolution's bias. False (nothing changed) when `c`
// is not a per-channel constant or the existing bias is not a constant.
bool fold_bias(ir::Graph& graph, ir::Node& conv, ir::ValueId c, DataType dt) {
  const ir::Shape& w_shape = graph.value(conv.inputs[1]).shape;
  if (!w_shape.rank_known() || w_shape.rank() < 3) return false;
  const ir::Dim& m = (*w_shape.dims)[0];
  if (!m.is_known() || m.value <= 0) return false;
  if (graph.value(c).dtype != dt) return false;
  std::optional<std::vector<double>> add = per_channel_constant(graph, c, w_shape.rank(), m.value);
  if (!add) return false;
  std::vector<double> bias(add->size(), 0.0);
  if (has_input(conv, 2)) {
    if (graph.value(conv.inputs[2]).dtype != dt) return false;
    std::optional<std::vector<double>> old = float_constant(graph, conv.inputs[2]);
    if (!old || old->size() != bias.size()) return false;
    bias = *old;
  }
  for (size_t i = 0; i < bias.size(); ++i) bias[i] += (*add)[i];
  if (conv.inputs.size() < 3) conv.inputs.resize(3, ir::kNoValue);
  conv.inputs[2] = add_constant(graph, conv.name + "_bias", make_float_tensor(dt, {m.value}, bias));
  return true;
}

// (b): makes the convolution a FusedConv adding `z`.
bool fuse_residual(ir::Graph& graph, const GraphIndex& index, ir::NodeId conv_id, ir::ValueId z,
                   DataType dt) {
  ir::Node& conv = graph.node(conv_id);
  if (has_input(conv, 3)) return false;
  if (graph.value(z).dtype != dt) return false;
  if (!same_shape(graph.value(z).shape, graph.value(conv.outputs[0]).shape)) return false;
  if (depends_on(graph, index, z, conv_id)) return false;
  conv.op_type = "FusedConv";
  conv.domain = kFusedDomain;
  conv.inputs.resize(4, ir::kNoValue);
  conv.inputs[3] = z;
  return true;
}

}  // namespace

Result<int> ConvAddFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (!fusions_enabled(context)) return 0;
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  std::vector<bool> touched(graph.node_count(), false);
  int fused = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& add = graph.node(id);
    if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    if (add.inputs[0] == ir::kNoValue || add.inputs[1] == ir::kNoValue) continue;
    const ir::ValueId out = add.outputs[0];
    for (size_t side = 0; side < 2; ++side) {
      const ir::ValueId conv_out = add.inputs[side];
      const ir::ValueId other = add.inputs[1 - side];
      const ir::NodeId conv_id = index.producer_id(conv_out);
      if (conv_id == ir::kNoNode || touched[conv_id]) continue;
      if (!accepts_add(graph.node(conv_id)) || graph.node(conv_id).outputs[0] != conv_out) continue;
      if (!index.has_single_use(conv_out)) continue;
      const DataType dt = graph.value(conv_out).dtype;
      if (!is_fusion_float(dt) || graph.value(out).dtype != dt) continue;
      const bool done = graph.value(other).is_constant()
                            ? fold_bias(graph, graph.node(conv_id), other, dt)
                            : fuse_residual(graph, index, conv_id, other, dt);
      if (!done) continue;
      graph.node(conv_id).outputs[0] = out;
      touched[conv_id] = true;
      remove[id] = true;
      ++fused;
      break;
    }
  }
  if (fused == 0) return 0;
  INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer
