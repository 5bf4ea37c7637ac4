#include "optimizer/float32_widening.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// Ops whose output dtype an attribute or a typed constant decides: widening their values
// alone would contradict it.
bool output_dtype_is_fixed(const ir::Node& node) {
  if (node.domain.empty() && (node.op_type == "Cast" || node.op_type == "CastLike" ||
                              node.op_type == "Constant" || node.op_type == "ConstantOfShape"))
    return true;
  return node.attr("to") != nullptr || node.attr("dtype") != nullptr ||
         node.attr("output_dtype") != nullptr;
}

ir::Attribute cast_to(DataType dtype) { return attr_int("to", static_cast<int64_t>(dtype)); }

}  // namespace

bool is_low_precision_float(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

bool is_widenable(const ir::Graph& graph, const ir::Node& node) {
  if (has_subgraphs(node) || output_dtype_is_fixed(node)) return false;
  auto low = [&](ir::ValueId v) {
    return v != ir::kNoValue && is_low_precision_float(graph.value(v).dtype);
  };
  return std::any_of(node.inputs.begin(), node.inputs.end(), low) ||
         std::any_of(node.outputs.begin(), node.outputs.end(), low);
}

Result<WideningSummary> widen_to_float32(ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  std::vector<ir::NodeId> order = nodes;
  std::sort(order.begin(), order.end());  // topological: producers before readers
  WideningSummary summary;
  // The float32 form of each float16/bfloat16 value converted so far.
  std::map<ir::ValueId, ir::ValueId> wide;
  std::vector<ir::NodeId> casts_back;
  auto add_cast = [&](const std::string& name, ir::ValueId in, ir::ValueId out, DataType to) {
    ir::Node cast;
    cast.name = name;
    cast.op_type = "Cast";
    cast.inputs = {in};
    cast.outputs = {out};
    cast.attributes = {cast_to(to)};
    ++summary.casts;
    return graph.add_node(std::move(cast));
  };
  auto float32_value = [&](ir::ValueId v) {
    const ir::Value& original = graph.value(v);
    return add_value(graph, original.name + "/float32", DataType::kFloat32, original.shape);
  };

  for (ir::NodeId id : order) {
    if (id >= graph.node_count() || !is_widenable(graph, graph.node(id)))
      return invalid_argument("widen_to_float32: node " + std::to_string(id) +
                              " does not read or write a float16/bfloat16 tensor it can widen");
    const std::string node_name = graph.node(id).name;
    for (size_t i = 0; i < graph.node(id).inputs.size(); ++i) {
      const ir::ValueId v = graph.node(id).inputs[i];
      if (v == ir::kNoValue || !is_low_precision_float(graph.value(v).dtype)) continue;
      auto it = wide.find(v);
      if (it == wide.end()) {
        ir::ValueId w;
        if (graph.value(v).is_constant()) {
          const ir::TensorData& data = *graph.value(v).constant;
          std::optional<std::vector<double>> values = float_constant(graph, v);
          if (!values)
            return invalid_argument(graph.node(id).describe() + ": constant '" +
                                    graph.value(v).name + "' could not be read");
          w = add_constant(graph, graph.value(v).name + "/float32",
                           make_float_tensor(DataType::kFloat32, data.dims(), *values));
          ++summary.constants;
        } else {
          w = float32_value(v);
          add_cast(node_name + "/cast_in_" + std::to_string(i), v, w, DataType::kFloat32);
        }
        it = wide.emplace(v, w).first;
      }
      graph.node(id).inputs[i] = it->second;
    }
    for (size_t o = 0; o < graph.node(id).outputs.size(); ++o) {
      const ir::ValueId v = graph.node(id).outputs[o];
      if (v == ir::kNoValue || !is_low_precision_float(graph.value(v).dtype)) continue;
      const ir::ValueId w = float32_value(v);
      graph.node(id).outputs[o] = w;
      casts_back.push_back(
          add_cast(node_name + "/cast_out_" + std::to_string(o), w, v, graph.value(v).dtype));
      wide[v] = w;
    }
  }

  // Casts back whose value only widened nodes read (they read the float32 value now).
  graph.rebuild_links();
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  for (ir::NodeId c : casts_back) {
    const ir::ValueId v = graph.node(c).outputs[0];
    if (index.consumers(v).empty() && !index.is_graph_output(v) && !index.is_captured(v)) {
      remove[c] = true;
      --summary.casts;
    }
  }
  INFER_RETURN_IF_ERROR(commit(graph, remove));
  return summary;
}

}  // namespace infer::optimizer
