// See node_names.hpp.
#include "onnx/node_names.hpp"

#include "infer/printable.hpp"

namespace infer::onnx_io {

NodeNames::NodeNames(const onnx::GraphProto& graph) {
  // Explicit names first, from every depth, so that no generated name can take one.
  reserve(graph);
  assign(graph, "");
}

void NodeNames::reserve(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    if (!node.name().empty()) taken_.insert(node.name());
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) reserve(attr.g());
      for (const auto& g : attr.graphs()) reserve(g);
    }
  }
}

void NodeNames::assign(const onnx::GraphProto& graph, const std::string& prefix) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    std::string name = node.name();
    if (name.empty()) {
      const std::string base = prefix +
                               (node.op_type().empty() ? std::string("node") : node.op_type()) +
                               "_" + std::to_string(i);
      name = base;
      for (int k = 2; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
      taken_.insert(name);
    }
    names_[&node] = name;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) assign(attr.g(), name + "/" + attr.name() + "/");
      for (int k = 0; k < attr.graphs_size(); ++k)
        assign(attr.graphs(k), name + "/" + attr.name() + "[" + std::to_string(k) + "]/");
    }
  }
}

const std::string& NodeNames::of(const onnx::NodeProto& node) const {
  static const std::string kUnknown = "?";
  auto it = names_.find(&node);
  return it == names_.end() ? kUnknown : it->second;
}

std::string NodeNames::describe(const onnx::NodeProto& node) const {
  const std::string& domain = node.domain();
  std::string op =
      domain.empty() || domain == "ai.onnx" ? node.op_type() : domain + ":" + node.op_type();
  // Names and op types come from the file: escaped, so a message never carries raw bytes.
  return "node '" + printable(of(node)) + "' (" + printable(op) + ")";
}

}  // namespace infer::onnx_io
