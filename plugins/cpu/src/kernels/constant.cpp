// Constant (value tensor, or from opset 12 value_float(s)/value_int(s)) and
// ConstantOfShape (a tensor of the input shape filled with the one-element `value`,
// default float32 0). The values are copied at compile time: attribute views only live
// for the compile call.
#include <cstring>
#include <vector>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class ConstantKernel final : public Kernel {
 public:
  ConstantKernel(infer_dtype dtype, Dims dims, std::vector<uint8_t> bytes)
      : dtype_(dtype), dims_(std::move(dims)), bytes_(std::move(bytes)) {}

  Status run(KernelContext& ctx) const override {
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, dtype_, dims_));
    if (Y->bytes() != bytes_.size())
      return internal("constant holds ", bytes_.size(), " bytes, expected ", Y->bytes());
    if (!bytes_.empty()) std::memcpy(Y->data, bytes_.data(), bytes_.size());
    return Status::ok();
  }

 private:
  infer_dtype dtype_;
  Dims dims_;
  std::vector<uint8_t> bytes_;
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  ConstantOfShapeKernel(infer_dtype dtype, std::vector<uint8_t> value)
      : dtype_(dtype), value_(std::move(value)) {}

  Status run(KernelContext& ctx) const override {
    CPU_ASSIGN_OR_RETURN(Dims shape, read_int_list(*ctx.input(0), "shape"));
    for (int64_t v : shape)
      if (v < 0) return invalid("shape ", dims_str(shape), " has a negative dim");
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, dtype_, shape));
    const size_t es = value_.size();
    auto* y = static_cast<uint8_t*>(Y->data);
    const int64_t n = Y->numel();
    for (int64_t i = 0; i < n; ++i) std::memcpy(y + static_cast<size_t>(i) * es, value_.data(), es);
    return Status::ok();
  }

 private:
  infer_dtype dtype_;
  std::vector<uint8_t> value_;
};

// The tensor held by a TENSOR attribute, or nullptr.
const infer_value_view* tensor_attr(const infer_node_view& n, const char* name) {
  const infer_attr_view* a = sdk::find_attr(&n, name);
  if (a == nullptr || a->type != INFER_ATTR_TENSOR || a->count < 1 || a->tensors == nullptr)
    return nullptr;
  return a->tensors[0];
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Status check_tensor(const infer_node_view& n, const infer_value_view* t) {
  if (t->dtype == INFER_DTYPE_STRING) return unsupported(n.op_type, " string values not supported");
  if (sdk::dtype_size(t->dtype) == 0)
    return unsupported(n.op_type, " value dtype ", dtype_name(t->dtype), " not supported");
  if (t->rank < 0) return unsupported(n.op_type, " value has unknown rank");
  const int64_t count = sdk::element_count(t->dims, static_cast<size_t>(t->rank));
  // An empty tensor (e.g. Resize's roi placeholder in opset-11 exports) has no bytes, and
  // the host may hand it over without a data pointer.
  if ((t->const_data == nullptr && count != 0) ||
      t->const_size != sdk::tensor_bytes(t->dtype, count))
    return unsupported(n.op_type, " value tensor holds ", t->const_size, " bytes, expected ",
                       sdk::tensor_bytes(t->dtype, count));
  return Status::ok();
}

}  // namespace

Status constant_check(const infer_node_view& node) {
  if (node.num_inputs != 0) return unsupported("Constant takes no inputs");
  if (const infer_value_view* t = tensor_attr(node, "value")) return check_tensor(node, t);
  if (has_attr(node, "sparse_value")) return unsupported("Constant sparse_value not supported");
  if (has_attr(node, "value_string") || has_attr(node, "value_strings"))
    return unsupported("Constant string values not supported");
  for (const char* name : {"value_float", "value_floats", "value_int", "value_ints"})
    if (has_attr(node, name)) return Status::ok();
  return unsupported("Constant has no value attribute");
}

Result<KernelPtr> constant_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  if (const infer_value_view* t = tensor_attr(n, "value")) {
    const auto* p = static_cast<const uint8_t*>(t->const_data);
    return KernelPtr(new ConstantKernel(t->dtype, Dims(t->dims, t->dims + t->rank),
                                        std::vector<uint8_t>(p, p + t->const_size)));
  }
  if (const infer_attr_view* a = sdk::find_attr(&n, "value_float"))
    return KernelPtr(new ConstantKernel(INFER_DTYPE_FLOAT32, {},
                                        bytes_of(std::vector<float>{static_cast<float>(a->f)})));
  if (const infer_attr_view* a = sdk::find_attr(&n, "value_int"))
    return KernelPtr(
        new ConstantKernel(INFER_DTYPE_INT64, {}, bytes_of(std::vector<int64_t>{a->i})));
  if (sdk::find_attr(&n, "value_floats")) {
    std::vector<float> v;
    for (double d : attr_floats(n, "value_floats")) v.push_back(static_cast<float>(d));
    return KernelPtr(
        new ConstantKernel(INFER_DTYPE_FLOAT32, {static_cast<int64_t>(v.size())}, bytes_of(v)));
  }
  const Dims ints = attr_ints(n, "value_ints");
  return KernelPtr(
      new ConstantKernel(INFER_DTYPE_INT64, {static_cast<int64_t>(ints.size())}, bytes_of(ints)));
}

Status constant_of_shape_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kI64, "the shape"));
  if (const infer_value_view* t = tensor_attr(node, "value")) {
    CPU_RETURN_IF_ERROR(check_tensor(node, t));
    if (t->const_size != sdk::dtype_size(t->dtype))
      return unsupported("ConstantOfShape value must hold one element");
  } else if (has_attr(node, "value")) {
    return unsupported("ConstantOfShape value must be a tensor");
  }
  return Status::ok();
}

Result<KernelPtr> constant_of_shape_create(const KernelInit& init) {
  if (const infer_value_view* t = tensor_attr(*init.node, "value")) {
    const auto* p = static_cast<const uint8_t*>(t->const_data);
    return KernelPtr(
        new ConstantOfShapeKernel(t->dtype, std::vector<uint8_t>(p, p + t->const_size)));
  }
  return KernelPtr(
      new ConstantOfShapeKernel(INFER_DTYPE_FLOAT32, std::vector<uint8_t>(sizeof(float), 0)));
}

}  // namespace infer::cpu::kernels
