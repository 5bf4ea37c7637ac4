// Builds ONNX models in C++ with onnx's own protobuf classes, independently of the
// loader under test, and writes them to temporary folders.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <onnx/onnx_pb.h>

namespace infer::onnx_io::testing {

// A dim of a declared shape: a size or a symbol.
using DimSpec = std::variant<int64_t, std::string>;
inline DimSpec sym(const std::string& name) { return DimSpec(name); }

inline void set_tensor_type(onnx::TypeProto* type, int32_t elem_type,
                            const std::vector<DimSpec>* dims) {
  auto* tensor = type->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  if (!dims) return;
  auto* shape = tensor->mutable_shape();
  for (const DimSpec& d : *dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d))
      dim->set_dim_value(std::get<int64_t>(d));
    else
      dim->set_dim_param(std::get<std::string>(d));
  }
}

inline onnx::ValueInfoProto* add_input(onnx::GraphProto& g, const std::string& name,
                                       int32_t elem_type, std::vector<DimSpec> dims) {
  auto* vi = g.add_input();
  vi->set_name(name);
  set_tensor_type(vi->mutable_type(), elem_type, &dims);
  return vi;
}

inline onnx::ValueInfoProto* add_output(onnx::GraphProto& g, const std::string& name,
                                        int32_t elem_type, std::vector<DimSpec> dims) {
  auto* vi = g.add_output();
  vi->set_name(name);
  set_tensor_type(vi->mutable_type(), elem_type, &dims);
  return vi;
}

// An output with an element type but no shape (rank unknown).
inline onnx::ValueInfoProto* add_output_no_shape(onnx::GraphProto& g, const std::string& name,
                                                 int32_t elem_type) {
  auto* vi = g.add_output();
  vi->set_name(name);
  set_tensor_type(vi->mutable_type(), elem_type, nullptr);
  return vi;
}

inline onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op,
                                 const std::vector<std::string>& ins,
                                 const std::vector<std::string>& outs, const std::string& name = "",
                                 const std::string& domain = "") {
  auto* n = g.add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

inline onnx::AttributeProto* add_attr(onnx::NodeProto* n, const std::string& name,
                                      onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

inline void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  add_attr(n, name, onnx::AttributeProto::INT)->set_i(v);
}

inline void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = add_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline onnx::TensorProto make_tensor(const std::string& name, int32_t dtype,
                                     std::vector<int64_t> dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(dtype);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!s.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

inline onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims,
                                      const std::vector<float>& values) {
  onnx::TensorProto t = make_tensor(name, onnx::TensorProto::FLOAT, std::move(dims));
  t.set_raw_data(raw_bytes(values));
  return t;
}

// A model with an empty main graph "main" importing ONNX opset `opset`.
inline onnx::ModelProto make_model(int64_t opset = 13, int64_t ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("infer-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

inline void import_domain(onnx::ModelProto& m, const std::string& domain, int64_t version) {
  auto* op = m.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
}

// x [N,3] float32 -> Relu -> y [N,3]: the smallest valid model.
inline onnx::ModelProto relu_model() {
  onnx::ModelProto m = make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  return m;
}

// A temporary folder, removed with everything in it when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "infer_onnx_XXXXXX").string();
    if (!mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string save(const onnx::ModelProto& m, const TempDir& dir,
                        const std::string& name = "model.onnx") {
  std::string path = dir.file(name);
  write_file(path, m.SerializeAsString());
  return path;
}

}  // namespace infer::onnx_io::testing
