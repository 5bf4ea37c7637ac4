#include "optimizer/qdq_passthrough.hpp"

#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/qdq_util.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// The operators that only select or move elements, and which of their inputs carry data.
bool moves_data(const ir::Node& n) {
  static const char* kOps[] = {"MaxPool",      "Reshape",      "Transpose", "Flatten",
                               "Squeeze",      "Unsqueeze",    "Identity",  "Slice",
                               "DepthToSpace", "SpaceToDepth", "Concat"};
  for (const char* op : kOps)
    if (is_onnx_op(n, op)) return true;
  return false;
}

// The input slots of `n` that carry the quantized data.
std::vector<size_t> data_slots(const ir::Node& n) {
  if (n.op_type != "Concat") return {0};
  std::vector<size_t> slots(n.inputs.size());
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = i;
  return slots;
}

bool try_fuse(ir::Graph& g, const GraphIndex& index, ir::NodeId q_id, std::vector<bool>& remove) {
  const std::optional<qdq::QuantizedResult> r = qdq::quantized_result(g, index, q_id, remove);
  if (!r) return false;
  const ir::Node& op = g.node(r->producer);
  if (!moves_data(op) || has_subgraphs(op)) return false;
  // MaxPool's optional Indices output must be absent.
  for (size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i] != ir::kNoValue) return false;

  const std::vector<size_t> slots = data_slots(op);
  std::vector<ir::ValueId> quantized;
  for (size_t slot : slots) {
    if (!qdq::present(op, slot)) return false;
    const std::optional<qdq::PerTensor> x =
        qdq::dequantized_input(g, index.producer(op.inputs[slot]));
    if (!x || !x->same_params(r->y)) return false;
    quantized.push_back(x->data);
  }
  ir::Node& n = g.node(r->producer);
  for (size_t i = 0; i < slots.size(); ++i) n.inputs[slots[i]] = quantized[i];
  n.outputs.resize(1);
  n.outputs[0] = r->y.data;
  remove[q_id] = true;
  return true;
}

}  // namespace

Result<int> QdqPassthrough::apply(ir::Graph& graph, const PassContext& context) {
  return qdq::rewrite_each_node(
      graph, context, [&](const GraphIndex& index, ir::NodeId id, std::vector<bool>& remove) {
        return try_fuse(graph, index, id, remove);
      });
}

}  // namespace infer::optimizer
