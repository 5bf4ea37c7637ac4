// See graph_convert.hpp.
#include "onnx/graph_convert.hpp"

#include <unordered_map>
#include <vector>

#include "onnx/attribute_convert.hpp"
#include "onnx/tensor_convert.hpp"
#include "onnx/value_type.hpp"

namespace infer::onnx_io {
namespace {

std::string normalize_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

// Converts one graph. A converter for a body points at the converter of the graph that
// holds it, which is how names a body does not define are found (and captured).
class GraphConverter {
 public:
  GraphConverter(ConvertContext& ctx, GraphConverter* parent, ir::Graph& graph)
      : ctx_(ctx), parent_(parent), graph_(graph) {}

  Status convert(onnx::GraphProto& proto) {
    graph_.name = proto.name();
    collect_types(proto);
    INFER_RETURN_IF_ERROR(add_initializers(proto));
    INFER_RETURN_IF_ERROR(add_inputs(proto));
    INFER_RETURN_IF_ERROR(add_node_outputs(proto));
    for (auto& node : *proto.mutable_node()) INFER_RETURN_IF_ERROR(convert_node(node));
    INFER_RETURN_IF_ERROR(set_outputs(proto));
    return graph_.topological_sort();
  }

  // The id of `name` in this graph: a value it defines, or a capture of a value some
  // enclosing graph defines (created on first use, in every graph in between too).
  std::optional<ir::ValueId> resolve(const std::string& name) {
    if (auto local = graph_.find_value(name)) return local;
    if (!parent_) return std::nullopt;
    auto outer = parent_->resolve(name);
    if (!outer) return std::nullopt;
    const ir::Value& source = parent_->graph_.value(*outer);
    ir::Value capture;
    capture.name = name;
    capture.dtype = source.dtype;
    capture.shape = source.shape;
    capture.outer_scope = true;
    return graph_.add_value(std::move(capture));
  }

 private:
  // Everything the file says about value types, by name; converted when a value is
  // defined, so that an unused exotic value_info entry does not fail the load.
  void collect_types(const onnx::GraphProto& proto) {
    for (const auto& vi : proto.value_info()) types_[vi.name()].push_back(&vi.type());
    for (const auto& vi : proto.output())
      if (vi.has_type()) types_[vi.name()].push_back(&vi.type());
  }

  Result<ValueType> declared_type(const std::string& name) {
    ValueType merged;
    auto it = types_.find(name);
    if (it == types_.end()) return merged;
    for (const onnx::TypeProto* t : it->second) {
      INFER_ASSIGN_OR_RETURN(ValueType vt, convert_value_type(*t, name));
      merged = merge_value_types(merged, vt);
    }
    return merged;
  }

  // Records that `what` defines `name`; a second definition breaks ONNX's single
  // assignment rule and is an error naming both definers.
  Status define(const std::string& name, const std::string& what) {
    auto [it, fresh] = definers_.emplace(name, what);
    if (!fresh)
      return invalid_argument("value '" + name + "' is defined twice: by " + it->second +
                              " and by " + what);
    return Status::ok();
  }

  Status add_initializers(onnx::GraphProto& proto) {
    if (proto.sparse_initializer_size() > 0)
      return unsupported("sparse initializer '" + proto.sparse_initializer(0).values().name() +
                         "': sparse tensors are not supported by infer");
    for (auto& tensor : *proto.mutable_initializer()) {
      const std::string name = tensor.name();
      if (name.empty()) return invalid_argument("an initializer has no name");
      INFER_RETURN_IF_ERROR(define(name, "an initializer"));
      INFER_ASSIGN_OR_RETURN(ir::TensorDataPtr data, convert_tensor(tensor, name, *ctx_.external));
      ir::Value v;
      v.name = name;
      v.dtype = data->dtype();
      v.shape = ir::Shape::of(data->dims());
      v.constant = std::move(data);
      graph_.add_value(std::move(v));
    }
    return Status::ok();
  }

  Status add_inputs(const onnx::GraphProto& proto) {
    const bool main = parent_ == nullptr;
    for (const auto& vi : proto.input()) {
      const std::string& name = vi.name();
      if (name.empty()) return invalid_argument("a graph input has no name");
      // Files of IR version < 4 list every initializer among the inputs too. infer treats
      // such an input as the constant it is rather than as an input the caller may
      // override: every weight would otherwise be a runtime input, nothing could be
      // folded or prepacked, and no real caller feeds weights.
      auto def = definers_.find(name);
      if (def != definers_.end() && def->second == "an initializer") continue;
      INFER_RETURN_IF_ERROR(define(name, "a graph input"));
      if (main && !vi.has_type()) return invalid_argument("graph input '" + name + "' has no type");
      ValueType type;
      if (vi.has_type()) {
        INFER_ASSIGN_OR_RETURN(type, convert_value_type(vi.type(), name));
      }
      if (main && type.dtype == DataType::kUndefined)
        return invalid_argument("graph input '" + name + "' has no element type");
      INFER_ASSIGN_OR_RETURN(ValueType extra, declared_type(name));
      type = merge_value_types(type, extra);
      ir::Value v;
      v.name = name;
      v.dtype = type.dtype;
      v.shape = type.shape;
      graph_.inputs.push_back(graph_.add_value(std::move(v)));
    }
    return Status::ok();
  }

  // Defines every node output before any node is converted, so that inputs resolve
  // whatever the order of the nodes in the file (which is sorted afterwards).
  Status add_node_outputs(const onnx::GraphProto& proto) {
    for (const auto& node : proto.node()) {
      const std::string where = ctx_.names->describe(node);
      for (const std::string& name : node.output()) {
        if (name.empty()) continue;  // an omitted optional output
        INFER_RETURN_IF_ERROR(define(name, where));
        auto type = declared_type(name);
        if (!type.is_ok()) return type.status().with_context(where);
        ir::Value v;
        v.name = name;
        v.dtype = type->dtype;
        v.shape = type->shape;
        graph_.add_value(std::move(v));
      }
    }
    return Status::ok();
  }

  Status convert_node(onnx::NodeProto& proto) {
    const std::string where = ctx_.names->describe(proto);
    ir::Node node;
    node.name = ctx_.names->of(proto);
    node.op_type = proto.op_type();
    node.domain = normalize_domain(proto.domain());
    if (node.op_type.empty()) return invalid_argument(where + " has no op_type");
    if (!ctx_.opsets->count(node.domain))
      return invalid_argument(where + ": its domain '" + node.domain +
                              "' is not imported by the model (opset_import)");
    if (ctx_.local_functions.count({proto.domain(), proto.op_type()}))
      return unsupported(where +
                         " calls a function defined in the model, which infer does "
                         "not expand");

    for (int k = 0; k < proto.input_size(); ++k) {
      const std::string& name = proto.input(k);
      if (name.empty()) {
        node.inputs.push_back(ir::kNoValue);
        continue;
      }
      auto id = resolve(name);
      if (!id)
        return invalid_argument(where + ": input " + std::to_string(k) + " '" + name +
                                "' is not a graph input, an initializer or any node's output");
      node.inputs.push_back(*id);
    }
    for (const std::string& name : proto.output())
      node.outputs.push_back(name.empty() ? ir::kNoValue : *graph_.find_value(name));

    const bool is_constant = node.domain.empty() && node.op_type == "Constant";
    const std::string tensor_name = is_constant && proto.output_size() > 0 ? proto.output(0) : "";
    BodyConverter body = [&](onnx::GraphProto& g, const std::string&) { return convert_body(g); };
    for (auto& attr : *proto.mutable_attribute()) {
      auto converted = convert_attribute(attr, *ctx_.external, tensor_name, body);
      if (!converted.is_ok()) return converted.status().with_context(where);
      node.attributes.push_back(std::move(converted).value());
    }
    if (is_constant) {
      INFER_RETURN_IF_ERROR(normalize_constant(node, tensor_name));
      // Without shape inference the value's type would otherwise stay unknown.
      if (!node.outputs.empty() && node.outputs[0] != ir::kNoValue) {
        ir::Value& out = graph_.value(node.outputs[0]);
        const ir::TensorData& t = *node.attributes[0].tensors[0];
        if (out.dtype == DataType::kUndefined) out.dtype = t.dtype();
        if (!out.shape.rank_known()) out.shape = ir::Shape::of(t.dims());
      }
    }
    graph_.add_node(std::move(node));
    return Status::ok();
  }

  Result<std::shared_ptr<ir::Graph>> convert_body(onnx::GraphProto& proto) {
    auto body = std::make_shared<ir::Graph>();
    GraphConverter child(ctx_, this, *body);
    INFER_RETURN_IF_ERROR(child.convert(proto));
    return body;
  }

  Status set_outputs(const onnx::GraphProto& proto) {
    for (const auto& vi : proto.output()) {
      if (vi.name().empty()) return invalid_argument("a graph output has no name");
      auto id = resolve(vi.name());
      if (!id)
        return invalid_argument("graph output '" + vi.name() +
                                "' is not a graph input, an initializer or any node's output");
      graph_.outputs.push_back(*id);
    }
    return Status::ok();
  }

  ConvertContext& ctx_;
  GraphConverter* parent_;
  ir::Graph& graph_;
  std::unordered_map<std::string, std::vector<const onnx::TypeProto*>> types_;
  std::unordered_map<std::string, std::string> definers_;
};

}  // namespace

Result<std::shared_ptr<ir::Graph>> convert_main_graph(onnx::GraphProto& proto,
                                                      ConvertContext& ctx) {
  auto graph = std::make_shared<ir::Graph>();
  GraphConverter converter(ctx, nullptr, *graph);
  INFER_RETURN_IF_ERROR(converter.convert(proto));
  return graph;
}

}  // namespace infer::onnx_io
