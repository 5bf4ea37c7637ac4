// Small hand-built IR graphs for the plugin host tests.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace infer::host::testing {

inline ir::TensorDataPtr f32_tensor(std::vector<int64_t> dims, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return std::make_shared<const ir::TensorData>(DataType::kFloat32, std::move(dims),
                                                std::move(bytes));
}

inline ir::ValueId add_value(ir::Graph& g, const std::string& name, DataType dtype,
                             std::vector<ir::Dim> dims, ir::TensorDataPtr constant = nullptr) {
  ir::Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape.dims = std::move(dims);
  v.constant = std::move(constant);
  return g.add_value(std::move(v));
}

inline ir::NodeId add_node(ir::Graph& g, const std::string& name, const std::string& op,
                           std::vector<ir::ValueId> inputs, std::vector<ir::ValueId> outputs,
                           std::string domain = "") {
  ir::Node n;
  n.name = name;
  n.op_type = op;
  n.domain = std::move(domain);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return g.add_node(std::move(n));
}

// x[4] -> Add(x, w = {1, -2, 3, -4}) -> a -> Relu -> y   (opset 13)
// With x = {0.5, 1, 5, 2}: a = {1.5, -1, 8, -2}, y = {1.5, 0, 8, 0}.
inline ir::Model add_relu_model(const std::string& second_op = "Relu") {
  ir::Model m;
  m.opsets[""] = 13;
  m.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *m.graph;
  g.name = "add_relu";
  auto x = add_value(g, "x", DataType::kFloat32, {ir::Dim::known(4)});
  auto w =
      add_value(g, "w", DataType::kFloat32, {ir::Dim::known(4)}, f32_tensor({4}, {1, -2, 3, -4}));
  auto a = add_value(g, "a", DataType::kFloat32, {ir::Dim::known(4)});
  auto y = add_value(g, "y", DataType::kFloat32, {ir::Dim::known(4)});
  add_node(g, "add0", "Add", {x, w}, {a});
  add_node(g, "act0", second_op, {a}, {y});
  g.inputs = {x};
  g.outputs = {y};
  return m;
}

}  // namespace infer::host::testing
