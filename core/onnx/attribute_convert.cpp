// See attribute_convert.hpp.
#include "onnx/attribute_convert.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "onnx/tensor_convert.hpp"

namespace infer::onnx_io {
namespace {

// IR version 1 files carry no AttributeProto.type; the field that holds a value says it.
onnx::AttributeProto::AttributeType deduce_type(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  if (a.has_f()) return A::FLOAT;
  if (a.has_i()) return A::INT;
  if (a.has_s()) return A::STRING;
  if (a.has_t()) return A::TENSOR;
  if (a.has_g()) return A::GRAPH;
  if (a.has_sparse_tensor()) return A::SPARSE_TENSOR;
  if (a.floats_size()) return A::FLOATS;
  if (a.ints_size()) return A::INTS;
  if (a.strings_size()) return A::STRINGS;
  if (a.tensors_size()) return A::TENSORS;
  if (a.graphs_size()) return A::GRAPHS;
  if (a.sparse_tensors_size()) return A::SPARSE_TENSORS;
  return A::UNDEFINED;
}

template <typename T>
ir::TensorDataPtr make_tensor(DataType dtype, std::vector<int64_t> dims,
                              const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return std::make_shared<const ir::TensorData>(dtype, std::move(dims), std::move(bytes));
}

}  // namespace

Result<ir::Attribute> convert_attribute(onnx::AttributeProto& attr, ExternalData& external,
                                        const std::string& tensor_name,
                                        const BodyConverter& convert_body) {
  using A = onnx::AttributeProto;
  const std::string where = "attribute '" + attr.name() + "'";
  if (attr.name().empty()) return invalid_argument("an attribute has no name");
  A::AttributeType type = attr.type() != A::UNDEFINED ? attr.type() : deduce_type(attr);

  ir::Attribute out;
  out.name = attr.name();
  out.type = static_cast<ir::AttrType>(type);
  auto name_of = [&](const onnx::TensorProto& t) {
    if (!tensor_name.empty()) return tensor_name;
    return t.name().empty() ? attr.name() : t.name();
  };
  switch (type) {
    case A::FLOAT:
      out.f = attr.f();
      break;
    case A::INT:
      out.i = attr.i();
      break;
    case A::STRING:
      out.s = attr.s();
      break;
    case A::FLOATS:
      out.floats.assign(attr.floats().begin(), attr.floats().end());
      break;
    case A::INTS:
      out.ints.assign(attr.ints().begin(), attr.ints().end());
      break;
    case A::STRINGS:
      out.strings.assign(attr.strings().begin(), attr.strings().end());
      break;
    case A::TENSOR: {
      auto t = convert_tensor(*attr.mutable_t(), name_of(attr.t()), external);
      if (!t.is_ok()) return t.status().with_context(where);
      out.tensors.push_back(std::move(t).value());
      break;
    }
    case A::TENSORS:
      for (auto& proto : *attr.mutable_tensors()) {
        auto t = convert_tensor(proto, name_of(proto), external);
        if (!t.is_ok()) return t.status().with_context(where);
        out.tensors.push_back(std::move(t).value());
      }
      break;
    case A::GRAPH: {
      auto g = convert_body(*attr.mutable_g(), attr.name());
      if (!g.is_ok()) return g.status().with_context(where);
      out.graphs.push_back(std::move(g).value());
      break;
    }
    case A::GRAPHS:
      for (int k = 0; k < attr.graphs_size(); ++k) {
        const std::string label = attr.name() + "[" + std::to_string(k) + "]";
        auto g = convert_body(*attr.mutable_graphs(k), label);
        if (!g.is_ok()) return g.status().with_context("attribute '" + label + "'");
        out.graphs.push_back(std::move(g).value());
      }
      break;
    case A::SPARSE_TENSOR:
    case A::SPARSE_TENSORS:
      return unsupported(where + " holds a sparse tensor, which infer does not support");
    case A::UNDEFINED:
      return invalid_argument(where + " has no type and no value");
    default:
      return unsupported(where + " has attribute type " + std::to_string(static_cast<int>(type)) +
                         " (a type proto), which infer does not support");
  }
  return out;
}

Status normalize_constant(ir::Node& node, const std::string& output_name) {
  static const char* const kValueAttrs[] = {"value",         "value_float", "value_floats",
                                            "value_int",     "value_ints",  "value_string",
                                            "value_strings", "sparse_value"};
  const ir::Attribute* found = nullptr;
  for (const ir::Attribute& a : node.attributes) {
    for (const char* name : kValueAttrs) {
      if (a.name != name) continue;
      if (found)
        return invalid_argument(node.describe() + " has both '" + found->name + "' and '" + a.name +
                                "'; a Constant has exactly one value");
      found = &a;
    }
  }
  if (!found) return invalid_argument(node.describe() + " has no value attribute");

  ir::TensorDataPtr tensor;
  const std::string& which = found->name;
  if (which == "value_string" || which == "value_strings")
    return unsupported(node.describe() + ": tensor '" + output_name +
                       "' has dtype string, which infer does not support");
  if (which == "value" && found->type == ir::AttrType::kTensor && found->tensors.size() == 1) {
    tensor = found->tensors[0];
  } else if (which == "value_float" && found->type == ir::AttrType::kFloat) {
    tensor = make_tensor(DataType::kFloat32, {}, std::vector<float>{static_cast<float>(found->f)});
  } else if (which == "value_floats" && found->type == ir::AttrType::kFloats) {
    std::vector<float> v(found->floats.begin(), found->floats.end());
    tensor = make_tensor(DataType::kFloat32, {static_cast<int64_t>(v.size())}, v);
  } else if (which == "value_int" && found->type == ir::AttrType::kInt) {
    tensor = make_tensor(DataType::kInt64, {}, std::vector<int64_t>{found->i});
  } else if (which == "value_ints" && found->type == ir::AttrType::kInts) {
    tensor = make_tensor(DataType::kInt64, {static_cast<int64_t>(found->ints.size())}, found->ints);
  } else {
    return invalid_argument(node.describe() + ": attribute '" + which + "' has the wrong type");
  }
  ir::Attribute value;
  value.name = "value";
  value.type = ir::AttrType::kTensor;
  value.tensors.push_back(std::move(tensor));
  node.attributes.clear();
  node.attributes.push_back(std::move(value));
  return Status::ok();
}

}  // namespace infer::onnx_io
