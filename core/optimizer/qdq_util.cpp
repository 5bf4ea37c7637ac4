#include "optimizer/qdq_util.hpp"

#include <cmath>

#include "optimizer/fused_activation.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer::qdq {

bool is_8bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

bool present(const ir::Node& n, size_t slot) {
  return slot < n.inputs.size() && n.inputs[slot] != ir::kNoValue;
}

std::optional<std::vector<int32_t>> int8_constant(const ir::Graph& graph, ir::ValueId v) {
  const ir::TensorData* t = constant_of(graph, v);
  if (t == nullptr || !is_8bit(t->dtype())) return std::nullopt;
  std::vector<int32_t> out(static_cast<size_t>(t->element_count()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] =
        t->dtype() == DataType::kUInt8 ? int32_t{t->as<uint8_t>()[i]} : int32_t{t->as<int8_t>()[i]};
  return out;
}

std::optional<std::vector<double>> scales(const ir::Graph& graph, ir::ValueId v, size_t count) {
  const ir::TensorData* t = constant_of(graph, v);
  if (t == nullptr || t->dtype() != DataType::kFloat32) return std::nullopt;
  std::optional<std::vector<double>> s = float_constant(graph, v);
  if (!s || s->size() != count) return std::nullopt;
  for (double x : *s)
    if (!(x > 0) || !std::isfinite(x)) return std::nullopt;
  return s;
}

std::optional<PerTensor> per_tensor(const ir::Graph& graph, const ir::Node& n, ir::ValueId data) {
  if (n.inputs.size() < 2 || !present(n, 1)) return std::nullopt;
  if (n.op_type == "QuantizeLinear" && n.attr("output_dtype") != nullptr && !present(n, 2))
    return std::nullopt;
  PerTensor p;
  p.data = data;
  p.scale = n.inputs[1];
  std::optional<std::vector<double>> s = scales(graph, p.scale, 1);
  if (!s) return std::nullopt;
  p.scale_value = (*s)[0];
  // The quantized type: the zero point's, else the data's when already inferred, else
  // (a QuantizeLinear without zero point) ONNX's default, uint8.
  p.dtype = graph.value(data).dtype;
  if (present(n, 2)) {
    p.zero = n.inputs[2];
    std::optional<std::vector<int32_t>> z = int8_constant(graph, p.zero);
    if (!z || z->size() != 1) return std::nullopt;
    const DataType zt = constant_of(graph, p.zero)->dtype();
    if (p.dtype != DataType::kUndefined && p.dtype != zt) return std::nullopt;
    p.dtype = zt;
    p.zero_value = (*z)[0];
  } else if (p.dtype == DataType::kUndefined && n.op_type == "QuantizeLinear") {
    p.dtype = DataType::kUInt8;
  }
  if (!is_8bit(p.dtype)) return std::nullopt;
  return p;
}

std::optional<PerTensor> dequantized_input(const ir::Graph& graph, const ir::Node* producer) {
  if (producer == nullptr || !is_onnx_op(*producer, "DequantizeLinear") || !present(*producer, 0) ||
      producer->outputs.size() != 1)
    return std::nullopt;
  return per_tensor(graph, *producer, producer->inputs[0]);
}

ir::TensorDataPtr constant_data(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v) {
  if (v == ir::kNoValue) return nullptr;
  if (graph.value(v).is_constant()) return graph.value(v).constant;
  const ir::Node* p = index.producer(v);
  if (p == nullptr || !is_onnx_op(*p, "Constant") || p->outputs.size() != 1) return nullptr;
  const ir::Attribute* value = p->attr("value");
  if (value == nullptr || value->tensors.size() != 1) return nullptr;
  return value->tensors[0];
}

std::optional<double> scalar_value(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v) {
  const ir::TensorDataPtr t = constant_data(graph, index, v);
  if (t == nullptr || t->element_count() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat32:
      return t->as<float>()[0];
    case DataType::kFloat64:
      return t->as<double>()[0];
    default:
      return std::nullopt;
  }
}

ir::ValueId zero_point_value(ir::Graph& graph, const PerTensor& p, const std::string& base) {
  if (p.zero != ir::kNoValue) return p.zero;
  return add_constant(graph, base + "_zero_point",
                      std::make_shared<const ir::TensorData>(p.dtype, std::vector<int64_t>{},
                                                             std::vector<uint8_t>{0}));
}

bool float_or_unknown(const ir::Graph& graph, ir::ValueId v) {
  const DataType t = graph.value(v).dtype;
  return t == DataType::kFloat32 || t == DataType::kUndefined;
}

std::optional<QuantizedResult> quantized_result(const ir::Graph& graph, const GraphIndex& index,
                                                ir::NodeId q_id, const std::vector<bool>& remove) {
  const ir::Node& q = graph.node(q_id);
  if (!is_onnx_op(q, "QuantizeLinear") || q.outputs.size() != 1 || !present(q, 0))
    return std::nullopt;
  std::optional<PerTensor> y = per_tensor(graph, q, q.outputs[0]);
  if (!y) return std::nullopt;
  const ir::ValueId in = q.inputs[0];
  const ir::NodeId producer = index.producer_id(in);
  if (producer == ir::kNoNode || !index.has_single_use(in) || remove[producer] ||
      !float_or_unknown(graph, in))
    return std::nullopt;
  const ir::Node& p = graph.node(producer);
  if (p.outputs.empty() || p.outputs[0] != in) return std::nullopt;
  return QuantizedResult{*y, producer};
}

}  // namespace infer::optimizer::qdq
