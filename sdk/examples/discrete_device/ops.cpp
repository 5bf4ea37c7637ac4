#include "ops.hpp"

#include <cstring>

#include "failure.hpp"
#include "infer/plugin.hpp"

namespace infer::example {
namespace {

// ---- Shape rules -----------------------------------------------------------------

std::optional<std::string> same_dims(const std::vector<const Dims*>& in, const NodeAttrs&,
                                     Dims* out) {
  *out = *in[0];
  return std::nullopt;
}

std::optional<std::string> broadcast_dims(const std::vector<const Dims*>& in, const NodeAttrs&,
                                          Dims* out) {
  std::optional<Dims> dims = broadcast_shapes(*in[0], *in[1]);
  if (!dims)
    return "shapes " + dims_string(*in[0]) + " and " + dims_string(*in[1]) + " do not broadcast";
  *out = *dims;
  return std::nullopt;
}

std::optional<std::string> matmul_dims(const std::vector<const Dims*>& in, const NodeAttrs&,
                                       Dims* out) {
  const Dims& a = *in[0];
  const Dims& b = *in[1];
  if (a.size() < 2 || b.size() < 2)
    return "inputs need rank >= 2, got " + dims_string(a) + " and " + dims_string(b);
  if (a[a.size() - 1] != b[b.size() - 2])
    return "inner dims differ: " + dims_string(a) + " x " + dims_string(b);
  std::optional<Dims> batch =
      broadcast_shapes(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!batch)
    return "batch dims of " + dims_string(a) + " and " + dims_string(b) + " do not broadcast";
  *out = *batch;
  out->push_back(a[a.size() - 2]);
  out->push_back(b[b.size() - 1]);
  return std::nullopt;
}

std::optional<std::string> gemm_dims(const std::vector<const Dims*>& in, const NodeAttrs& attrs,
                                     Dims* out) {
  const Dims& a = *in[0];
  const Dims& b = *in[1];
  if (a.size() != 2 || b.size() != 2)
    return "A and B need rank 2, got " + dims_string(a) + " and " + dims_string(b);
  const int64_t m = attrs.trans_a ? a[1] : a[0];
  const int64_t k = attrs.trans_a ? a[0] : a[1];
  const int64_t kb = attrs.trans_b ? b[1] : b[0];
  const int64_t n = attrs.trans_b ? b[0] : b[1];
  if (k != kb)
    return "inner dims differ: op(A) is [" + std::to_string(m) + "," + std::to_string(k) +
           "], op(B) is [" + std::to_string(kb) + "," + std::to_string(n) + "]";
  *out = {m, n};
  // C broadcasts one way only: to [M, N], never the other way round.
  if (in.size() > 2 && in[2] != nullptr && broadcast_shapes(*in[2], *out) != *out)
    return "C " + dims_string(*in[2]) + " does not broadcast to " + dims_string(*out);
  return std::nullopt;
}

// ---- Extra support rules ---------------------------------------------------------

// Rank of input i, which the generic checks have already found present and known.
int64_t rank_of(const infer_node_view& node, size_t i) { return node.inputs[i]->rank; }

std::optional<std::string> check_matmul(const infer_node_view& node) {
  // numpy's 1-D promotion would need its own shape rule; the example keeps to rank >= 2.
  for (size_t i = 0; i < 2; ++i)
    if (rank_of(node, i) < 2)
      return "MatMul needs inputs of rank >= 2, got rank " + std::to_string(rank_of(node, i)) +
             " for input '" + value_name(node.inputs[i]) + "'";
  return std::nullopt;
}

std::optional<std::string> check_gemm(const infer_node_view& node) {
  for (size_t i = 0; i < 2; ++i)
    if (rank_of(node, i) != 2)
      return "Gemm needs 2-D A and B, got rank " + std::to_string(rank_of(node, i)) +
             " for input '" + value_name(node.inputs[i]) + "'";
  if (sdk::input(&node, 2) != nullptr && rank_of(node, 2) > 2)
    return "Gemm needs C of rank <= 2, got rank " + std::to_string(rank_of(node, 2));
  return std::nullopt;
}

// DequantizeLinear: input 0 is 8-bit with a per-tensor descriptor whose scale (float32)
// and zero point (the storage type, or none) are constants of one element; the node's
// own scale and zero point inputs are those very values.
std::optional<std::string> check_dequantize(const infer_node_view& node) {
  const infer_value_view* x = node.inputs[0];
  const std::string name = "'" + value_name(x) + "'";
  if (x->dtype != INFER_DTYPE_UINT8 && x->dtype != INFER_DTYPE_INT8)
    return "DequantizeLinear needs uint8 or int8 input, got " +
           std::string(sdk::dtype_name(x->dtype)) + " for " + name;
  const infer_quant_desc* q = x->quant;
  if (q == nullptr || !INFER_HAS_FIELD(q, infer_quant_desc, zero_point))
    return "DequantizeLinear needs a quantization descriptor on " + name;
  if (q->scheme != INFER_QUANT_PER_TENSOR)
    return "DequantizeLinear supports per-tensor quantization only (" + name +
           " is per axis or per block)";
  if (q->storage != x->dtype) return "DequantizeLinear: descriptor storage differs from " + name;
  const infer_value_view* s = q->scale;
  if (s == nullptr || s->dtype != INFER_DTYPE_FLOAT32 || s->const_data == nullptr ||
      s->const_size != sizeof(float))
    return "DequantizeLinear needs a constant float32 scalar scale for " + name;
  const infer_value_view* z = q->zero_point;
  if (z != nullptr && (z->dtype != x->dtype || z->const_data == nullptr || z->const_size != 1))
    return "DequantizeLinear needs a constant one-element zero point of " + name + "'s type";
  if (node.inputs[1] != s || (sdk::input(&node, 2) != nullptr && node.inputs[2] != z))
    return "DequantizeLinear's scale and zero point are not those of " + name + "'s descriptor";
  if (sdk::attr_int(&node, "block_size", 0) != 0)
    return "DequantizeLinear with blocks is not supported";
  return std::nullopt;
}

// ---- Cost model ------------------------------------------------------------------

// The inner (reduced) dimension K, when the view knows it.
int64_t matmul_work(const infer_node_view& node) {
  const infer_value_view* a = node.inputs[0];
  return a->dims[a->rank - 1];  // -1 when symbolic
}
int64_t gemm_work(const infer_node_view& node) {
  const infer_value_view* a = node.inputs[0];
  return sdk::attr_int(&node, "transA", 0) != 0 ? a->dims[0] : a->dims[1];
}

// ---- Kernels: adapt KernelArgs to the math in kernels.cpp ----------------------------

template <BinaryOp kOp>
void run_binary(const KernelArgs& k) {
  binary_broadcast(kOp, k.inputs[0], *k.input_dims[0], k.inputs[1], *k.input_dims[1], k.output,
                   *k.output_dims);
}

void run_dequantize(const KernelArgs& k) {
  const int64_t n = element_count(*k.output_dims);
  const void* x = k.inputs[0];
  if (k.attrs->storage == INFER_DTYPE_UINT8)
    dequantize(static_cast<const uint8_t*>(x), n, k.attrs->scale, k.attrs->zero_point, k.output);
  else
    dequantize(static_cast<const int8_t*>(x), n, k.attrs->scale, k.attrs->zero_point, k.output);
}

void run_relu(const KernelArgs& k) { relu(k.inputs[0], element_count(*k.output_dims), k.output); }

void run_matmul(const KernelArgs& k) {
  matmul(k.inputs[0], *k.input_dims[0], k.inputs[1], *k.input_dims[1], k.output, *k.output_dims);
}

void run_gemm(const KernelArgs& k) {
  const Dims& a = *k.input_dims[0];
  GemmParams p;
  p.trans_a = k.attrs->trans_a;
  p.trans_b = k.attrs->trans_b;
  p.alpha = k.attrs->alpha;
  p.beta = k.attrs->beta;
  p.m = (*k.output_dims)[0];
  p.n = (*k.output_dims)[1];
  p.k = p.trans_a ? a[0] : a[1];
  const bool has_c = k.inputs.size() > 2 && k.inputs[2] != nullptr;
  static const Dims kNoC;
  gemm(p, k.inputs[0], k.inputs[1], has_c ? k.inputs[2] : nullptr, has_c ? *k.input_dims[2] : kNoC,
       k.output);
}

// ---- The table -------------------------------------------------------------------
// Opset floors: Add/Sub/Mul before 7 used a legacy "broadcast" attribute, Relu before 6 a
// legacy "consumed_inputs" one, Gemm before 7 a "broadcast" flag. C of Gemm is optional
// from opset 11 on; the kernel accepts its absence at any version.
// One line per op: type, opset floor, min and max inputs, support, extra check, shape
// rule, kernel, work per output element.
constexpr auto kYes = INFER_SUPPORT_YES;
constexpr auto kPreferred = INFER_SUPPORT_PREFERRED;
constexpr auto run_add = run_binary<BinaryOp::kAdd>;
constexpr auto run_sub = run_binary<BinaryOp::kSub>;
constexpr auto run_mul = run_binary<BinaryOp::kMul>;
// clang-format off
constexpr OpInfo kOps[] = {
    {"Add",    7, 2, 2, kYes,       nullptr,      broadcast_dims, run_add,    nullptr},
    {"Sub",    7, 2, 2, kYes,       nullptr,      broadcast_dims, run_sub,    nullptr},
    {"Mul",    7, 2, 2, kYes,       nullptr,      broadcast_dims, run_mul,    nullptr},
    {"Relu",   6, 1, 1, kYes,       nullptr,      same_dims,      run_relu,   nullptr},
    {"MatMul", 1, 2, 2, kPreferred, check_matmul, matmul_dims,    run_matmul, matmul_work},
    {"Gemm",   7, 2, 3, kPreferred, check_gemm,   gemm_dims,      run_gemm,   gemm_work},
    {"DequantizeLinear", 10, 2, 3, kYes, check_dequantize, same_dims, run_dequantize, nullptr,
     /*quantized_input=*/true},
};
// clang-format on

}  // namespace

NodeAttrs read_attrs(const infer_node_view& node) {
  NodeAttrs attrs;
  attrs.trans_a = sdk::attr_int(&node, "transA", 0) != 0;
  attrs.trans_b = sdk::attr_int(&node, "transB", 0) != 0;
  attrs.alpha = static_cast<float>(sdk::attr_float(&node, "alpha", 1.0));
  attrs.beta = static_cast<float>(sdk::attr_float(&node, "beta", 1.0));
  return attrs;
}

void read_quant_params(const infer_node_view& node, NodeAttrs* attrs) {
  const infer_quant_desc& q = *node.inputs[0]->quant;
  attrs->storage = node.inputs[0]->dtype;
  std::memcpy(&attrs->scale, q.scale->const_data, sizeof(float));
  attrs->zero_point = 0;
  if (q.zero_point != nullptr)
    attrs->zero_point = attrs->storage == INFER_DTYPE_UINT8
                            ? int32_t{*static_cast<const uint8_t*>(q.zero_point->const_data)}
                            : int32_t{*static_cast<const int8_t*>(q.zero_point->const_data)};
}

const OpInfo* find_op(std::string_view op_type) {
  for (const OpInfo& op : kOps)
    if (op.op_type == op_type) return &op;
  return nullptr;
}

std::span<const OpInfo> all_ops() { return kOps; }

}  // namespace infer::example
