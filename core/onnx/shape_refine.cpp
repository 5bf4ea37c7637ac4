#include "onnx/shape_refine.hpp"

#include <exception>
#include <memory>

#include "onnx/graph_export.hpp"
#include "onnx/shape_infer.hpp"
#include "onnx/value_type.hpp"

namespace infer::onnx_io {
namespace {

// Only shape-like constants (Reshape shapes, Gather indices, scalars) matter for data
// propagation; weights only need their type, which a typed input gives.
constexpr size_t kInlineConstantBytes = 4096;

// A shallow copy of `graph` whose large constants are graph inputs instead.
ir::Graph light_copy(const ir::Graph& graph) {
  ir::Graph g = graph;
  for (ir::ValueId v = 0; v < g.value_count(); ++v) {
    ir::Value& value = g.value(v);
    if (!value.is_constant() || value.outer_scope) continue;
    if (value.constant->size_bytes() <= kInlineConstantBytes) continue;
    value.constant.reset();
    g.inputs.push_back(v);
  }
  return g;
}

}  // namespace

bool shape_more_known(const ir::Shape& before, const ir::Shape& after) {
  if (!after.rank_known()) return false;
  if (!before.rank_known()) return true;
  if (before.rank() != after.rank()) return false;
  for (size_t i = 0; i < before.rank(); ++i) {
    const ir::Dim& a = (*before.dims)[i];
    const ir::Dim& b = (*after.dims)[i];
    if (!a.is_known() && (b.is_known() || (a.param.empty() && !b.param.empty()))) return true;
  }
  return false;
}

namespace {

Status refine(ir::Graph& graph, const std::map<std::string, int64_t>& opsets) {
  ir::Model model;
  model.ir_version = 8;
  model.opsets = opsets;
  model.graph = std::make_shared<ir::Graph>(light_copy(graph));
  INFER_ASSIGN_OR_RETURN(onnx::ModelProto proto, to_model_proto(model));
  INFER_RETURN_IF_ERROR(infer_shapes(proto));
  auto learn = [&](const onnx::ValueInfoProto& info) {
    std::optional<ir::ValueId> id = graph.find_value(info.name());
    if (!id) return;
    ir::Value& v = graph.value(*id);
    if (v.is_constant() || v.outer_scope) return;
    Result<ValueType> inferred = convert_value_type(info.type(), info.name());
    if (!inferred.is_ok()) return;
    const ValueType merged = merge_value_types(ValueType{v.dtype, v.shape}, *inferred);
    if (v.dtype == DataType::kUndefined) v.dtype = merged.dtype;
    if (shape_more_known(v.shape, merged.shape)) v.shape = merged.shape;
  };
  for (const onnx::ValueInfoProto& info : proto.graph().value_info()) learn(info);
  for (const onnx::ValueInfoProto& info : proto.graph().output()) learn(info);
  return Status::ok();
}

}  // namespace

Status refine_shapes(ir::Graph& graph, const std::map<std::string, int64_t>& opsets) {
  try {
    return refine(graph, opsets);
  } catch (const std::exception& e) {
    return internal_error(std::string("shape refinement: ") + e.what());
  }
}

}  // namespace infer::onnx_io
