// A tiny helper to write IR graphs in tests: values are created on first mention and
// nodes are appended in the order given (which the tests keep topological).
//
// Values default to float32 [2]; declare a value with typed()/constant helpers before
// its first use in node() to give it another dtype, shape or constant data.
//
// It also holds the helpers every pass test needs (apply a pass and check the graph it
// leaves, look nodes and values up by name), so that each test file states only its
// graphs and expectations.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer::testing {

using Names = std::vector<std::string>;
using Ops = std::vector<std::string>;
using Ints = std::vector<int64_t>;

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

// Applies pass P once with `context`, expects it to succeed and to leave a valid graph,
// and returns its rewrite count (-1 when it failed, which the expectation reports).
template <typename P>
int apply_pass(ir::Graph& g, const PassContext& context) {
  Result<int> r = P().apply(g, context);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  const Status valid = g.validate();
  EXPECT_TRUE(valid.is_ok()) << valid.message();
  return r.is_ok() ? *r : -1;
}

// Applies pass P and expects it to change nothing: no rewrite, the same operators.
template <typename P>
void expect_untouched_by(ir::Graph& g, const PassContext& context) {
  const Ops before = op_types(g);
  EXPECT_EQ(apply_pass<P>(g, context), 0);
  EXPECT_EQ(op_types(g), before);
}

// The id of the value named `name`, which the test knows exists.
inline ir::ValueId id_of(const ir::Graph& g, const std::string& name) {
  const auto id = g.find_value(name);
  EXPECT_TRUE(id.has_value()) << "no value " << name;
  return id.value_or(ir::ValueId{0});
}

inline const ir::Value& val(const ir::Graph& g, const std::string& name) {
  return g.value(id_of(g, name));
}

// The node named `name`; a failure (and the first node) when there is none.
inline const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const ir::Node& n : g.nodes())
    if (n.name == name) return n;
  ADD_FAILURE() << "no node " << name;
  return g.nodes().front();
}

// The first node of type `op`, or nullptr.
inline const ir::Node* find_op(const ir::Graph& g, const std::string& op) {
  for (const ir::Node& n : g.nodes())
    if (n.op_type == op) return &n;
  return nullptr;
}

// The values of a constant as doubles, or an empty vector when `v` is not a constant.
inline std::vector<double> values_of(const ir::Graph& g, ir::ValueId v) {
  return float_constant(g, v).value_or(std::vector<double>{});
}

// The float32 data of the constant named `name`, or an empty vector when it is computed.
inline std::vector<float> floats_of(const ir::Graph& g, const std::string& name) {
  const ir::TensorData* t = val(g, name).constant.get();
  if (t == nullptr) return {};
  return std::vector<float>(t->as<float>(), t->as<float>() + t->element_count());
}

// Turns the constant `name` into a graph input, so that its value is only known at run time.
inline void make_graph_input(ir::Graph& g, const std::string& name) {
  const ir::ValueId v = id_of(g, name);
  g.value(v).constant = nullptr;
  g.inputs.push_back(v);
}

// Gives `read` one more reader: node `name` computing `op`(read) into graph output `out`.
inline void add_reader(ir::Graph& g, const std::string& read, const std::string& name = "other",
                       const std::string& op = "Relu", const std::string& out = "r") {
  GraphBuilder b(g);
  b.node(name, op, {read}, {out});
  b.output(out);
  g.rebuild_links();
}

// A graph-valued attribute (an If branch, a Loop body).
inline ir::Attribute graph_attr(const std::string& name, std::shared_ptr<ir::Graph> body) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kGraph;
  a.graphs.push_back(std::move(body));
  return a;
}

// Both branches of an If, each holding a body "inner" = `op`(captured) -> r that reads the
// outer value `captured` by name (so no node lists it as an input).
inline std::vector<ir::Attribute> if_branches_reading(const std::string& captured,
                                                      const std::string& op) {
  auto body = std::make_shared<ir::Graph>();
  GraphBuilder b(*body);
  b.value(captured, /*outer_scope=*/true);
  b.node("inner", op, {captured}, {"r"});
  b.output("r");
  body->rebuild_links();
  return {graph_attr("then_branch", body), graph_attr("else_branch", body)};
}

}  // namespace infer::optimizer::testing
