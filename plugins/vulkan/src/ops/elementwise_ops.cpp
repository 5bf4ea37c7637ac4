// The elementwise family: binary arithmetic with numpy broadcasting (Add, Sub, Mul, Div,
// Pow, Max, Min), comparisons producing bool (Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual), Where, unary math and activations, Clip, and Cast float32->float32.
// All float32. Shaders: shaders/elementwise_{binary,compare,where,unary}.comp.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "op_kernel.hpp"

namespace infer::vk {
namespace {

constexpr size_t kMaxRank = 6;  // INFER_MAX_RANK in shaders/include/broadcast.glsl

// ---- Shared checks -------------------------------------------------------------------------

bool is_f32(const infer_value_view* v) { return v != nullptr && v->dtype == INFER_DTYPE_FLOAT32; }

bool check_rank(const infer_value_view* v, std::string* reason) {
  if (v != nullptr && v->rank > static_cast<int64_t>(kMaxRank)) {
    *reason = "rank " + std::to_string(v->rank) + " above " + std::to_string(kMaxRank);
    return false;
  }
  return true;
}

// The node's inputs [0, count) must be present float32 values; output 0 of `out_dtype`.
bool check_io(const infer_node_view& node, size_t count, infer_dtype out_dtype,
              std::string* reason) {
  if (node.num_inputs < count) {
    *reason = "expected " + std::to_string(count) + " inputs, got " + std::to_string(node.num_inputs);
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (!is_f32(v)) {
      *reason = "input " + std::to_string(i) + " is " +
                (v ? dtype_name(v->dtype) : std::string("missing")) + ", only float32 is supported";
      return false;
    }
    if (!check_rank(v, reason)) return false;
  }
  if (node.num_outputs < 1 || node.outputs[0] == nullptr || node.outputs[0]->dtype != out_dtype) {
    *reason = "output 0 must be " + dtype_name(out_dtype);
    return false;
  }
  return check_rank(node.outputs[0], reason);
}

double output_elements(const infer_node_view& node) {
  if (node.num_outputs < 1 || node.outputs[0] == nullptr) return -1;
  const infer_value_view* v = node.outputs[0];
  if (v->rank < 0) return -1;
  double n = 1;
  for (int64_t i = 0; i < v->rank; ++i) {
    if (v->dims[i] < 0) return -1;
    n *= static_cast<double>(v->dims[i]);
  }
  return n;
}

// Element counts and strides travel as 32-bit push constants.
bool fits_u32(const NodeInfo& node, int64_t n, std::string* error) {
  if (n <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) return true;
  *error = node.describe() + ": " + std::to_string(n) + " elements exceed the 2^32 the shader indexes";
  return false;
}

// Push constants of the broadcasting shaders: n, rank, dims[6], then per input strides[6].
std::vector<uint32_t> broadcast_push(const std::vector<int64_t>& out_dims,
                                     const std::vector<std::vector<int64_t>>& in_dims) {
  std::vector<uint32_t> push;
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  push.push_back(static_cast<uint32_t>(n));
  push.push_back(static_cast<uint32_t>(out_dims.size()));
  for (size_t i = 0; i < kMaxRank; ++i)
    push.push_back(i < out_dims.size() ? static_cast<uint32_t>(out_dims[i]) : 1u);
  for (const auto& dims : in_dims) {
    std::vector<int64_t> s = broadcast_strides(dims, out_dims);
    for (size_t i = 0; i < kMaxRank; ++i)
      push.push_back(i < s.size() ? static_cast<uint32_t>(s[i]) : 0u);
  }
  return push;
}

const Shader* shader(const char* name, const NodeInfo& node, std::string* error) {
  const Shader* s = find_shader(name);
  if (s == nullptr) *error = node.describe() + ": shader '" + std::string(name) + "' is not built in";
  return s;
}

// ---- Binary arithmetic and comparisons ---------------------------------------------------

struct BinaryOp {
  const char* op_type;
  uint32_t code;
  bool compare;  // bool output (elementwise_compare.comp)
};

// Codes as elementwise_binary.comp / elementwise_compare.comp number them.
constexpr BinaryOp kBinaryOps[] = {
    {"Add", 0, false},          {"Sub", 1, false},   {"Mul", 2, false},
    {"Div", 3, false},          {"Pow", 4, false},   {"Max", 5, false},
    {"Min", 6, false},          {"Equal", 0, true},  {"Less", 1, true},
    {"Greater", 2, true},       {"LessOrEqual", 3, true},
    {"GreaterOrEqual", 4, true},
};

const BinaryOp* binary_op(const std::string& op_type) {
  for (const BinaryOp& op : kBinaryOps)
    if (op_type == op.op_type) return &op;
  return nullptr;
}

infer_support check_binary(const infer_node_view& node, std::string* reason) {
  const BinaryOp* op = binary_op(node.op_type);
  if (op == nullptr) return INFER_SUPPORT_NO;
  // Max and Min are variadic in ONNX; the shader takes exactly two operands.
  if (node.num_inputs != 2) {
    *reason = std::string(node.op_type) + " with " + std::to_string(node.num_inputs) +
              " inputs (only 2 are supported)";
    return INFER_SUPPORT_NO;
  }
  if (!check_io(node, 2, op->compare ? INFER_DTYPE_BOOL : INFER_DTYPE_FLOAT32, reason))
    return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool plan_binary(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const BinaryOp* op = binary_op(node.op_type);
  if (op == nullptr || in.size() != 2 || !in[0].present || !in[1].present) {
    *error = node.describe() + ": expected 2 inputs";
    return false;
  }
  std::vector<int64_t> dims;
  if (!broadcast_shapes(in[0].dims, in[1].dims, &dims)) {
    *error = node.describe() + ": input shapes " + dims_text(in[0].dims) + " and " +
             dims_text(in[1].dims) + " do not broadcast";
    return false;
  }
  if (dims.size() > kMaxRank) {
    *error = node.describe() + ": rank " + std::to_string(dims.size()) + " above " +
             std::to_string(kMaxRank);
    return false;
  }
  TensorDesc y;
  y.dtype = op->compare ? INFER_DTYPE_BOOL : INFER_DTYPE_FLOAT32;
  y.dims = dims;
  out->outputs = {y};
  const int64_t n = y.elements();
  if (!fits_u32(node, n, error)) return false;
  if (n == 0) return true;
  Dispatch d;
  d.shader = shader(op->compare ? "elementwise_compare" : "elementwise_binary", node, error);
  if (d.shader == nullptr) return false;
  set_grid_1d(d, static_cast<uint64_t>(n));
  const bool same = in[0].dims == dims && in[1].dims == dims;
  d.spec.push_back(op->code);
  d.spec.push_back(same ? 0u : 1u);
  d.push = broadcast_push(dims, {in[0].dims, in[1].dims});
  d.bindings = {Operand::input(0), Operand::input(1), Operand::output(0)};
  out->dispatches.push_back(std::move(d));
  return true;
}

// ---- Where -----------------------------------------------------------------------------

infer_support check_where(const infer_node_view& node, std::string* reason) {
  const infer_value_view* c = node_input(node, 0);
  if (node.num_inputs != 3 || c == nullptr || c->dtype != INFER_DTYPE_BOOL) {
    *reason = "Where needs a bool condition and two values";
    return INFER_SUPPORT_NO;
  }
  if (!check_rank(c, reason)) return INFER_SUPPORT_NO;
  for (size_t i = 1; i < 3; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (!is_f32(v)) {
      *reason = "input " + std::to_string(i) + " must be float32";
      return INFER_SUPPORT_NO;
    }
    if (!check_rank(v, reason)) return INFER_SUPPORT_NO;
  }
  if (node.num_outputs < 1 || !is_f32(node.outputs[0])) {
    *reason = "output 0 must be float32";
    return INFER_SUPPORT_NO;
  }
  return INFER_SUPPORT_YES;
}

bool plan_where(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                std::string* error) {
  if (in.size() != 3 || !in[0].present || !in[1].present || !in[2].present) {
    *error = node.describe() + ": expected 3 inputs";
    return false;
  }
  std::vector<int64_t> cx, dims;
  if (!broadcast_shapes(in[0].dims, in[1].dims, &cx) || !broadcast_shapes(cx, in[2].dims, &dims)) {
    *error = node.describe() + ": input shapes " + dims_text(in[0].dims) + ", " +
             dims_text(in[1].dims) + " and " + dims_text(in[2].dims) + " do not broadcast";
    return false;
  }
  if (dims.size() > kMaxRank) {
    *error = node.describe() + ": rank " + std::to_string(dims.size()) + " above 6";
    return false;
  }
  TensorDesc y;
  y.dims = dims;
  out->outputs = {y};
  const int64_t n = y.elements();
  if (!fits_u32(node, n, error)) return false;
  if (n == 0) return true;
  Dispatch d;
  d.shader = shader("elementwise_where", node, error);
  if (d.shader == nullptr) return false;
  set_grid_1d(d, static_cast<uint64_t>(n));
  d.push = broadcast_push(dims, {in[0].dims, in[1].dims, in[2].dims});
  d.bindings = {Operand::input(0), Operand::input(1), Operand::input(2), Operand::output(0)};
  out->dispatches.push_back(std::move(d));
  return true;
}

// ---- Unary -------------------------------------------------------------------------------

struct UnaryOp {
  const char* op_type;
  uint32_t code;  // elementwise_unary.comp numbering (1..9: activation.glsl)
  // Parameters from attributes: (name, default) for p0 and p1; nullptr when unused.
  const char* a0;
  float d0;
  const char* a1;
  float d1;
};

constexpr UnaryOp kUnaryOps[] = {
    {"Relu", 1, nullptr, 0, nullptr, 0},
    {"Tanh", 2, nullptr, 0, nullptr, 0},
    {"Sigmoid", 3, nullptr, 0, nullptr, 0},
    {"LeakyRelu", 4, "alpha", 0.01f, nullptr, 0},
    {"Clip", 5, nullptr, 0, nullptr, 0},  // min/max: inputs (opset >= 11) or attributes
    {"HardSigmoid", 6, "alpha", 0.2f, "beta", 0.5f},
    {"HardSwish", 7, nullptr, 0, nullptr, 0},
    {"Exp", 20, nullptr, 0, nullptr, 0},
    {"Log", 21, nullptr, 0, nullptr, 0},
    {"Sqrt", 22, nullptr, 0, nullptr, 0},
    {"Abs", 23, nullptr, 0, nullptr, 0},
    {"Neg", 24, nullptr, 0, nullptr, 0},
    {"Reciprocal", 25, nullptr, 0, nullptr, 0},
    {"Erf", 26, nullptr, 0, nullptr, 0},
    {"Elu", 27, "alpha", 1.0f, nullptr, 0},
    {"Softplus", 28, nullptr, 0, nullptr, 0},
    {"Softsign", 29, nullptr, 0, nullptr, 0},
    {"Floor", 30, nullptr, 0, nullptr, 0},
    {"Ceil", 31, nullptr, 0, nullptr, 0},
    {"Sign", 32, nullptr, 0, nullptr, 0},
    {"Selu", 33, "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f},
    {"Sin", 34, nullptr, 0, nullptr, 0},
    {"Cos", 35, nullptr, 0, nullptr, 0},
    {"Round", 36, nullptr, 0, nullptr, 0},
    {"Cast", 37, nullptr, 0, nullptr, 0},  // float32 -> float32 only: an alias, no dispatch
};

const UnaryOp* unary_op(const std::string& op_type) {
  for (const UnaryOp& op : kUnaryOps)
    if (op_type == op.op_type) return &op;
  return nullptr;
}

infer_support check_unary(const infer_node_view& node, std::string* reason) {
  const UnaryOp* op = unary_op(node.op_type);
  if (op == nullptr) return INFER_SUPPORT_NO;
  if (!check_io(node, 1, INFER_DTYPE_FLOAT32, reason)) return INFER_SUPPORT_NO;
  const std::string type = node.op_type;
  if (type == "Cast") {
    const infer_attr_view* to = node_attr(node, "to");
    if (to == nullptr || to->type != INFER_ATTR_INT || to->i != INFER_DTYPE_FLOAT32) {
      *reason = "Cast is supported from float32 to float32 only";
      return INFER_SUPPORT_NO;
    }
  }
  if (type == "Clip") {
    // The bounds are read on the host when the plan is made: they must be constants.
    for (size_t i = 1; i < node.num_inputs && i < 3; ++i) {
      const infer_value_view* v = node.inputs[i];
      if (v == nullptr) continue;
      if (v->dtype != INFER_DTYPE_FLOAT32 || v->const_data == nullptr) {
        *reason = "Clip's min and max must be float32 constants";
        return INFER_SUPPORT_NO;
      }
    }
  } else if (node.num_inputs != 1) {
    *reason = "expected 1 input";
    return INFER_SUPPORT_NO;
  }
  return INFER_SUPPORT_YES;
}

// A float32 scalar constant's value (one element of any shape); false when absent.
bool constant_scalar(const TensorDesc& t, float* out) {
  if (!t.present || t.host_data == nullptr || t.dtype != INFER_DTYPE_FLOAT32 || t.elements() != 1)
    return false;
  std::memcpy(out, t.host_data, sizeof(float));
  return true;
}

bool plan_unary(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                std::string* error) {
  const UnaryOp* op = unary_op(node.op_type);
  if (op == nullptr || in.empty() || !in[0].present) {
    *error = node.describe() + ": expected an input";
    return false;
  }
  TensorDesc y;
  y.dims = in[0].dims;
  out->outputs = {y};
  if (node.op_type == "Cast") {
    out->alias_of_input = {0};
    return true;
  }
  float p0 = op->a0 ? static_cast<float>(node.attr_float(op->a0, op->d0)) : 0.0f;
  float p1 = op->a1 ? static_cast<float>(node.attr_float(op->a1, op->d1)) : 0.0f;
  if (node.op_type == "Clip") {
    const float inf = std::numeric_limits<float>::infinity();
    p0 = -inf;
    p1 = inf;
    if (node.opset < 11) {
      p0 = static_cast<float>(node.attr_float("min", -3.402823e+38));
      p1 = static_cast<float>(node.attr_float("max", 3.402823e+38));
    }
    for (size_t i = 1; i < in.size() && i < 3; ++i) {
      if (!in[i].present) continue;
      float v = 0;
      if (!constant_scalar(in[i], &v)) {
        *error = node.describe() + ": input " + std::to_string(i) +
                 (i == 1 ? " (min)" : " (max)") + " must be a float32 constant scalar";
        return false;
      }
      (i == 1 ? p0 : p1) = v;
    }
  }
  const int64_t n = y.elements();
  if (!fits_u32(node, n, error)) return false;
  if (n == 0) return true;
  Dispatch d;
  d.shader = shader("elementwise_unary", node, error);
  if (d.shader == nullptr) return false;
  set_grid_1d(d, static_cast<uint64_t>(n));
  d.spec.push_back(op->code);
  d.push = {static_cast<uint32_t>(n), push_float(p0), push_float(p1)};
  d.bindings = {Operand::input(0), Operand::output(0)};
  out->dispatches.push_back(std::move(d));
  return true;
}

}  // namespace

void add_elementwise_ops(std::vector<OpKernel>& table) {
  for (const BinaryOp& op : kBinaryOps)
    table.push_back(OpKernel{"", op.op_type, check_binary, plan_binary, output_elements});
  table.push_back(OpKernel{"", "Where", check_where, plan_where, output_elements});
  for (const UnaryOp& op : kUnaryOps)
    table.push_back(OpKernel{"", op.op_type, check_unary, plan_unary, output_elements});
}

}  // namespace infer::vk
