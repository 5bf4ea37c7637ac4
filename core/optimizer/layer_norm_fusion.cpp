#include "optimizer/layer_norm_fusion.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

bool is_float_type(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kFloat64;
}

// The axes ReduceMean reduces over: the attribute below opset 18, the constant second
// input from 18 on. nullopt when absent (reduce all), not constant, or keepdims is 0:
// the decomposition always keeps the reduced dims.
std::optional<std::vector<int64_t>> reduce_axes(const ir::Graph& graph, const ir::Node& n,
                                                int64_t opset) {
  if (n.attr_int("keepdims", 1) != 1 || n.inputs.empty()) return std::nullopt;
  std::vector<int64_t> axes;
  if (opset < 18) {
    if (n.inputs.size() != 1 || n.attr("axes") == nullptr) return std::nullopt;
    axes = n.attr("axes")->ints;
  } else {
    if (n.inputs.size() != 2) return std::nullopt;
    auto c = int_constant(graph, n.inputs[1]);
    if (!c) return std::nullopt;
    axes = *c;
  }
  if (axes.empty()) return std::nullopt;
  return axes;
}

// The reduced axes, made non-negative and sorted, when they are the trailing consecutive
// axes of a rank-`rank` tensor (the only normalization LayerNormalization expresses).
std::optional<std::vector<int64_t>> trailing_axes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i))
      return std::nullopt;
  return axes;
}

// A constant of `dtype` whose dims are exactly `dims`.
bool is_constant_of_shape(const ir::Graph& graph, ir::ValueId v, DataType dtype,
                          const std::vector<int64_t>& dims) {
  const ir::TensorData* t = constant_of(graph, v);
  return t != nullptr && t->dtype() == dtype && t->dims() == dims;
}

class Matcher {
 public:
  Matcher(ir::Graph& graph, const GraphIndex& index, const PassContext& context,
          std::vector<bool>& used, std::vector<bool>& remove)
      : g_(graph), index_(index), ctx_(context), used_(used), remove_(remove) {}

  // Tries the pattern anchored at the ReduceMean `mean_id`; rewrites it on success.
  bool try_fuse(ir::NodeId mean_id) {
    const ir::Node& rm1 = g_.node(mean_id);
    if (rm1.outputs.size() != 1) return false;
    const ir::ValueId x = rm1.inputs[0];
    if (x == ir::kNoValue) return false;
    const ir::Value& xv = g_.value(x);
    if (!is_float_type(xv.dtype) || !xv.shape.rank_known() || xv.shape.rank() == 0) return false;
    const auto rank = static_cast<int64_t>(xv.shape.rank());
    const auto axes1 = reduce_axes(g_, rm1, ctx_.opset());
    if (!axes1) return false;
    const auto norm = trailing_axes(*axes1, rank);
    if (!norm) return false;
    // The normalized dims must be known: scale and bias are checked against them, and a
    // size-1 dim would let scale/bias broadcast the output to a shape LayerNormalization
    // does not produce.
    std::vector<int64_t> norm_dims;
    for (int64_t a : *norm) {
      const ir::Dim& d = (*xv.shape.dims)[static_cast<size_t>(a)];
      if (!d.is_known()) return false;
      norm_dims.push_back(d.value);
    }
    // LayerNormalization's axis is the first normalized axis, written as the model wrote it.
    int64_t axis = (*norm)[0];
    for (int64_t a : *axes1)
      if (a == axis - rank) axis = a;

    const ir::ValueId mean = rm1.outputs[0];
    const ir::NodeId sub_id = sole_consumer(g_, index_, mean, "Sub", used_);
    if (sub_id == ir::kNoNode) return false;
    const ir::Node& sub = g_.node(sub_id);
    if (sub.inputs.size() != 2 || sub.inputs[0] != x || sub.inputs[1] != mean) return false;
    const ir::ValueId d = sub.outputs[0];

    // d feeds the square and the Div, and nothing else.
    if (index_.is_graph_output(d) || index_.is_captured(d)) return false;
    const auto& readers = index_.consumers(d);
    if (readers.size() != 2) return false;
    ir::NodeId sq_id = ir::kNoNode;
    ir::NodeId div_id = ir::kNoNode;
    for (ir::NodeId r : readers) {
      const ir::Node& n = g_.node(r);
      if (used_[r] || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1)
        return false;
      if (n.op_type == "Div" && n.inputs[0] == d && n.inputs[1] != d) {
        div_id = r;
      } else if (n.op_type == "Mul" && n.inputs[0] == d && n.inputs[1] == d) {
        sq_id = r;
      } else if (n.op_type == "Pow" && n.inputs[0] == d && n.inputs[1] != d) {
        const ir::TensorData* e = constant_of(g_, n.inputs[1]);
        const auto exponent = scalar_constant(g_, n.inputs[1]);
        if (!exponent || *exponent != 2.0 || static_cast<int64_t>(e->dims().size()) > rank)
          return false;
        sq_id = r;
      } else {
        return false;
      }
    }
    if (sq_id == ir::kNoNode || div_id == ir::kNoNode) return false;

    const ir::NodeId rm2_id =
        sole_consumer(g_, index_, g_.node(sq_id).outputs[0], "ReduceMean", used_);
    if (rm2_id == ir::kNoNode) return false;
    const auto axes2 = reduce_axes(g_, g_.node(rm2_id), ctx_.opset());
    if (!axes2 || trailing_axes(*axes2, rank) != norm) return false;

    const ir::ValueId var = g_.node(rm2_id).outputs[0];
    const ir::NodeId eps_id = sole_consumer(g_, index_, var, "Add", used_);
    if (eps_id == ir::kNoNode) return false;
    const ir::ValueId eps_value = other_operand(g_.node(eps_id), var);
    const ir::TensorData* eps_data = constant_of(g_, eps_value);
    const auto eps = scalar_constant(g_, eps_value);
    if (!eps || eps_data->dtype() != xv.dtype ||
        static_cast<int64_t>(eps_data->dims().size()) > rank || !(*eps >= 0))
      return false;

    const ir::NodeId sqrt_id = sole_consumer(g_, index_, g_.node(eps_id).outputs[0], "Sqrt", used_);
    if (sqrt_id == ir::kNoNode) return false;
    const ir::ValueId stddev = g_.node(sqrt_id).outputs[0];
    if (!index_.has_single_use(stddev) || g_.node(div_id).inputs[1] != stddev) return false;

    std::vector<ir::NodeId> absorbed = {sub_id, sq_id, rm2_id, eps_id, sqrt_id, div_id};
    ir::ValueId y = g_.node(div_id).outputs[0];

    // Optional scale, then optional bias: constants of the normalized shape.
    ir::ValueId scale = ir::kNoValue;
    if (const ir::NodeId mul_id = sole_consumer(g_, index_, y, "Mul", used_);
        mul_id != ir::kNoNode) {
      const ir::ValueId c = other_operand(g_.node(mul_id), y);
      if (is_constant_of_shape(g_, c, xv.dtype, norm_dims)) {
        scale = c;
        absorbed.push_back(mul_id);
        y = g_.node(mul_id).outputs[0];
      }
    }
    ir::ValueId bias = ir::kNoValue;
    if (const ir::NodeId add_id = sole_consumer(g_, index_, y, "Add", used_);
        add_id != ir::kNoNode) {
      const ir::ValueId c = other_operand(g_.node(add_id), y);
      if (is_constant_of_shape(g_, c, xv.dtype, norm_dims)) {
        bias = c;
        absorbed.push_back(add_id);
        y = g_.node(add_id).outputs[0];
      }
    }
    if (scale == ir::kNoValue) {
      // LayerNormalization requires a scale: a plain normalization multiplies by ones.
      int64_t count = 1;
      for (int64_t n : norm_dims) count *= n;
      scale = add_constant(g_, g_.value(x).name + "_layer_norm_scale",
                           make_float_tensor(xv.dtype, norm_dims,
                                             std::vector<double>(static_cast<size_t>(count), 1.0)));
    }

    // The first ReduceMean becomes the fused node (keeping its name); commit() moves it
    // after whatever it now reads.
    ir::Node& fused = g_.node(mean_id);
    fused.op_type = "LayerNormalization";
    fused.domain = ctx_.opset() >= 17 ? "" : kFusedDomain;
    fused.inputs = {x, scale};
    if (bias != ir::kNoValue) fused.inputs.push_back(bias);
    fused.outputs = {y};
    fused.attributes = {attr_int("axis", axis), attr_float("epsilon", *eps)};
    used_[mean_id] = true;
    for (ir::NodeId id : absorbed) {
      used_[id] = true;
      remove_[id] = true;
    }
    return true;
  }

 private:
  ir::Graph& g_;
  const GraphIndex& index_;
  const PassContext& ctx_;
  std::vector<bool>& used_;
  std::vector<bool>& remove_;
};

}  // namespace

Result<int> LayerNormFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (context.opset() < 13) return 0;
  const GraphIndex index(graph);
  std::vector<bool> used(graph.node_count(), false);
  std::vector<bool> remove(graph.node_count(), false);
  Matcher matcher(graph, index, context, used, remove);
  int fused = 0;
  // Indexing (not a range-for): a match mutates nodes in place and may add constants.
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& n = graph.node(id);
    if (used[id] || n.op_type != "ReduceMean" || !n.domain.empty()) continue;
    if (matcher.try_fuse(id)) ++fused;
  }
  if (fused > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer
