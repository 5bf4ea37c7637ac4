#include "optimizer/qdq_gemm_fusion.hpp"

#include <cstring>
#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/qdq_util.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using qdq::present;

// w_q of DequantizeLinear `dq` when it is a 2-D 8-bit constant whose scale (and zero point,
// of w_q's type) is one element or one per element of axis `n_axis` (the product's N).
const ir::TensorData* quantized_weights(const ir::Graph& g, const ir::Node& dq, int64_t n_axis) {
  if (!is_onnx_op(dq, "DequantizeLinear") || !present(dq, 0) || !present(dq, 1) ||
      dq.attr_int("block_size", 0) != 0)
    return nullptr;
  const ir::TensorData* w = constant_of(g, dq.inputs[0]);
  if (w == nullptr || !qdq::is_8bit(w->dtype()) || w->dims().size() != 2 || w->dims()[0] <= 0 ||
      w->dims()[1] <= 0)
    return nullptr;
  const int64_t N = w->dims()[static_cast<size_t>(n_axis)];
  size_t count = 1;
  if (!qdq::scales(g, dq.inputs[1], 1)) {
    const int64_t axis = dq.attr_int("axis", 1);
    if (axis != n_axis && axis != n_axis - 2) return nullptr;
    const ir::TensorData* s = constant_of(g, dq.inputs[1]);
    if (s == nullptr || s->dims().size() != 1 || !qdq::scales(g, dq.inputs[1], static_cast<size_t>(N)))
      return nullptr;
    count = static_cast<size_t>(N);
  }
  if (present(dq, 2)) {
    const ir::TensorData* z = constant_of(g, dq.inputs[2]);
    std::optional<std::vector<int32_t>> zv = qdq::int8_constant(g, dq.inputs[2]);
    if (z == nullptr || z->dtype() != w->dtype() || !zv || zv->size() != count) return nullptr;
    if (count > 1 && z->dims().size() != 1) return nullptr;
  }
  return w;
}

// Gemm's C as MatMulIntegerToFloat's bias: a float32 constant of N elements (rank 1), or
// DequantizeLinear of an int32 constant of N elements.
bool bias_of_n(const ir::Graph& g, const GraphIndex& index, ir::ValueId c, int64_t N) {
  if (const ir::TensorData* t = constant_of(g, c))
    return t->dtype() == DataType::kFloat32 && t->dims() == std::vector<int64_t>{N};
  const ir::Node* dq = index.producer(c);
  if (dq == nullptr || !is_onnx_op(*dq, "DequantizeLinear") || !present(*dq, 0) ||
      !present(*dq, 1))
    return false;
  const ir::TensorData* t = constant_of(g, dq->inputs[0]);
  return t != nullptr && t->dtype() == DataType::kInt32 &&
         t->dims() == std::vector<int64_t>{N} && qdq::float_or_unknown(g, c);
}

// The K x N transpose of an N x K 8-bit constant.
ir::TensorDataPtr transposed(const ir::TensorData& w) {
  const int64_t N = w.dims()[0], K = w.dims()[1];
  std::vector<uint8_t> bytes(static_cast<size_t>(N * K));
  const uint8_t* src = static_cast<const uint8_t*>(w.data());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) bytes[static_cast<size_t>(k * N + n)] = src[n * K + k];
  return std::make_shared<const ir::TensorData>(w.dtype(), std::vector<int64_t>{K, N},
                                                std::move(bytes));
}

bool try_fuse(ir::Graph& g, const GraphIndex& index, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  const bool gemm = is_onnx_op(n, "Gemm");
  if ((!gemm && !is_onnx_op(n, "MatMul")) || n.outputs.size() != 1 || n.inputs.size() < 2 ||
      !present(n, 0) || !present(n, 1) || !qdq::float_or_unknown(g, n.outputs[0]))
    return false;
  bool trans_b = false;
  if (gemm) {
    if (n.attr_float("alpha", 1.0) != 1.0 || n.attr_int("transA", 0) != 0) return false;
    if (present(n, 2) && n.attr_float("beta", 1.0) != 1.0) return false;
    trans_b = n.attr_int("transB", 0) != 0;
  }
  const std::optional<qdq::PerTensor> x = qdq::dequantized_input(g, index.producer(n.inputs[0]));
  if (!x) return false;
  if (gemm) {  // Gemm's A is 2-D
    const ir::Shape& s = g.value(n.inputs[0]).shape;
    if (s.rank_known() && s.dims->size() != 2) return false;
  }
  const ir::Node* dqw = index.producer(n.inputs[1]);
  if (dqw == nullptr) return false;
  const ir::TensorData* w = quantized_weights(g, *dqw, trans_b ? 0 : 1);
  if (w == nullptr) return false;
  const int64_t N = w->dims()[trans_b ? 0 : 1];
  if (gemm && present(n, 2) && !bias_of_n(g, index, n.inputs[2], N)) return false;

  const std::string base = n.name.empty() ? std::string("qdq_gemm") : n.name;
  const ir::ValueId w_scale = dqw->inputs[1];
  const ir::ValueId w_zero = present(*dqw, 2) ? dqw->inputs[2] : ir::kNoValue;
  const ir::ValueId w_q =
      trans_b ? add_constant(g, g.value(dqw->inputs[0]).name + "_transposed", transposed(*w))
              : dqw->inputs[0];
  ir::Node& node = g.node(id);
  std::vector<ir::ValueId> inputs = {x->data, w_q, x->scale, w_scale, x->zero, w_zero};
  if (gemm && present(node, 2)) inputs.push_back(node.inputs[2]);
  while (inputs.back() == ir::kNoValue) inputs.pop_back();
  node.domain = kFusedDomain;
  node.op_type = "MatMulIntegerToFloat";
  node.inputs = std::move(inputs);
  node.attributes.clear();
  return true;
}

}  // namespace

Result<int> QdqGemmFusion::apply(ir::Graph& graph, const PassContext& context) {
  return qdq::rewrite_each_node(
      graph, context, [&](const GraphIndex& index, ir::NodeId id, std::vector<bool>&) {
        return try_fuse(graph, index, id);
      });
}

}  // namespace infer::optimizer
