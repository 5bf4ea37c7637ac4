#include "optimizer/hardswish_fusion.hpp"

#include <cmath>
#include <optional>
#include <vector>

#include "optimizer/fused_activation.hpp"
#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

double relative_tolerance(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return 1e-3;
    case DataType::kBFloat16:
      return 8e-3;
    default:
      return 1e-4;
  }
}

class Matcher {
 public:
  Matcher(const ir::Graph& graph, const GraphIndex& index, const std::vector<bool>& used)
      : g_(graph), index_(index), used_(used) {}

  // The chain around `center` (a Clip or a HardSigmoid), or false. On success x(), nodes()
  // (every matched node, the last one producing y) are set.
  bool match(ir::NodeId center) {
    nodes_.clear();
    x_ = ir::kNoValue;
    const ir::Node& c = g_.node(center);
    if (c.outputs.size() != 1 || c.inputs.empty()) return false;
    ir::ValueId gate = c.outputs[0];
    if (c.op_type == "HardSigmoid") {
      if (c.inputs.size() != 1 || !near(c.attr_float("alpha", 0.2), 1.0 / 6, DataType::kFloat32) ||
          !near(c.attr_float("beta", 0.5), 0.5, DataType::kFloat32) || !set_x(c.inputs[0]))
        return false;
      nodes_.push_back(center);
      const ir::NodeId mul = consumer(gate, "Mul");
      if (mul == ir::kNoNode || other_operand(mul, gate) != x_) return false;
      nodes_.push_back(mul);
      return true;
    }
    // Clip(Add(x, 3), 0, 6).
    const std::optional<FusedActivation> bounds = match_activation(g_, c);
    if (!bounds || bounds->name != "Clip" || bounds->params[0] != 0.0 ||
        !near(bounds->params[1], 6.0, DataType::kFloat32))
      return false;
    const ir::NodeId add = producer(c.inputs[0], "Add");
    if (add == ir::kNoNode) return false;
    const ir::Node& a = g_.node(add);
    if (a.inputs.size() != 2) return false;
    bool found = false;
    for (int i = 0; i < 2 && !found; ++i) {
      x_ = ir::kNoValue;
      found = set_x(a.inputs[i]) && is_const(a.inputs[1 - i], 3.0);
    }
    if (!found) return false;
    nodes_.push_back(add);
    nodes_.push_back(center);
    // Then x * c / 6 in one of four groupings.
    const ir::NodeId first = consumer(gate, "Mul");
    if (first != ir::kNoNode && other_operand(first, gate) == x_) {
      const ir::ValueId m = g_.node(first).outputs[0];
      const ir::NodeId last = scale_by_sixth(m);
      if (last == ir::kNoNode) return false;
      nodes_.push_back(first);
      nodes_.push_back(last);
      return true;
    }
    const ir::NodeId scale = scale_by_sixth(gate);
    if (scale == ir::kNoNode) return false;
    const ir::ValueId d = g_.node(scale).outputs[0];
    const ir::NodeId last = consumer(d, "Mul");
    if (last == ir::kNoNode || other_operand(last, d) != x_) return false;
    nodes_.push_back(scale);
    nodes_.push_back(last);
    return true;
  }

  ir::ValueId x() const { return x_; }
  const std::vector<ir::NodeId>& nodes() const { return nodes_; }

 private:
  bool near(double value, double reference, DataType dtype) const {
    return std::fabs(value - reference) <= relative_tolerance(dtype) * std::fabs(reference);
  }

  ir::NodeId consumer(ir::ValueId v, const char* op) const {
    return sole_consumer(g_, index_, v, op, used_);
  }
  ir::NodeId producer(ir::ValueId v, const char* op) const {
    return sole_producer(g_, index_, v, op, used_);
  }

  ir::ValueId other_operand(ir::NodeId id, ir::ValueId v) const {
    return optimizer::other_operand(g_.node(id), v);
  }

  // Div(v, 6) or Mul(v, 1/6) (either order) reading v alone: the node, or kNoNode.
  ir::NodeId scale_by_sixth(ir::ValueId v) const {
    if (const ir::NodeId div = consumer(v, "Div"); div != ir::kNoNode) {
      const ir::Node& n = g_.node(div);
      return n.inputs.size() == 2 && n.inputs[0] == v && is_const(n.inputs[1], 6.0) ? div
                                                                                    : ir::kNoNode;
    }
    const ir::NodeId mul = consumer(v, "Mul");
    if (mul == ir::kNoNode || !is_const(other_operand(mul, v), 1.0 / 6)) return ir::kNoNode;
    return mul;
  }

  // A one-element constant of x's dtype, no higher in rank than x, near `reference`.
  bool is_const(ir::ValueId v, double reference) const {
    if (v == ir::kNoValue || x_ == ir::kNoValue) return false;
    const ir::TensorData* t = constant_of(g_, v);
    const std::optional<double> value = scalar_constant(g_, v);
    if (t == nullptr || !value) return false;
    const ir::Value& x = g_.value(x_);
    if (t->dtype() != x.dtype) return false;
    const size_t max_rank = x.shape.rank_known() ? x.shape.rank() : 0;
    if (t->dims().size() > max_rank) return false;
    return near(*value, reference, t->dtype());
  }

  bool set_x(ir::ValueId v) {
    if (v == ir::kNoValue || !is_fusion_float(g_.value(v).dtype)) return false;
    if (x_ != ir::kNoValue) return x_ == v;
    x_ = v;
    return true;
  }

  const ir::Graph& g_;
  const GraphIndex& index_;
  const std::vector<bool>& used_;
  ir::ValueId x_ = ir::kNoValue;
  std::vector<ir::NodeId> nodes_;
};

}  // namespace

Result<int> HardSwishFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (!fusions_enabled(context)) return 0;
  const bool onnx_hardswish = context.opset("") >= 14;
  const GraphIndex index(graph);
  std::vector<bool> used(graph.node_count(), false);
  std::vector<bool> remove(graph.node_count(), false);
  Matcher matcher(graph, index, used);
  int fused = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& center = graph.node(id);
    if (used[id] || !center.domain.empty() || has_subgraphs(center) ||
        (center.op_type != "Clip" && center.op_type != "HardSigmoid"))
      continue;
    if (!matcher.match(id)) continue;
    const ir::ValueId x = matcher.x();
    const std::vector<ir::NodeId>& nodes = matcher.nodes();
    const ir::NodeId last = nodes.back();
    const ir::ValueId y = graph.node(last).outputs[0];
    if (graph.value(y).dtype != graph.value(x).dtype) continue;
    if (onnx_hardswish) {
      ir::Node& hs = graph.node(last);
      hs.op_type = "HardSwish";
      hs.inputs = {x};
      hs.attributes.clear();
      for (ir::NodeId n : nodes) {
        used[n] = true;
        if (n != last) remove[n] = true;
      }
      ++fused;
      continue;
    }
    // Below opset 14: into x's producer, when only the chain reads x (its first node and
    // the Mul by x).
    const ir::NodeId anchor_id = index.producer_id(x);
    if (anchor_id == ir::kNoNode || used[anchor_id]) continue;
    ir::Node& anchor = graph.node(anchor_id);
    const char* fused_op = fused_form_of(anchor);
    if (fused_op == nullptr || anchor.outputs[0] != x) continue;
    if (index.is_graph_output(x) || index.is_captured(x) || index.consumers(x).size() != 2)
      continue;
    anchor.op_type = fused_op;
    anchor.domain = kFusedDomain;
    set_activation(anchor, FusedActivation{"HardSwish", {}});
    anchor.outputs[0] = y;
    used[anchor_id] = true;
    for (ir::NodeId n : nodes) {
      used[n] = true;
      remove[n] = true;
    }
    ++fused;
  }
  if (fused > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer
