#include "optimizer/conv_bn_folding.hpp"

#include <cmath>
#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// True when output `i` of `node` is absent or nobody can observe it.
bool output_unused(const GraphIndex& index, const ir::Node& node, size_t i) {
  if (i >= node.outputs.size() || node.outputs[i] == ir::kNoValue) return true;
  const ir::ValueId v = node.outputs[i];
  return index.consumers(v).empty() && !index.is_graph_output(v) && !index.is_captured(v);
}

// A Conv-like node whose bias can absorb an affine per-channel transform of its output.
bool foldable_producer(const ir::Node& conv) {
  if (is_onnx_op(conv, "Conv")) return true;
  // A FusedConv applies its activation and adds Z after the bias: neither commutes with
  // the BatchNormalization's scale, so only the plain form folds.
  if (!is_fused_op(conv, "FusedConv") || has_activation(conv)) return false;
  return conv.inputs.size() < 4 || conv.inputs[3] == ir::kNoValue;
}

// Per-channel BatchNormalization parameters, each `channels` long, or nullopt.
std::optional<std::vector<double>> channel_param(const ir::Graph& graph, ir::ValueId v,
                                                 int64_t channels) {
  std::optional<std::vector<double>> p = float_constant(graph, v);
  if (!p || static_cast<int64_t>(p->size()) != channels) return std::nullopt;
  return p;
}

// The Conv's constant weight (of dtype dt, rank >= 3) and its bias as one value per output
// channel (zeros when it has none), or nullopt when either is not such a constant.
struct ConvConstants {
  const ir::TensorData* w = nullptr;
  int64_t channels = 0;
  bool has_bias = false;
  std::vector<double> bias;
};
std::optional<ConvConstants> conv_constants(const ir::Graph& graph, const ir::Node& conv,
                                            DataType dt) {
  if (conv.inputs.size() < 2) return std::nullopt;
  ConvConstants k;
  k.w = constant_of(graph, conv.inputs[1]);
  if (k.w == nullptr || k.w->dtype() != dt || k.w->dims().size() < 3) return std::nullopt;
  k.channels = k.w->dims()[0];
  if (k.channels <= 0) return std::nullopt;
  k.bias.assign(static_cast<size_t>(k.channels), 0.0);
  k.has_bias = conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue;
  if (k.has_bias) {
    const ir::TensorData* b = constant_of(graph, conv.inputs[2]);
    if (b == nullptr || b->dtype() != dt) return std::nullopt;
    std::optional<std::vector<double>> values = channel_param(graph, conv.inputs[2], k.channels);
    if (!values) return std::nullopt;
    k.bias = *values;
  }
  return k;
}

// conv becomes W'[m, ...] = W[m, ...] * factor[m] (computed in double, stored in W's
// dtype) with bias new_bias (none when null), writing y. New constants named with
// `suffix`: the originals may be shared with other nodes. False (changing nothing) when
// W cannot be scaled.
bool rewrite_scaled(ir::Graph& graph, ir::Node& conv, const ConvConstants& k,
                    const std::vector<double>& factor, const std::vector<double>* new_bias,
                    ir::ValueId y, const std::string& suffix) {
  ir::TensorDataPtr folded = scale_outer_slices(*k.w, factor);
  if (!folded) return false;
  const std::string& w_name = graph.value(conv.inputs[1]).name;
  conv.inputs[1] = add_constant(graph, w_name + suffix, std::move(folded));
  if (new_bias != nullptr) {
    if (conv.inputs.size() < 3) conv.inputs.resize(3, ir::kNoValue);
    conv.inputs[2] = add_constant(graph, conv.name + "_bias" + suffix,
                                  make_float_tensor(k.w->dtype(), {k.channels}, *new_bias));
  }
  conv.outputs[0] = y;
  return true;
}

// Folds bn into conv when the pattern holds; returns false (changing nothing) otherwise.
bool try_fold(ir::Graph& graph, const GraphIndex& index, ir::Node& conv, const ir::Node& bn) {
  if (bn.inputs.size() != 5 || bn.outputs.empty() || bn.outputs[0] == ir::kNoValue) return false;
  if (bn.attr_int("training_mode", 0) != 0) return false;
  // BatchNormalization-7 and older could normalize per element (spatial = 0).
  if (bn.attr_int("spatial", 1) != 1) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (!output_unused(index, bn, i)) return false;

  const ir::ValueId x = bn.inputs[0];
  if (conv.outputs.size() != 1 || conv.outputs[0] != x || !index.has_single_use(x)) return false;
  const ir::ValueId y = bn.outputs[0];
  const DataType dt = graph.value(x).dtype;
  if (!is_fusion_float(dt) || graph.value(y).dtype != dt) return false;
  const std::optional<ConvConstants> k = conv_constants(graph, conv, dt);
  if (!k) return false;
  const int64_t channels = k->channels;

  auto scale = channel_param(graph, bn.inputs[1], channels);
  auto shift = channel_param(graph, bn.inputs[2], channels);
  auto mean = channel_param(graph, bn.inputs[3], channels);
  auto var = channel_param(graph, bn.inputs[4], channels);
  if (!scale || !shift || !mean || !var) return false;
  const double epsilon = bn.attr_float("epsilon", 1e-5);

  std::vector<double> factor(static_cast<size_t>(channels));
  std::vector<double> new_bias(static_cast<size_t>(channels));
  for (size_t m = 0; m < static_cast<size_t>(channels); ++m) {
    const double denom = (*var)[m] + epsilon;
    if (!(denom > 0)) return false;  // a negative variance has no real folding
    factor[m] = (*scale)[m] / std::sqrt(denom);
    new_bias[m] = (k->bias[m] - (*mean)[m]) * factor[m] + (*shift)[m];
  }
  return rewrite_scaled(graph, conv, *k, factor, &new_bias, y, "_bn_folded");
}

// Folds Mul(conv output, c) (either order), c a constant of one value per output channel,
// into conv: W' = W * c[m], B' = B * c[m]. Returns false (changing nothing) otherwise.
bool try_fold_scale(ir::Graph& graph, const GraphIndex& index, ir::Node& conv,
                    const ir::Node& mul) {
  if (mul.inputs.size() != 2 || mul.outputs.size() != 1 || mul.outputs[0] == ir::kNoValue)
    return false;
  if (conv.outputs.size() != 1) return false;
  const ir::ValueId x = conv.outputs[0];
  if (!index.has_single_use(x)) return false;
  if ((mul.inputs[0] == x) == (mul.inputs[1] == x)) return false;
  const ir::ValueId c = mul.inputs[0] == x ? mul.inputs[1] : mul.inputs[0];
  const ir::ValueId y = mul.outputs[0];
  const DataType dt = graph.value(x).dtype;
  if (!is_fusion_float(dt) || graph.value(y).dtype != dt) return false;
  const ir::TensorData* ct = constant_of(graph, c);
  if (ct == nullptr || ct->dtype() != dt) return false;
  const std::optional<ConvConstants> k = conv_constants(graph, conv, dt);
  if (!k) return false;
  std::optional<std::vector<double>> factor =
      per_channel_constant(graph, c, k->w->dims().size(), k->channels);
  if (!factor) return false;
  std::vector<double> new_bias = k->bias;
  for (size_t m = 0; m < new_bias.size(); ++m) new_bias[m] *= (*factor)[m];
  return rewrite_scaled(graph, conv, *k, *factor, k->has_bias ? &new_bias : nullptr, y,
                        "_scale_folded");
}

}  // namespace

Result<int> ConvBnFolding::apply(ir::Graph& graph, const PassContext& context) {
  if (!fusions_enabled(context)) return 0;
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int folded = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& bn = graph.node(id);
    if (is_onnx_op(bn, "Mul") && bn.inputs.size() == 2) {
      // A per-channel (or scalar) scale: BatchNormalization written as Mul and Add (the
      // Add then becomes the bias in conv_add_fusion), or MobileOne's branch scale.
      for (ir::ValueId in : bn.inputs) {
        const ir::NodeId conv_id = index.producer_id(in);
        if (conv_id == ir::kNoNode || !foldable_producer(graph.node(conv_id)) || remove[id])
          continue;
        if (!try_fold_scale(graph, index, graph.node(conv_id), bn)) continue;
        remove[id] = true;
        ++folded;
      }
      continue;
    }
    if (!is_onnx_op(bn, "BatchNormalization") || bn.inputs.empty()) continue;
    const ir::NodeId conv_id = index.producer_id(bn.inputs[0]);
    if (conv_id == ir::kNoNode || !foldable_producer(graph.node(conv_id))) continue;
    if (!try_fold(graph, index, graph.node(conv_id), bn)) continue;
    remove[id] = true;
    ++folded;
  }
  if (folded == 0) return 0;
  INFER_RETURN_IF_ERROR(commit(graph, remove));
  return folded;
}

}  // namespace infer::optimizer
