// A tiny helper to write IR graphs in tests: values are created on first mention and
// nodes are appended in the order given (which the tests keep topological).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace infer::optimizer::testing {

class GraphBuilder {
 public:
  explicit GraphBuilder(ir::Graph& g) : g_(g) {}

  ir::ValueId value(const std::string& name, bool outer_scope = false) {
    if (auto id = g_.find_value(name)) return *id;
    ir::Value v;
    v.name = name;
    v.dtype = DataType::kFloat32;
    v.shape = ir::Shape::of({2});
    v.outer_scope = outer_scope;
    return g_.add_value(std::move(v));
  }

  ir::NodeId node(const std::string& name, const std::string& op,
                  const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    ir::Node n;
    n.name = name;
    n.op_type = op;
    for (const auto& s : inputs) n.inputs.push_back(value(s));
    for (const auto& s : outputs) n.outputs.push_back(value(s));
    return g_.add_node(std::move(n));
  }

  void input(const std::string& name) { g_.inputs.push_back(value(name)); }
  void output(const std::string& name) { g_.outputs.push_back(value(name)); }

 private:
  ir::Graph& g_;
};

inline std::vector<std::string> node_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes()) names.push_back(n.name);
  return names;
}

}  // namespace infer::optimizer::testing
