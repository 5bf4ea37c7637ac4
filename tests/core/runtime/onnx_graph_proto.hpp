// Free functions that write ONNX graphs with the protobuf API for the Session tests that
// need what OnnxModelWriter (one float32 graph) does not: element types, subgraph
// attributes, raw initializers of any dtype, several graphs in one file.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "session_fixture.hpp"

namespace infer::testing::proto {

inline void type_of(::onnx::ValueInfoProto* v, const std::string& name, int elem,
                    const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}
inline void input(::onnx::GraphProto& g, const std::string& name, int elem,
                  std::vector<int64_t> dims) {
  type_of(g.add_input(), name, elem, dims);
}
inline void output(::onnx::GraphProto& g, const std::string& name, int elem,
                   std::vector<int64_t> dims) {
  type_of(g.add_output(), name, elem, dims);
}
inline ::onnx::NodeProto* node(::onnx::GraphProto& g, const std::string& name,
                               const std::string& op, std::vector<std::string> inputs,
                               std::vector<std::string> outputs) {
  auto* n = g.add_node();
  n->set_name(name);
  n->set_op_type(op);
  for (auto& s : inputs) n->add_input(s);
  for (auto& s : outputs) n->add_output(s);
  return n;
}
inline void graph_attr(::onnx::NodeProto* n, const std::string& name, ::onnx::GraphProto body) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = std::move(body);
}
inline void int_attr(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void ints_attr(::onnx::NodeProto* n, const std::string& name,
                      const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void f32_initializer(::onnx::GraphProto& g, const std::string& name,
                            std::vector<int64_t> dims, const std::vector<float>& values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}
// An initializer of element type `elem` from its little-endian bytes (raw_data).
template <typename T>
void raw_initializer(::onnx::GraphProto& g, const std::string& name, int elem,
                     std::vector<int64_t> dims, const std::vector<T>& values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  t->set_raw_data(bytes);
}
// Writes `g` as a model importing the default domain at `opset` to a temporary file of
// this process and returns its path.
inline std::string save(::onnx::GraphProto g, const std::string& file, int64_t opset = 16) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("infer-tests");
  auto* import = m.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  *m.mutable_graph() = std::move(g);
  const std::string path = temp_path(file);
  std::ofstream f(path, std::ios::binary);
  EXPECT_TRUE(f && m.SerializeToOstream(&f)) << path;
  return path;
}

}  // namespace infer::testing::proto
