#include "optimizer/qdq_lookup_fusion.hpp"

#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/qdq_util.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// Default-domain functions applied to each element of their first input on its own.
bool is_elementwise_function(const ir::Node& n) {
  static const char* kOps[] = {
      "Relu",   "LeakyRelu", "Clip", "Sigmoid",  "Tanh",     "HardSigmoid", "HardSwish",
      "Elu",    "Selu",      "Celu", "Softplus", "Softsign", "Gelu",        "Erf",
      "Abs",    "Neg",       "Exp",  "Log",      "Sqrt",     "Reciprocal",  "Sin",
      "Cos",    "Floor",     "Ceil", "Round",    "Sign",     "Identity",    "ThresholdedRelu",
      "Shrink", "Mish"};
  for (const char* op : kOps)
    if (is_onnx_op(n, op)) return true;
  return false;
}

// The 256 values of an 8-bit type in table order.
ir::TensorDataPtr all_values(DataType dtype) {
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i)
    bytes[static_cast<size_t>(i)] =
        static_cast<uint8_t>(dtype == DataType::kUInt8 ? i : static_cast<int8_t>(i - 128));
  return std::make_shared<const ir::TensorData>(dtype, std::vector<int64_t>{256}, std::move(bytes));
}

// Runs DequantizeLinear -> F -> QuantizeLinear on every value of x's type through the
// evaluator, in a scratch graph: the table, or nullptr when a node cannot be evaluated.
ir::TensorDataPtr build_table(const ir::Graph& g, const GraphIndex& index, const ir::Node& f,
                              const ir::Node& q, const qdq::PerTensor& x, const qdq::PerTensor& y,
                              const ConstantEvaluator& evaluator) {
  ir::Graph scratch;
  scratch.name = "qdq_lookup_fusion/" + f.name;
  auto copy_constant = [&](ir::ValueId v) -> ir::ValueId {
    if (v == ir::kNoValue) return ir::kNoValue;
    return add_constant(scratch, g.value(v).name, qdq::constant_data(g, index, v));
  };
  // Evaluates `node` (inputs already constants of the scratch graph) into a new constant
  // value of `dtype`.
  auto evaluate = [&](ir::Node node, DataType dtype) -> ir::ValueId {
    const ir::ValueId out = add_value(scratch, node.name + "_out", dtype, ir::Shape::of({256}));
    node.outputs = {out};
    const ir::NodeId id = scratch.add_node(std::move(node));
    Result<std::vector<ir::TensorDataPtr>> r = evaluator.evaluate(scratch, scratch.node(id));
    if (!r.is_ok() || r->size() != 1 || (*r)[0] == nullptr || (*r)[0]->dtype() != dtype ||
        (*r)[0]->element_count() != 256)
      return ir::kNoValue;
    scratch.value(out).constant = (*r)[0];
    return out;
  };

  ir::Node d;
  d.name = "dequantize";
  d.op_type = "DequantizeLinear";
  d.inputs = {add_constant(scratch, "x", all_values(x.dtype)), copy_constant(x.scale),
              copy_constant(x.zero)};
  const ir::ValueId xf = evaluate(std::move(d), DataType::kFloat32);
  if (xf == ir::kNoValue) return nullptr;

  ir::Node fn = f;
  fn.name = "function";
  fn.inputs[0] = xf;
  for (size_t i = 1; i < fn.inputs.size(); ++i) fn.inputs[i] = copy_constant(f.inputs[i]);
  const ir::ValueId yf = evaluate(std::move(fn), DataType::kFloat32);
  if (yf == ir::kNoValue) return nullptr;

  ir::Node qn;
  qn.name = "quantize";
  qn.op_type = "QuantizeLinear";
  qn.attributes = q.attributes;
  qn.inputs = {yf, copy_constant(y.scale), copy_constant(y.zero)};
  const ir::ValueId table = evaluate(std::move(qn), y.dtype);
  if (table == ir::kNoValue) return nullptr;
  return scratch.value(table).constant;
}

bool try_fuse(ir::Graph& g, const GraphIndex& index, ir::NodeId q_id,
              const ConstantEvaluator& evaluator, std::vector<bool>& remove) {
  const std::optional<qdq::QuantizedResult> r = qdq::quantized_result(g, index, q_id, remove);
  if (!r) return false;
  const qdq::PerTensor& y = r->y;
  const ir::NodeId f_id = r->producer;
  const ir::Node& f = g.node(f_id);
  if (!is_elementwise_function(f) || f.outputs.size() != 1 || !qdq::present(f, 0)) return false;
  for (size_t i = 1; i < f.inputs.size(); ++i)
    if (f.inputs[i] != ir::kNoValue && qdq::constant_data(g, index, f.inputs[i]) == nullptr)
      return false;
  const std::optional<qdq::PerTensor> x = qdq::dequantized_input(g, index.producer(f.inputs[0]));
  if (!x) return false;

  ir::TensorDataPtr table = build_table(g, index, f, g.node(q_id), *x, y, evaluator);
  if (table == nullptr) return false;
  const std::string base = f.name.empty() ? std::string("qlinear_lookup") : f.name;
  const ir::ValueId table_value = add_constant(g, base + "_table", std::move(table));
  ir::Node& n = g.node(f_id);
  n.domain = kFusedDomain;
  n.op_type = "QLinearLookup";
  n.attributes.clear();
  n.inputs = {x->data, table_value};
  n.outputs[0] = y.data;
  remove[q_id] = true;
  return true;
}

}  // namespace

Result<int> QdqLookupFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (context.evaluator == nullptr) return 0;
  return qdq::rewrite_each_node(
      graph, context, [&](const GraphIndex& index, ir::NodeId id, std::vector<bool>& remove) {
        return try_fuse(graph, index, id, *context.evaluator, remove);
      });
}

}  // namespace infer::optimizer
