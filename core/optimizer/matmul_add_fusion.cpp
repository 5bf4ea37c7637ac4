#include "optimizer/matmul_add_fusion.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool accepts_bias(const ir::Node& mm) {
  if (mm.inputs.size() < 2 || mm.outputs.size() != 1) return false;
  if (mm.inputs[0] == ir::kNoValue || mm.inputs[1] == ir::kNoValue) return false;
  if (is_onnx_op(mm, "MatMul")) return mm.inputs.size() == 2;
  if (!is_fused_op(mm, "FusedMatMul") || has_activation(mm)) return false;
  return mm.inputs.size() == 2 || mm.inputs[2] == ir::kNoValue;
}

// The 1-D bias value to give the FusedMatMul, or nullopt when `c` is not a row bias for
// `mm`'s product. May add a reshaped copy of `c` to the graph.
std::optional<ir::ValueId> row_bias(ir::Graph& graph, const ir::Node& mm, ir::ValueId c,
                                    DataType dt) {
  const ir::TensorData* t = constant_of(graph, c);
  if (t == nullptr || t->dtype() != dt) return std::nullopt;
  const ir::Shape& a = graph.value(mm.inputs[0]).shape;
  const ir::Shape& b = graph.value(mm.inputs[1]).shape;
  if (!a.rank_known() || !b.rank_known() || a.rank() < 1 || b.rank() < 2) return std::nullopt;
  const ir::Dim& n = b.dims->back();
  if (!n.is_known()) return std::nullopt;
  const size_t product_rank = a.rank() == 1 ? b.rank() - 1 : std::max(a.rank(), b.rank());
  const std::vector<int64_t>& dims = t->dims();
  if (dims.empty() || dims.size() > product_rank || dims.back() != n.value) return std::nullopt;
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (dims[i] != 1) return std::nullopt;
  if (dims.size() == 1) return c;
  std::optional<std::vector<double>> values = float_constant(graph, c);
  if (!values) return std::nullopt;
  return add_constant(graph, graph.value(c).name + "_row",
                      make_float_tensor(dt, {n.value}, *values));
}

}  // namespace

Result<int> MatMulAddFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (!fusions_enabled(context)) return 0;
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int fused = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& add = graph.node(id);
    if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    if (add.inputs[0] == ir::kNoValue || add.inputs[1] == ir::kNoValue) continue;
    const ir::ValueId out = add.outputs[0];
    for (size_t side = 0; side < 2; ++side) {
      const ir::ValueId mm_out = add.inputs[side];
      const ir::ValueId bias = add.inputs[1 - side];
      const ir::NodeId mm_id = index.producer_id(mm_out);
      if (mm_id == ir::kNoNode || !accepts_bias(graph.node(mm_id))) continue;
      if (graph.node(mm_id).outputs[0] != mm_out || !index.has_single_use(mm_out)) continue;
      const DataType dt = graph.value(mm_out).dtype;
      if (!is_fusion_float(dt) || graph.value(out).dtype != dt) continue;
      std::optional<ir::ValueId> b = row_bias(graph, graph.node(mm_id), bias, dt);
      if (!b) continue;
      ir::Node& mm = graph.node(mm_id);
      mm.op_type = "FusedMatMul";
      mm.domain = kFusedDomain;
      mm.inputs.resize(3, ir::kNoValue);
      mm.inputs[2] = *b;
      mm.outputs[0] = out;
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
