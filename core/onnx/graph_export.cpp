// See graph_export.hpp.
#include "onnx/graph_export.hpp"

#include <algorithm>
#include <climits>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onnx/schema_policy.hpp"

namespace infer::onnx_io {
namespace {

// protobuf refuses to serialize (and to parse) a message larger than INT_MAX bytes.
constexpr size_t kProtobufLimit = static_cast<size_t>(INT_MAX);

// The oldest IR version in which initializers need not also be graph inputs; older
// files list every weight as an input, which infer's IR does not (the loader folds such
// inputs into constants).
constexpr int64_t kMinIrVersion = 4;

std::string quoted(const std::string& name) { return "'" + name + "'"; }

std::string normalize_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

bool has_known_type(const ir::Value& v) {
  return v.dtype != DataType::kUndefined || v.shape.rank_known();
}

// The inverse of convert_value_type: a tensor type with what is known of the element
// type and shape.
void write_type(const ir::Value& v, onnx::TypeProto& type) {
  auto* tensor = type.mutable_tensor_type();
  if (v.dtype != DataType::kUndefined) tensor->set_elem_type(static_cast<int32_t>(v.dtype));
  if (!v.shape.rank_known()) return;
  auto* shape = tensor->mutable_shape();  // present even for a scalar (rank 0)
  for (const ir::Dim& d : *v.shape.dims) {
    auto* dim = shape->add_dim();
    if (d.is_known())
      dim->set_dim_value(d.value);
    else if (!d.param.empty())
      dim->set_dim_param(d.param);
    // Otherwise the dim stays empty: ONNX's spelling of "unknown".
  }
}

void write_value_info(const ir::Value& v, onnx::ValueInfoProto& out) {
  out.set_name(v.name);
  if (has_known_type(v)) write_type(v, *out.mutable_type());
}

class Exporter {
 public:
  Status export_model(const ir::Model& model, onnx::ModelProto& out) {
    if (!model.graph) return invalid_argument("the model has no graph");
    INFER_RETURN_IF_ERROR(model.graph->validate());

    const int64_t ir_version =
        model.ir_version > 0 ? model.ir_version : static_cast<int64_t>(onnx::Version::IR_VERSION);
    out.set_ir_version(std::max(ir_version, kMinIrVersion));
    out.set_producer_name("infer");
    std::string doc = "Written by infer";
    if (!model.source_path.empty()) doc += " from " + quoted(model.source_path);
    if (!model.producer_name.empty()) {
      doc += " (originally produced by " + model.producer_name;
      if (!model.producer_version.empty()) doc += " " + model.producer_version;
      doc += ")";
    }
    out.set_doc_string(doc + ".");

    INFER_RETURN_IF_ERROR(export_graph(*model.graph, "main", *out.mutable_graph()));
    write_opsets(model, out);
    if (out.ByteSizeLong() > kProtobufLimit)
      return too_large("the model would be " + std::to_string(out.ByteSizeLong()) + " bytes");
    return Status::ok();
  }

 private:
  static Status too_large(const std::string& what) {
    return unsupported(what + ", more than protobuf's 2 GiB limit for one file (infer does "
                              "not write external data)");
  }

  // model.opsets as they are, then the domains the nodes use that the model lacks.
  void write_opsets(const ir::Model& model, onnx::ModelProto& out) const {
    std::set<std::string> imported;
    for (const auto& [domain, version] : model.opsets) {
      auto* op = out.add_opset_import();
      op->set_domain(domain);
      op->set_version(version);
      imported.insert(normalize_domain(domain));
    }
    std::set<std::string> needed = domains_;
    needed.insert("");  // every model imports the default domain
    for (const std::string& domain : needed) {
      if (imported.count(domain)) continue;
      int64_t version = 1;
      if (domain == kFusedDomain) {
        version = kFusedDomainVersion;
      } else if (auto newest = newest_known_opset(domain)) {
        // A domain ONNX manages but the model never imported: the newest version this
        // ONNX release knows is the only one it can check against.
        version = *newest;
      }
      auto* op = out.add_opset_import();
      op->set_domain(domain);
      op->set_version(version);
    }
  }

  // Adds `t` to the running total of constant bytes, failing before anything is copied
  // when the total no longer fits in one protobuf message.
  Status count_bytes(const ir::TensorData& t, const std::string& what) {
    constant_bytes_ += t.size_bytes();
    if (constant_bytes_ > kProtobufLimit)
      return too_large("the constants total " + std::to_string(constant_bytes_) +
                       " bytes or more (reached at " + what + ")");
    return Status::ok();
  }

  // The inverse of convert_tensor: always raw_data (little-endian, row-major, 4-bit
  // types packed two per byte), which every ONNX reader accepts for numeric types.
  Status write_tensor(const ir::TensorData& t, const std::string& name, const std::string& what,
                      onnx::TensorProto& out) {
    if (t.dtype() == DataType::kUndefined || t.dtype() == DataType::kString)
      return invalid_argument(what + " has dtype " + std::string(dtype_name(t.dtype())) +
                              ", which infer cannot write");
    INFER_RETURN_IF_ERROR(count_bytes(t, what));
    if (!name.empty()) out.set_name(name);
    out.set_data_type(static_cast<int32_t>(t.dtype()));
    for (int64_t d : t.dims()) out.add_dims(d);
    if (t.size_bytes() > 0)
      out.set_raw_data(static_cast<const char*>(t.data()), t.size_bytes());
    return Status::ok();
  }

  Status write_attribute(const ir::Attribute& a, const std::string& node_label,
                         onnx::AttributeProto& out) {
    using A = onnx::AttributeProto;
    const std::string where = "attribute " + quoted(a.name);
    if (a.name.empty()) return invalid_argument("an attribute has no name");
    out.set_name(a.name);
    switch (a.type) {
      case ir::AttrType::kFloat:
        out.set_f(static_cast<float>(a.f));
        break;
      case ir::AttrType::kInt:
        out.set_i(a.i);
        break;
      case ir::AttrType::kString:
        out.set_s(a.s);
        break;
      case ir::AttrType::kFloats:
        for (double f : a.floats) out.add_floats(static_cast<float>(f));
        break;
      case ir::AttrType::kInts:
        for (int64_t i : a.ints) out.add_ints(i);
        break;
      case ir::AttrType::kStrings:
        for (const std::string& s : a.strings) out.add_strings(s);
        break;
      case ir::AttrType::kTensor:
      case ir::AttrType::kTensors: {
        const bool single = a.type == ir::AttrType::kTensor;
        if (single && a.tensors.size() != 1)
          return invalid_argument(where + " is a tensor attribute with " +
                                  std::to_string(a.tensors.size()) + " tensors, expected 1");
        for (size_t k = 0; k < a.tensors.size(); ++k) {
          if (!a.tensors[k]) return invalid_argument(where + " holds a null tensor");
          onnx::TensorProto& t = single ? *out.mutable_t() : *out.add_tensors();
          INFER_RETURN_IF_ERROR(write_tensor(*a.tensors[k], "", where, t));
        }
        break;
      }
      case ir::AttrType::kGraph:
      case ir::AttrType::kGraphs: {
        const bool single = a.type == ir::AttrType::kGraph;
        if (single && a.graphs.size() != 1)
          return invalid_argument(where + " is a graph attribute with " +
                                  std::to_string(a.graphs.size()) + " graphs, expected 1");
        for (size_t k = 0; k < a.graphs.size(); ++k) {
          const std::string label =
              single ? a.name : a.name + "[" + std::to_string(k) + "]";
          if (!a.graphs[k]) return invalid_argument("attribute " + quoted(label) + " is a null graph");
          onnx::GraphProto& body = single ? *out.mutable_g() : *out.add_graphs();
          // ONNX requires every graph to have a name; an unnamed body is named after the
          // node and attribute that hold it.
          INFER_RETURN_IF_ERROR(export_graph(*a.graphs[k], node_label + "_" + label, body)
                                    .with_context("attribute " + quoted(label)));
        }
        break;
      }
      default:
        return invalid_argument(where + " has no type infer can write (" +
                                std::to_string(static_cast<int>(a.type)) + ")");
    }
    out.set_type(static_cast<A::AttributeType>(a.type));
    return Status::ok();
  }

  Status export_graph(const ir::Graph& g, const std::string& fallback_name, onnx::GraphProto& out) {
    const std::string graph_name = g.name.empty() ? fallback_name : g.name;
    out.set_name(graph_name);
    const std::string where = "graph " + quoted(graph_name);

    // What the graph uses: node inputs, what the bodies capture, the outputs. Constants
    // outside this set are leftovers of rewrites and are not written.
    std::vector<bool> used(g.value_count(), false);
    for (ir::NodeId n = 0; n < g.node_count(); ++n) {
      for (ir::ValueId in : g.node(n).inputs)
        if (in != ir::kNoValue) used[in] = true;
      for (ir::ValueId in : g.implicit_inputs(n)) used[in] = true;
    }
    for (ir::ValueId id : g.outputs) used[id] = true;

    // Every name the file defines in this graph, to keep ONNX's single assignment.
    std::unordered_map<std::string, ir::ValueId> defined;
    auto define = [&](ir::ValueId id) -> Status {
      const ir::Value& v = g.value(id);
      if (v.name.empty())
        return invalid_argument(where + ": value " + std::to_string(id) +
                                " has no name; every value must be named to be written");
      auto [it, fresh] = defined.emplace(v.name, id);
      if (!fresh && it->second != id)
        return invalid_argument(where + ": two different values are named " + quoted(v.name));
      return Status::ok();
    };

    for (ir::ValueId id : g.inputs) {
      INFER_RETURN_IF_ERROR(define(id));
      write_value_info(g.value(id), *out.add_input());
    }
    for (ir::ValueId id = 0; id < g.value_count(); ++id) {
      const ir::Value& v = g.value(id);
      if (!used[id] || !v.is_constant() || v.outer_scope) continue;
      INFER_RETURN_IF_ERROR(define(id));
      INFER_RETURN_IF_ERROR(
          write_tensor(*v.constant, v.name, "initializer " + quoted(v.name), *out.add_initializer())
              .with_context(where));
    }

    std::vector<ir::ValueId> typed_outputs;  // candidates for value_info
    for (const ir::Node& node : g.nodes()) {
      onnx::NodeProto& np = *out.add_node();
      if (!node.name.empty()) np.set_name(node.name);
      np.set_op_type(node.op_type);
      const std::string domain = normalize_domain(node.domain);
      if (!domain.empty()) np.set_domain(domain);
      domains_.insert(domain);
      for (ir::ValueId in : node.inputs) {
        if (in == ir::kNoValue) {
          np.add_input("");
          continue;
        }
        if (g.value(in).name.empty())
          return invalid_argument(where + ": " + node.describe() + " reads an unnamed value");
        np.add_input(g.value(in).name);
      }
      // Omitted trailing outputs are simply absent in ONNX; inner ones are "".
      size_t count = node.outputs.size();
      while (count > 0 && node.outputs[count - 1] == ir::kNoValue) --count;
      for (size_t k = 0; k < count; ++k) {
        const ir::ValueId id = node.outputs[k];
        if (id == ir::kNoValue) {
          np.add_output("");
          continue;
        }
        INFER_RETURN_IF_ERROR(define(id).with_context(node.describe()));
        np.add_output(g.value(id).name);
        typed_outputs.push_back(id);
      }
      const std::string label = node.name.empty() ? node.op_type : node.name;
      for (const ir::Attribute& a : node.attributes)
        INFER_RETURN_IF_ERROR(write_attribute(a, label, *np.add_attribute())
                                  .with_context(where + ": " + node.describe()));
    }

    std::set<ir::ValueId> outputs(g.outputs.begin(), g.outputs.end());
    for (ir::ValueId id : g.outputs) {
      if (g.value(id).name.empty())
        return invalid_argument(where + ": graph output value " + std::to_string(id) +
                                " has no name");
      write_value_info(g.value(id), *out.add_output());
    }
    for (ir::ValueId id : typed_outputs)
      if (!outputs.count(id) && has_known_type(g.value(id)))
        write_value_info(g.value(id), *out.add_value_info());
    return Status::ok();
  }

  std::set<std::string> domains_;  // normalized domains of every node, bodies included
  size_t constant_bytes_ = 0;
};

}  // namespace

Result<onnx::ModelProto> to_model_proto(const ir::Model& model) {
  // Nothing thrown (by protobuf or the allocator) may leave the writer.
  try {
    onnx::ModelProto proto;
    Exporter exporter;
    INFER_RETURN_IF_ERROR(exporter.export_model(model, proto));
    return proto;
  } catch (const std::bad_alloc&) {
    return unavailable("out of memory while converting the model to ONNX");
  } catch (const std::exception& e) {
    return internal_error(std::string("unexpected error while converting the model to ONNX: ") +
                          e.what());
  }
}

}  // namespace infer::onnx_io
