// A few lines to build IR graphs by hand in tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace infer::ir::testing {

// Adds a float32 value named `name` (unknown shape).
inline ValueId value(Graph& g, const std::string& name) {
  Value v;
  v.name = name;
  v.dtype = DataType::kFloat32;
  return g.add_value(std::move(v));
}

inline ValueId input(Graph& g, const std::string& name) {
  ValueId id = value(g, name);
  g.inputs.push_back(id);
  return id;
}

// Adds node `name` of type `op` reading and writing the named values, creating the
// values that do not exist yet.
inline NodeId node(Graph& g, const std::string& name, const std::string& op,
                   const std::vector<std::string>& ins, const std::vector<std::string>& outs) {
  Node n;
  n.name = name;
  n.op_type = op;
  auto id_of = [&](const std::string& v) {
    if (v.empty()) return kNoValue;
    auto found = g.find_value(v);
    return found ? *found : value(g, v);
  };
  for (const auto& v : ins) n.inputs.push_back(id_of(v));
  for (const auto& v : outs) n.outputs.push_back(id_of(v));
  return g.add_node(std::move(n));
}

inline std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.push_back(n.name);
  return out;
}

// A body graph that reads `captured` from the enclosing graph and outputs Identity of it.
inline std::shared_ptr<Graph> capturing_body(const std::string& captured) {
  auto body = std::make_shared<Graph>();
  body->name = "body";
  Value cap;
  cap.name = captured;
  cap.outer_scope = true;
  body->add_value(std::move(cap));
  node(*body, "body_id", "Identity", {captured}, {"body_out"});
  body->outputs.push_back(*body->find_value("body_out"));
  return body;
}

inline void attach_body(Graph& g, NodeId n, std::shared_ptr<Graph> body) {
  Attribute a;
  a.name = "then_branch";
  a.type = AttrType::kGraph;
  a.graphs.push_back(std::move(body));
  g.node(n).attributes.push_back(std::move(a));
}

}  // namespace infer::ir::testing
