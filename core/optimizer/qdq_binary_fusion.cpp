#include "optimizer/qdq_binary_fusion.hpp"

#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/qdq_util.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool try_fuse(ir::Graph& g, const GraphIndex& index, ir::NodeId q_id, std::vector<bool>& remove) {
  const std::optional<qdq::QuantizedResult> r = qdq::quantized_result(g, index, q_id, remove);
  if (!r) return false;
  const qdq::PerTensor& c = r->y;
  const ir::NodeId op_id = r->producer;
  const ir::Node& op = g.node(op_id);
  const bool add = is_onnx_op(op, "Add");
  if ((!add && !is_onnx_op(op, "Mul")) || op.inputs.size() != 2 || op.outputs.size() != 1 ||
      !qdq::present(op, 0) || !qdq::present(op, 1))
    return false;
  const std::optional<qdq::PerTensor> a = qdq::dequantized_input(g, index.producer(op.inputs[0]));
  const std::optional<qdq::PerTensor> b = qdq::dequantized_input(g, index.producer(op.inputs[1]));
  if (!a || !b || a->dtype != c.dtype || b->dtype != c.dtype) return false;

  const std::string base =
      op.name.empty() ? std::string(add ? "qlinear_add" : "qlinear_mul") : op.name;
  std::vector<ir::ValueId> inputs = {a->data,
                                     a->scale,
                                     qdq::zero_point_value(g, *a, base + "_a"),
                                     b->data,
                                     b->scale,
                                     qdq::zero_point_value(g, *b, base + "_b"),
                                     c.scale,
                                     qdq::zero_point_value(g, c, base + "_c")};
  ir::Node& n = g.node(op_id);
  n.domain = kFusedDomain;
  n.op_type = add ? "QLinearAdd" : "QLinearMul";
  n.inputs = std::move(inputs);
  n.outputs[0] = c.data;
  remove[q_id] = true;
  return true;
}

}  // namespace

Result<int> QdqBinaryFusion::apply(ir::Graph& graph, const PassContext& context) {
  return qdq::rewrite_each_node(
      graph, context, [&](const GraphIndex& index, ir::NodeId id, std::vector<bool>& remove) {
        return try_fuse(graph, index, id, remove);
      });
}

}  // namespace infer::optimizer
