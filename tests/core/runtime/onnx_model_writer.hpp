// Writes small ONNX models for the Session tests with the onnx protobuf API, so every
// test model is visible in the test source rather than a binary file.
#pragma once

#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>
#include <vector>

namespace infer::testing {

class OnnxModelWriter {
 public:
  OnnxModelWriter() {
    model_.set_ir_version(8);
    model_.set_producer_name("infer-tests");
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    model_.mutable_graph()->set_name("test_graph");
  }

  // dims: >= 0 known, -1 with a name in `params` (same index) for a symbol.
  void input(const std::string& name, std::vector<int64_t> dims,
             std::vector<std::string> params = {}) {
    fill(model_.mutable_graph()->add_input(), name, dims, params);
  }
  void output(const std::string& name, std::vector<int64_t> dims,
              std::vector<std::string> params = {}) {
    fill(model_.mutable_graph()->add_output(), name, dims, params);
  }
  void initializer(const std::string& name, std::vector<int64_t> dims,
                   const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  // An input or output of another element type (an onnx::TensorProto::DataType).
  void typed_input(const std::string& name, std::vector<int64_t> dims, int elem_type) {
    auto* v = model_.mutable_graph()->add_input();
    fill(v, name, dims, {});
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  }
  void typed_output(const std::string& name, std::vector<int64_t> dims, int elem_type) {
    auto* v = model_.mutable_graph()->add_output();
    fill(v, name, dims, {});
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  }
  // An initializer of any element type from its little-endian bytes.
  template <typename T>
  void raw_initializer(const std::string& name, int elem_type, std::vector<int64_t> dims,
                       const std::vector<T>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  }
  void set_opset(int64_t version) { model_.mutable_opset_import(0)->set_version(version); }
  void add_opset(const std::string& domain, int64_t version) {
    auto* opset = model_.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }

  ::onnx::NodeProto* node(const std::string& name, const std::string& op,
                          std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (auto& s : inputs) n->add_input(s);
    for (auto& s : outputs) n->add_output(s);
    return n;
  }
  static void int_attr(::onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }

  static void float_attr(::onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void ints_attr(::onnx::NodeProto* n, const std::string& name,
                        const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  bool save(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    return f && model_.SerializeToOstream(&f);
  }

 private:
  static void fill(::onnx::ValueInfoProto* v, const std::string& name,
                   const std::vector<int64_t>& dims, const std::vector<std::string>& params) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(::onnx::TensorProto::FLOAT);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] >= 0)
        d->set_dim_value(dims[i]);
      else
        d->set_dim_param(i < params.size() ? params[i] : "");
    }
  }

  ::onnx::ModelProto model_;
};

}  // namespace infer::testing
