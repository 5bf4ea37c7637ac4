// A tiny helper to write IR graphs in tests: values are created on first mention and
// nodes are appended in the order given (which the tests keep topological).
//
// Values default to float32 [2]; declare a value with typed()/constant helpers before
// its first use in node() to give it another dtype, shape or constant data.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer::testing {

// A dim list for shapes in tests: numbers are known sizes, strings are symbols.
inline ir::Shape shape_of(std::initializer_list<ir::Dim> dims) {
  ir::Shape s;
  s.dims = std::vector<ir::Dim>(dims);
  return s;
}
inline ir::Dim sym(const std::string& name) { return ir::Dim::symbol(name); }
inline ir::Dim dim(int64_t v) { return ir::Dim::known(v); }

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

  // Declares (or re-types) a non-constant value.
  ir::ValueId typed(const std::string& name, DataType dtype, ir::Shape shape) {
    ir::ValueId id = value(name);
    g_.value(id).dtype = dtype;
    g_.value(id).shape = std::move(shape);
    return id;
  }
  ir::ValueId typed(const std::string& name, DataType dtype, const std::vector<int64_t>& dims) {
    return typed(name, dtype, ir::Shape::of(dims));
  }

  // Constants (initializers).
  ir::ValueId constant(const std::string& name, ir::TensorDataPtr data) {
    ir::ValueId id = value(name);
    g_.value(id).dtype = data->dtype();
    g_.value(id).shape = ir::Shape::of(data->dims());
    g_.value(id).constant = std::move(data);
    return id;
  }
  template <typename T>
  ir::ValueId constant_of(const std::string& name, DataType dtype, const std::vector<int64_t>& dims,
                          const std::vector<T>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return constant(name, std::make_shared<const ir::TensorData>(dtype, dims, std::move(bytes)));
  }
  ir::ValueId f32(const std::string& name, const std::vector<int64_t>& dims,
                  const std::vector<float>& values) {
    return constant_of<float>(name, DataType::kFloat32, dims, values);
  }
  ir::ValueId i64(const std::string& name, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& values) {
    return constant_of<int64_t>(name, DataType::kInt64, dims, values);
  }

  ir::NodeId node(const std::string& name, const std::string& op,
                  const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  std::vector<ir::Attribute> attributes = {}, const std::string& domain = "") {
    ir::Node n;
    n.name = name;
    n.op_type = op;
    n.domain = domain;
    // An empty name is an omitted optional input or output.
    for (const auto& s : inputs) n.inputs.push_back(s.empty() ? ir::kNoValue : value(s));
    for (const auto& s : outputs) n.outputs.push_back(s.empty() ? ir::kNoValue : value(s));
    n.attributes = std::move(attributes);
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

inline std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes()) ops.push_back(n.op_type);
  return ops;
}

inline size_t count_op(const ir::Graph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

// A PassContext for a model importing the default domain at `opset`.
inline PassContext context_at(int64_t opset) {
  PassContext c;
  c.opsets[""] = opset;
  return c;
}

}  // namespace infer::optimizer::testing
