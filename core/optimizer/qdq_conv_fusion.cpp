#include "optimizer/qdq_conv_fusion.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/qdq_util.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using qdq::float_or_unknown;
using qdq::int8_constant;
using qdq::is_8bit;
using qdq::per_tensor;
using qdq::PerTensor;
using qdq::present;
using qdq::scales;

class Matcher {
 public:
  Matcher(ir::Graph& graph, const GraphIndex& index, std::vector<bool>& remove)
      : g_(graph), index_(index), remove_(remove) {}

  // Tries the chain ending in QuantizeLinear `q_id`; true when rewritten.
  bool try_fuse(ir::NodeId q_id) {
    const ir::Node& q = g_.node(q_id);
    if (!is_onnx_op(q, "QuantizeLinear") || q.outputs.size() != 1 || !present(q, 0)) return false;
    const std::optional<PerTensor> y = per_tensor(g_, q, q.outputs[0]);
    if (!y) return false;
    // Back through an optional Relu or Clip to the Conv.
    ir::ValueId conv_out = q.inputs[0];
    ir::NodeId relu_id = ir::kNoNode;
    ir::NodeId conv_id = index_.producer_id(conv_out);
    if (conv_id == ir::kNoNode || !index_.has_single_use(conv_out)) return false;
    const ir::Node& act = g_.node(conv_id);
    if (is_onnx_op(act, "Relu") || is_onnx_op(act, "Clip")) {
      if (!saturation_applies(act, *y)) return false;
      relu_id = conv_id;
      conv_out = g_.node(relu_id).inputs[0];
      conv_id = index_.producer_id(conv_out);
      if (conv_id == ir::kNoNode || !index_.has_single_use(conv_out)) return false;
    }
    ir::Node& conv = g_.node(conv_id);
    if (!is_onnx_op(conv, "Conv") || conv.outputs.size() != 1 || !present(conv, 0) ||
        !present(conv, 1))
      return false;
    // Types may not be inferred yet (this pass runs first); the DequantizeLinear nodes'
    // float32 scales make the Conv float32.
    if (!float_or_unknown(conv_out)) return false;

    // x: DequantizeLinear with per-tensor parameters.
    const std::optional<PerTensor> x = qdq::dequantized_input(g_, index_.producer(conv.inputs[0]));
    if (!x) return false;

    // w: DequantizeLinear of a constant, per tensor or per output channel (axis 0).
    const ir::Node* dqw = index_.producer(conv.inputs[1]);
    if (dqw == nullptr || !is_onnx_op(*dqw, "DequantizeLinear") || !present(*dqw, 0) ||
        !present(*dqw, 1))
      return false;
    const ir::ValueId wq = dqw->inputs[0];
    const ir::TensorData* wt = constant_of(g_, wq);
    if (wt == nullptr || !is_8bit(wt->dtype()) || wt->dims().size() < 3 || wt->dims()[0] <= 0)
      return false;
    const int64_t M = wt->dims()[0];
    std::optional<std::vector<double>> ws = scales(g_, dqw->inputs[1], 1);
    if (!ws) {
      const ir::TensorData* st = constant_of(g_, dqw->inputs[1]);
      const int64_t axis = dqw->attr_int("axis", 1);
      if (st == nullptr || st->dims().size() != 1 ||
          (axis != 0 && axis != -static_cast<int64_t>(wt->dims().size())))
        return false;
      ws = scales(g_, dqw->inputs[1], static_cast<size_t>(M));
      if (!ws) return false;
    }
    if (present(*dqw, 2)) {
      std::optional<std::vector<int32_t>> wz = int8_constant(g_, dqw->inputs[2]);
      if (!wz || wz->size() != ws->size() ||
          constant_of(g_, dqw->inputs[2])->dtype() != wt->dtype())
        return false;
    }

    // The bias, requantized to int32 with x_scale * w_scale[m].
    std::vector<int32_t> bias;
    if (present(conv, 2)) {
      std::optional<std::vector<double>> b = bias_values(conv.inputs[2]);
      if (!b || b->size() != static_cast<size_t>(M)) return false;
      bias.resize(static_cast<size_t>(M));
      for (int64_t m = 0; m < M; ++m) {
        const double s = x->scale_value * (*ws)[ws->size() == 1 ? 0 : static_cast<size_t>(m)];
        const double v = std::nearbyint((*b)[static_cast<size_t>(m)] / s);
        if (!(std::fabs(v) <= static_cast<double>(std::numeric_limits<int32_t>::max())))
          return false;
        bias[static_cast<size_t>(m)] = static_cast<int32_t>(v);
      }
    }

    // Rewrite: the Conv becomes the QLinearConv and writes y_q.
    const std::string base = conv.name.empty() ? std::string("qlinear_conv") : conv.name;
    const ir::ValueId x_zero = qdq::zero_point_value(g_, *x, base + "_x");
    PerTensor w_params;
    w_params.zero = present(*dqw, 2) ? dqw->inputs[2] : ir::kNoValue;
    w_params.dtype = wt->dtype();
    const ir::ValueId w_zero = qdq::zero_point_value(g_, w_params, base + "_w");
    const ir::ValueId y_zero = qdq::zero_point_value(g_, *y, base + "_y");
    std::vector<ir::ValueId> inputs = {x->data,        x->scale, x_zero,   wq,
                                       dqw->inputs[1], w_zero,   y->scale, y_zero};
    if (!bias.empty()) {
      std::vector<uint8_t> bytes(bias.size() * sizeof(int32_t));
      std::memcpy(bytes.data(), bias.data(), bytes.size());
      inputs.push_back(
          add_constant(g_, base + "_bias_quantized",
                       std::make_shared<const ir::TensorData>(
                           DataType::kInt32, std::vector<int64_t>{M}, std::move(bytes))));
    }
    ir::Node& c = g_.node(conv_id);  // add_constant may not move nodes, but be safe
    c.op_type = "QLinearConv";
    c.inputs = std::move(inputs);
    c.outputs[0] = q.outputs[0];
    remove_[q_id] = true;
    if (relu_id != ir::kNoNode) remove_[relu_id] = true;
    return true;
  }

 private:
  bool float_or_unknown(ir::ValueId v) const { return qdq::float_or_unknown(g_, v); }

  // Whether QuantizeLinear's saturation to y's type already applies activation `act` (a
  // Relu, or a Clip with constant bounds, min and max default -inf and +inf): y's
  // quantization maps the lower bound to the type's lowest value and the upper bound to
  // its highest. Quantizing is monotonic, so Q(clip(v, lo, hi)) = clip(Q(v), Q(lo), Q(hi)),
  // and the clip is then the saturation itself. (MobileNet's ReLU6 with y calibrated on
  // [0, 6] qualifies.)
  bool saturation_applies(const ir::Node& act, const PerTensor& y) const {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    if (act.op_type == "Relu") {
      lo = 0;
    } else {
      if (act.attr("min") != nullptr || act.attr("max") != nullptr) return false;  // opset < 11
      for (size_t slot : {size_t{1}, size_t{2}}) {
        if (!present(act, slot)) continue;
        const std::optional<double> v = qdq::scalar_value(g_, index_, act.inputs[slot]);
        if (!v) return false;
        (slot == 1 ? lo : hi) = *v;
      }
    }
    const double lowest = y.dtype == DataType::kUInt8 ? 0 : -128;
    const double highest = y.dtype == DataType::kUInt8 ? 255 : 127;
    // QuantizeLinear in float32: round_half_even(v / scale) + zero point, saturated.
    auto quantized = [&](double v) {
      const float q = static_cast<float>(v) / static_cast<float>(y.scale_value);
      return std::clamp(std::nearbyint(static_cast<double>(q)) + y.zero_value, lowest, highest);
    };
    return quantized(lo) == lowest && quantized(hi) == highest;
  }

  // A float32 constant, or DequantizeLinear of an int32 constant (zero point 0), as double.
  std::optional<std::vector<double>> bias_values(ir::ValueId b) {
    if (!float_or_unknown(b)) return std::nullopt;
    if (g_.value(b).is_constant()) {
      if (g_.value(b).constant->dtype() != DataType::kFloat32) return std::nullopt;
      return float_constant(g_, b);
    }
    const ir::Node* dq = index_.producer(b);
    if (dq == nullptr || !is_onnx_op(*dq, "DequantizeLinear") || !present(*dq, 0) ||
        !present(*dq, 1))
      return std::nullopt;
    const ir::TensorData* t = constant_of(g_, dq->inputs[0]);
    if (t == nullptr || t->dtype() != DataType::kInt32 || t->dims().size() != 1)
      return std::nullopt;
    const size_t n = static_cast<size_t>(t->element_count());
    std::optional<std::vector<double>> s = scales(g_, dq->inputs[1], 1);
    if (!s) s = scales(g_, dq->inputs[1], n);
    if (!s) return std::nullopt;
    if (present(*dq, 2)) {
      std::optional<std::vector<int64_t>> z = int_constant(g_, dq->inputs[2]);
      if (!z) return std::nullopt;
      for (int64_t v : *z)
        if (v != 0) return std::nullopt;
    }
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<double>(t->as<int32_t>()[i]) * (*s)[s->size() == 1 ? 0 : i];
    return out;
  }

  ir::Graph& g_;
  const GraphIndex& index_;
  std::vector<bool>& remove_;
};

}  // namespace

Result<int> QdqConvFusion::apply(ir::Graph& graph, const PassContext& context) {
  return qdq::rewrite_each_node(
      graph, context, [&](const GraphIndex& index, ir::NodeId id, std::vector<bool>& remove) {
        return Matcher(graph, index, remove).try_fuse(id);
      });
}

}  // namespace infer::optimizer
