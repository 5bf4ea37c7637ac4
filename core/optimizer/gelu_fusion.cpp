#include "optimizer/gelu_fusion.hpp"

#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

constexpr double kSqrt2 = std::numbers::sqrt2;
constexpr double kInvSqrt2 = 1.0 / std::numbers::sqrt2;
// √(2/π), the tanh approximation's inner factor.
const double kSqrt2OverPi = std::sqrt(2.0 / std::numbers::pi);
constexpr double kCubeCoefficient = 0.044715;
// Exporters write these constants in float32 (0.044715 becomes 0.044714998...): compare
// them relatively. A float16 or bfloat16 constant cannot come that close (float16 holds
// √2 as 1.4140625, 1.1e-4 away), so those get about one rounding step of their type;
// the computation in that type is no more exact than that anyway.
double relative_tolerance(DataType constant_dtype) {
  switch (constant_dtype) {
    case DataType::kFloat16:
      return 1e-3;  // half an ulp is 2^-11 = 4.9e-4 relative
    case DataType::kBFloat16:
      return 8e-3;  // half an ulp is 2^-8 = 3.9e-3 relative
    default:
      return 1e-4;
  }
}

bool is_float_type(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kFloat64;
}

class Matcher {
 public:
  Matcher(ir::Graph& graph, const GraphIndex& index, std::vector<bool>& used,
          std::vector<bool>& remove)
      : g_(graph), index_(index), used_(used), remove_(remove) {}

  // Tries the erf form around the Erf node `id`, or the tanh form around the Tanh node.
  bool try_fuse(ir::NodeId id) {
    nodes_.clear();
    x_ = ir::kNoValue;
    const ir::Node& center = g_.node(id);
    if (center.inputs.size() != 1 || center.outputs.size() != 1) return false;
    const bool erf = center.op_type == "Erf";
    if (!(erf ? match_erf_argument(center.inputs[0]) : match_tanh_argument(center.inputs[0])))
      return false;
    nodes_.push_back(id);
    // a = Add(center, 1)
    const ir::NodeId add_id = consumer(center.outputs[0], "Add");
    if (add_id == ir::kNoNode || !is_const(other_operand(add_id, center.outputs[0]), 1.0))
      return false;
    nodes_.push_back(add_id);
    const ir::NodeId last = match_half_x_times(g_.node(add_id).outputs[0]);
    if (last == ir::kNoNode) return false;

    // The last Mul becomes the fused node, named after the Erf/Tanh; commit() sorts.
    ir::Node& fused = g_.node(last);
    fused.name = center.name;
    fused.op_type = "Gelu";
    fused.domain = kFusedDomain;
    fused.inputs = {x_};
    fused.attributes = {attr_string("approximate", erf ? "none" : "tanh")};
    used_[last] = true;
    for (ir::NodeId n : nodes_) {
      used_[n] = true;
      remove_[n] = true;
    }
    return true;
  }

 private:
  ir::NodeId producer(ir::ValueId v, const char* op) const {
    return sole_producer(g_, index_, v, op, used_);
  }
  ir::NodeId consumer(ir::ValueId v, const char* op) const {
    return sole_consumer(g_, index_, v, op, used_);
  }

  ir::ValueId other_operand(ir::NodeId id, ir::ValueId v) const {
    return optimizer::other_operand(g_.node(id), v);
  }

  // A one-element constant near `reference`. Unless `any_dtype` (Pow's exponent), it has
  // x's dtype. Its rank must not exceed x's (a scalar when x's rank is unknown), so the
  // broadcast leaves x's shape alone.
  bool is_const(ir::ValueId v, double reference, bool any_dtype = false) const {
    const ir::TensorData* t = constant_of(g_, v);
    const auto value = scalar_constant(g_, v);
    if (t == nullptr || !value || x_ == ir::kNoValue) return false;
    const ir::Value& x = g_.value(x_);
    if (!any_dtype && t->dtype() != x.dtype) return false;
    const size_t max_rank = x.shape.rank_known() ? x.shape.rank() : 0;
    if (t->dims().size() > max_rank) return false;
    return std::fabs(*value - reference) <= relative_tolerance(t->dtype()) * std::fabs(reference);
  }

  // Sets x_ to `v` when it is a float value: the first operand seen fixes x.
  bool set_x(ir::ValueId v) {
    if (v == ir::kNoValue || !is_float_type(g_.value(v).dtype)) return false;
    if (x_ != ir::kNoValue) return x_ == v;
    x_ = v;
    return true;
  }

  // Div(x, √2) or Mul(x, 1/√2) (either order).
  bool match_erf_argument(ir::ValueId u) {
    if (const ir::NodeId div = producer(u, "Div"); div != ir::kNoNode) {
      const ir::Node& n = g_.node(div);
      if (n.inputs.size() != 2 || !set_x(n.inputs[0]) || !is_const(n.inputs[1], kSqrt2))
        return false;
      nodes_.push_back(div);
      return true;
    }
    const ir::NodeId mul = producer(u, "Mul");
    if (mul == ir::kNoNode || g_.node(mul).inputs.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      const ir::ValueId candidate = g_.node(mul).inputs[i];
      x_ = ir::kNoValue;
      if (set_x(candidate) && is_const(g_.node(mul).inputs[1 - i], kInvSqrt2)) {
        nodes_.push_back(mul);
        return true;
      }
    }
    x_ = ir::kNoValue;
    return false;
  }

  // Mul(√(2/π), Add(x, Mul(0.044715, x³))), each in either order.
  bool match_tanh_argument(ir::ValueId w) {
    const ir::NodeId outer = producer(w, "Mul");
    if (outer == ir::kNoNode || g_.node(outer).inputs.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      const ir::ValueId inner = g_.node(outer).inputs[i];
      const ir::ValueId factor = g_.node(outer).inputs[1 - i];
      const size_t mark = nodes_.size();
      x_ = ir::kNoValue;
      // x is fixed inside the sum, so the factor is checked afterwards.
      if (match_tanh_sum(inner) && is_const(factor, kSqrt2OverPi)) {
        nodes_.push_back(outer);
        return true;
      }
      nodes_.resize(mark);
    }
    x_ = ir::kNoValue;
    return false;
  }

  // Add(x, Mul(0.044715, x³)), either order.
  bool match_tanh_sum(ir::ValueId inner) {
    const ir::NodeId add = producer(inner, "Add");
    if (add == ir::kNoNode || g_.node(add).inputs.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      const size_t mark = nodes_.size();
      x_ = ir::kNoValue;
      if (set_x(g_.node(add).inputs[i]) && match_cube_term(g_.node(add).inputs[1 - i])) {
        nodes_.push_back(add);
        return true;
      }
      nodes_.resize(mark);
    }
    x_ = ir::kNoValue;
    return false;
  }

  // Mul(0.044715, x³), either order; x is already fixed.
  bool match_cube_term(ir::ValueId term) {
    const ir::NodeId mul = producer(term, "Mul");
    if (mul == ir::kNoNode || g_.node(mul).inputs.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      const size_t mark = nodes_.size();
      if (is_const(g_.node(mul).inputs[1 - i], kCubeCoefficient) &&
          match_cube(g_.node(mul).inputs[i])) {
        nodes_.push_back(mul);
        return true;
      }
      nodes_.resize(mark);
    }
    return false;
  }

  // Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x).
  bool match_cube(ir::ValueId cube) {
    if (const ir::NodeId pow = producer(cube, "Pow"); pow != ir::kNoNode) {
      const ir::Node& n = g_.node(pow);
      if (n.inputs.size() != 2 || n.inputs[0] != x_ || !is_const(n.inputs[1], 3.0, true))
        return false;
      nodes_.push_back(pow);
      return true;
    }
    const ir::NodeId mul = producer(cube, "Mul");
    if (mul == ir::kNoNode || g_.node(mul).inputs.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      if (g_.node(mul).inputs[i] != x_) continue;
      const ir::NodeId square = producer(g_.node(mul).inputs[1 - i], "Mul");
      if (square == ir::kNoNode) continue;
      const ir::Node& s = g_.node(square);
      if (s.inputs.size() == 2 && s.inputs[0] == x_ && s.inputs[1] == x_) {
        nodes_.push_back(square);
        nodes_.push_back(mul);
        return true;
      }
    }
    return false;
  }

  // 0.5·x·a in torch's three groupings; returns the node producing the result (not
  // added to nodes_) or kNoNode.
  ir::NodeId match_half_x_times(ir::ValueId a) {
    const ir::NodeId first = consumer(a, "Mul");
    if (first == ir::kNoNode) return ir::kNoNode;
    const ir::ValueId other = other_operand(first, a);
    const ir::ValueId first_out = g_.node(first).outputs[0];
    if (other == x_) {  // Mul(Mul(x, a), 0.5)
      const ir::NodeId second = consumer(first_out, "Mul");
      if (second == ir::kNoNode || !is_const(other_operand(second, first_out), 0.5))
        return ir::kNoNode;
      nodes_.push_back(first);
      return second;
    }
    if (is_const(other, 0.5)) {  // Mul(x, Mul(a, 0.5))
      const ir::NodeId second = consumer(first_out, "Mul");
      if (second == ir::kNoNode || other_operand(second, first_out) != x_) return ir::kNoNode;
      nodes_.push_back(first);
      return second;
    }
    // Mul(Mul(x, 0.5), a)
    const ir::NodeId half = producer(other, "Mul");
    if (half == ir::kNoNode || !is_const(other_operand(half, x_), 0.5)) return ir::kNoNode;
    nodes_.push_back(half);
    return first;
  }

  ir::Graph& g_;
  const GraphIndex& index_;
  std::vector<bool>& used_;
  std::vector<bool>& remove_;
  ir::ValueId x_ = ir::kNoValue;
  std::vector<ir::NodeId> nodes_;  // matched nodes to remove
};

}  // namespace

Result<int> GeluFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (context.opset() < 13) return 0;
  const GraphIndex index(graph);
  std::vector<bool> used(graph.node_count(), false);
  std::vector<bool> remove(graph.node_count(), false);
  Matcher matcher(graph, index, used, remove);
  int fused = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& n = graph.node(id);
    if (used[id] || !n.domain.empty() || (n.op_type != "Erf" && n.op_type != "Tanh")) continue;
    if (matcher.try_fuse(id)) ++fused;
  }
  if (fused > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer
