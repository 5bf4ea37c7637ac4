#include "optimizer/matmul_integer_to_float_fusion.hpp"

#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/qdq_util.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// The only reader of `v` (through one slot, not a graph output), when it is a
// default-domain `op` not yet marked; kNoNode otherwise.
ir::NodeId single_reader(const ir::Graph& g, const GraphIndex& index, ir::ValueId v, const char* op,
                         const std::vector<bool>& remove) {
  if (!index.has_single_use(v)) return ir::kNoNode;
  const ir::NodeId id = index.consumers(v).front();
  const ir::Node& n = g.node(id);
  if (remove[id] || !is_onnx_op(n, op) || n.outputs.size() != 1) return ir::kNoNode;
  return id;
}

// A float32 constant of one element or `n` elements (rank <= 1).
bool per_column_constant(const ir::Graph& g, ir::ValueId v, int64_t n, bool allow_scalar) {
  const ir::TensorData* t = constant_of(g, v);
  if (t == nullptr || t->dtype() != DataType::kFloat32 || t->dims().size() > 1) return false;
  return t->element_count() == n || (allow_scalar && t->element_count() == 1);
}

// One element: a rank-0 or [1] value, or DynamicQuantizeLinear's scale output.
bool one_element(const ir::Graph& g, const GraphIndex& index, ir::ValueId v) {
  if (const ir::Node* p = index.producer(v))
    if (is_onnx_op(*p, "DynamicQuantizeLinear") && p->outputs.size() > 1 && p->outputs[1] == v)
      return true;
  const ir::Shape& s = g.value(v).shape;
  if (!s.rank_known()) return false;
  for (const ir::Dim& d : *s.dims)
    if (!same_dim(d, ir::Dim::known(1))) return false;
  return s.dims->size() <= 1;
}

bool try_fuse(ir::Graph& g, const GraphIndex& index, ir::NodeId mm_id, std::vector<bool>& remove) {
  const ir::Node& mm = g.node(mm_id);
  if (!is_onnx_op(mm, "MatMulInteger") || mm.outputs.size() != 1 || mm.inputs.size() < 2 ||
      !qdq::present(mm, 0) || !qdq::present(mm, 1) || remove[mm_id])
    return false;
  const ir::TensorData* b = constant_of(g, mm.inputs[1]);
  if (b == nullptr || b->dims().size() != 2) return false;
  const int64_t N = b->dims()[1];

  const ir::NodeId cast_id = single_reader(g, index, mm.outputs[0], "Cast", remove);
  if (cast_id == ir::kNoNode ||
      g.node(cast_id).attr_int("to", 0) != static_cast<int64_t>(DataType::kFloat32))
    return false;
  const ir::ValueId f = g.node(cast_id).outputs[0];
  const ir::NodeId mul_id = single_reader(g, index, f, "Mul", remove);
  if (mul_id == ir::kNoNode) return false;
  const ir::ValueId s = other_operand(g.node(mul_id), f);
  const ir::NodeId scale_id = index.producer_id(s);
  if (s == ir::kNoValue || scale_id == ir::kNoNode || !index.has_single_use(s) ||
      remove[scale_id] || !is_onnx_op(g.node(scale_id), "Mul") ||
      g.node(scale_id).inputs.size() != 2)
    return false;
  // a_scale * b_scale, in either order.
  const ir::Node& sm = g.node(scale_id);
  ir::ValueId a_scale = ir::kNoValue, b_scale = ir::kNoValue;
  for (int first = 0; first < 2 && b_scale == ir::kNoValue; ++first) {
    const ir::ValueId x = sm.inputs[static_cast<size_t>(first)];
    const ir::ValueId y = sm.inputs[static_cast<size_t>(1 - first)];
    if (one_element(g, index, x) && !g.value(x).is_constant() &&
        per_column_constant(g, y, N, true)) {
      a_scale = x;
      b_scale = y;
    }
  }
  if (b_scale == ir::kNoValue) return false;

  ir::ValueId out = g.node(mul_id).outputs[0];
  ir::ValueId bias = ir::kNoValue;
  ir::NodeId add_id = single_reader(g, index, out, "Add", remove);
  if (add_id != ir::kNoNode) {
    const ir::ValueId c = other_operand(g.node(add_id), out);
    if (c != ir::kNoValue && per_column_constant(g, c, N, false)) {
      bias = c;
      out = g.node(add_id).outputs[0];
    } else {
      add_id = ir::kNoNode;
    }
  }

  ir::Node& n = g.node(mm_id);
  std::vector<ir::ValueId> inputs = {n.inputs[0],
                                     n.inputs[1],
                                     a_scale,
                                     b_scale,
                                     qdq::present(n, 2) ? n.inputs[2] : ir::kNoValue,
                                     qdq::present(n, 3) ? n.inputs[3] : ir::kNoValue};
  if (bias != ir::kNoValue) inputs.push_back(bias);
  while (inputs.back() == ir::kNoValue) inputs.pop_back();
  n.domain = kFusedDomain;
  n.op_type = "MatMulIntegerToFloat";
  n.inputs = std::move(inputs);
  n.outputs = {out};
  for (ir::NodeId id : {cast_id, mul_id, scale_id}) remove[id] = true;
  if (add_id != ir::kNoNode) remove[add_id] = true;
  return true;
}

}  // namespace

Result<int> MatMulIntegerToFloatFusion::apply(ir::Graph& graph, const PassContext& context) {
  return qdq::rewrite_each_node(
      graph, context, [&](const GraphIndex& index, ir::NodeId id, std::vector<bool>& remove) {
        return try_fuse(graph, index, id, remove);
      });
}

}  // namespace infer::optimizer
