// See quant_annotate.hpp.
#include "onnx/quant_annotate.hpp"

#include <optional>
#include <set>
#include <vector>

namespace infer::onnx_io {
namespace {

// The dims of a constant value: its data, or the tensor of the Constant node making it.
std::optional<std::vector<int64_t>> constant_dims(const ir::Graph& graph, ir::ValueId id) {
  if (id == ir::kNoValue || id >= graph.value_count()) return std::nullopt;
  const ir::Value& v = graph.value(id);
  if (v.constant) return v.constant->dims();
  if (v.producer == ir::kNoNode) return std::nullopt;
  const ir::Node& producer = graph.node(v.producer);
  if (producer.op_type != "Constant" || !producer.domain.empty()) return std::nullopt;
  const ir::Attribute* value = producer.attr("value");
  if (!value || value->tensors.size() != 1) return std::nullopt;
  return value->tensors[0]->dims();
}

bool same(const ir::QuantInfo& a, const ir::QuantInfo& b) {
  return a.scheme == b.scheme && a.storage == b.storage && a.axis == b.axis &&
         a.block_size == b.block_size && a.scale == b.scale && a.zero_point == b.zero_point;
}

std::optional<ir::QuantInfo> describe(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.size() < 2 || node.inputs[0] == ir::kNoValue) return std::nullopt;
  const ir::ValueId x = node.inputs[0];
  const ir::ValueId zp = node.inputs.size() > 2 ? node.inputs[2] : ir::kNoValue;
  auto scale_dims = constant_dims(graph, node.inputs[1]);
  if (!scale_dims) return std::nullopt;

  const ir::Value& input = graph.value(x);
  ir::QuantInfo q;
  q.scale = node.inputs[1];
  q.zero_point = zp;
  q.storage = input.dtype;
  if (q.storage == DataType::kUndefined && zp != ir::kNoValue) q.storage = graph.value(zp).dtype;
  if (q.storage == DataType::kUndefined) q.storage = DataType::kUInt8;

  const int64_t block_size = node.attr_int("block_size", 0);
  const bool rank_known = input.shape.rank_known();
  const auto rank = static_cast<int64_t>(input.shape.rank());
  if (scale_dims->empty()) {
    q.scheme = ir::QuantScheme::kPerTensor;
    return q;
  }
  if (block_size > 0) {
    if (!rank_known || static_cast<int64_t>(scale_dims->size()) != rank) return std::nullopt;
    q.scheme = ir::QuantScheme::kBlock;
    q.block_size = block_size;
  } else if (scale_dims->size() == 1) {
    q.scheme = ir::QuantScheme::kPerAxis;
  } else {
    return std::nullopt;
  }
  int64_t axis = node.attr_int("axis", 1);
  if (axis < 0) {
    // The descriptor's axis is non-negative (the plugin ABI says so); without the rank a
    // negative axis cannot be resolved, and a descriptor with a guessed axis would lie.
    if (!rank_known) return std::nullopt;
    axis += rank;
  }
  if (axis < 0 || (rank_known && axis >= rank)) return std::nullopt;
  q.axis = axis;
  return q;
}

}  // namespace

void annotate_quantization(ir::Graph& graph) {
  std::set<ir::ValueId> conflicting;
  for (const ir::Node& node : graph.nodes()) {
    for (const ir::Attribute& attr : node.attributes)
      for (const auto& body : attr.graphs)
        if (body) annotate_quantization(*body);
    if (node.op_type != "DequantizeLinear" || !node.domain.empty()) continue;
    auto q = describe(graph, node);
    if (!q) {
      if (!node.inputs.empty() && node.inputs[0] != ir::kNoValue) {
        // A reader whose parameters cannot be described still disagrees with any
        // descriptor another reader would set.
        conflicting.insert(node.inputs[0]);
      }
      continue;
    }
    const ir::ValueId x = node.inputs[0];
    if (conflicting.count(x)) continue;
    ir::Value& v = graph.value(x);
    if (v.quant && !same(*v.quant, *q)) {
      v.quant.reset();
      conflicting.insert(x);
      continue;
    }
    v.quant = *q;
  }
  for (ir::ValueId x : conflicting) graph.value(x).quant.reset();
}

}  // namespace infer::onnx_io
