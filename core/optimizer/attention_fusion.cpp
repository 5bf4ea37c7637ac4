#include "optimizer/attention_fusion.hpp"

#include <cmath>
#include <optional>
#include <vector>

#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using Perm = std::vector<int64_t>;
const Perm kSplitPerm = {0, 2, 1, 3};        // [B,S,H,D] -> [B,H,S,D], and back
const Perm kSplitTransposed = {0, 2, 3, 1};  // [B,S,H,D] -> [B,H,D,S]
const Perm kSwapLast = {0, 1, 3, 2};

bool is_float_type(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kFloat64;
}

// One of q, k, v split into heads: Transpose(Reshape(input, [B, S, H, D]), perm).
struct Split {
  ir::ValueId input = ir::kNoValue;  // [B, S, H·D]
  int64_t heads = 0;
  int64_t head_dim = -1;  // -1: not known before run time
  std::vector<ir::NodeId> nodes;
};

// The chain from q and k to the (scaled) scores.
struct Scores {
  Split q, k;
  ir::NodeId matmul = ir::kNoNode;
  double scale = 1.0;
  DataType scale_dtype = DataType::kUndefined;  // kUndefined: no scale node
  std::vector<ir::NodeId> nodes;                // the MatMul and the scale node
};

class Matcher {
 public:
  Matcher(ir::Graph& graph, const GraphIndex& index, std::vector<bool>& used,
          std::vector<bool>& remove)
      : g_(graph), index_(index), used_(used), remove_(remove) {}

  bool try_fuse(ir::NodeId softmax_id) {
    const ir::Node& softmax = g_.node(softmax_id);
    if (softmax.inputs.size() != 1 || softmax.outputs.size() != 1) return false;
    // Opset >= 13 Softmax normalizes the one axis named; the scores have rank 4.
    const int64_t axis = softmax.attr_int("axis", -1);
    if (axis != -1 && axis != 3) return false;
    const ir::ValueId s3 = softmax.inputs[0];
    if (!index_.has_single_use(s3)) return false;

    // The scores, with or without an additive mask (either operand order).
    std::optional<Scores> scores;
    ir::ValueId mask = ir::kNoValue;
    ir::NodeId mask_add = ir::kNoNode;
    if (const ir::NodeId add = producer(s3, "Add"); add != ir::kNoNode) {
      for (int i = 0; i < 2 && !scores; ++i) {
        scores = match_scores(g_.node(add).inputs[i]);
        if (scores) mask = g_.node(add).inputs[1 - i];
      }
      mask_add = add;
    } else {
      scores = match_scores(s3);
    }
    if (!scores) return false;
    const Split& q = scores->q;
    const Split& k = scores->k;

    // p @ v4, then back to [B, Sq, H·Dv].
    const ir::ValueId p = softmax.outputs[0];
    const ir::NodeId mm2 = consumer(p, "MatMul");
    if (mm2 == ir::kNoNode || g_.node(mm2).inputs[0] != p) return false;
    const std::optional<Split> v = match_split(g_.node(mm2).inputs[1], kSplitPerm);
    if (!v) return false;
    const ir::NodeId merge = consumer(g_.node(mm2).outputs[0], "Transpose");
    if (merge == ir::kNoNode || attr_ints_or(g_.node(merge), "perm", {}) != kSplitPerm)
      return false;
    const ir::NodeId out_reshape = consumer(g_.node(merge).outputs[0], "Reshape");
    if (out_reshape == ir::kNoNode) return false;
    const auto out_shape = reshape_shape(g_.node(out_reshape));
    if (!out_shape || out_shape->size() != 3) return false;

    // q, k and v agree: one dtype, one head count, one batch (MatMul would broadcast a
    // batch of 1 against another; the fused kernel would not).
    const ir::Value& qv = g_.value(q.input);
    const ir::Value& kv = g_.value(k.input);
    const ir::Value& vv = g_.value(v->input);
    if (kv.dtype != qv.dtype || vv.dtype != qv.dtype) return false;
    if (scores->scale_dtype != DataType::kUndefined && scores->scale_dtype != qv.dtype)
      return false;
    if (k.heads != q.heads || v->heads != q.heads) return false;
    if (q.head_dim >= 0 && k.head_dim >= 0 && q.head_dim != k.head_dim) return false;
    const ir::Dim& batch = (*qv.shape.dims)[0];
    const ir::Dim& seq_q = (*qv.shape.dims)[1];
    const ir::Dim& seq_k = (*kv.shape.dims)[1];
    if (!same_dim(batch, (*kv.shape.dims)[0]) || !same_dim(batch, (*vv.shape.dims)[0]))
      return false;

    // The output Reshape must give [B, Sq, H·Dv], which is what Attention produces.
    if (!copies_dim((*out_shape)[0], batch) || !copies_dim((*out_shape)[1], seq_q)) return false;
    const int64_t hidden_v = v->head_dim >= 0 ? q.heads * v->head_dim : -1;
    if ((*out_shape)[2] != -1 && ((*out_shape)[2] != hidden_v || hidden_v < 0)) return false;

    if (mask != ir::kNoValue &&
        !mask_fits(mask, qv.dtype, {batch, ir::Dim::known(q.heads), seq_q, seq_k}))
      return false;

    // Everything matched: the output Reshape becomes the fused node.
    std::vector<ir::NodeId> absorbed = scores->nodes;
    for (const Split* s : {&q, &k, &*v})
      absorbed.insert(absorbed.end(), s->nodes.begin(), s->nodes.end());
    if (mask_add != ir::kNoNode) absorbed.push_back(mask_add);
    absorbed.insert(absorbed.end(), {softmax_id, mm2, merge});
    for (ir::NodeId id : absorbed)
      if (used_[id]) return false;

    ir::Node& fused = g_.node(out_reshape);
    fused.name = g_.node(scores->matmul).name;
    fused.op_type = "Attention";
    fused.domain = kFusedDomain;
    fused.inputs = {q.input, k.input, v->input};
    if (mask != ir::kNoValue) fused.inputs.push_back(mask);
    fused.attributes = {attr_int("num_heads", q.heads), attr_float("scale", scores->scale)};
    used_[out_reshape] = true;
    for (ir::NodeId id : absorbed) {
      used_[id] = true;
      remove_[id] = true;
    }
    return true;
  }

 private:
  bool usable(ir::NodeId id, const char* op) const {
    if (id == ir::kNoNode || used_[id]) return false;
    const ir::Node& n = g_.node(id);
    return n.op_type == op && n.domain.empty() && n.outputs.size() == 1 && !has_subgraphs(n);
  }

  // The producer of the single-use value `v` when it is an unclaimed default-domain `op`.
  ir::NodeId producer(ir::ValueId v, const char* op) const {
    if (!index_.has_single_use(v)) return ir::kNoNode;
    const ir::NodeId id = index_.producer_id(v);
    return usable(id, op) ? id : ir::kNoNode;
  }

  // The only reader of `v` when it is an unclaimed default-domain `op`.
  ir::NodeId consumer(ir::ValueId v, const char* op) const {
    if (!index_.has_single_use(v)) return ir::kNoNode;
    const ir::NodeId id = index_.consumers(v).front();
    return usable(id, op) ? id : ir::kNoNode;
  }

  // A Reshape's constant target shape, when allowzero is absent or 0 (with allowzero=1 a
  // 0 means an empty dim, not "copy the input dim").
  std::optional<std::vector<int64_t>> reshape_shape(const ir::Node& reshape) const {
    if (reshape.inputs.size() != 2 || reshape.attr_int("allowzero", 0) != 0) return std::nullopt;
    return int_constant(g_, reshape.inputs[1]);
  }

  // A Reshape shape entry that leaves `d` as it is: 0 (copy) or d's known size.
  static bool copies_dim(int64_t entry, const ir::Dim& d) {
    return entry == 0 || (entry > 0 && d.is_known() && d.value == entry);
  }

  // Transpose(Reshape(input, [0|B, 0|S, H, D|-1]), perm) read once, by the pattern.
  std::optional<Split> match_split(ir::ValueId split, const Perm& perm) const {
    const ir::NodeId transpose = producer(split, "Transpose");
    if (transpose == ir::kNoNode || attr_ints_or(g_.node(transpose), "perm", {}) != perm)
      return std::nullopt;
    const ir::NodeId reshape = producer(g_.node(transpose).inputs[0], "Reshape");
    if (reshape == ir::kNoNode) return std::nullopt;
    const auto shape = reshape_shape(g_.node(reshape));
    if (!shape || shape->size() != 4) return std::nullopt;
    Split s;
    s.input = g_.node(reshape).inputs[0];
    const ir::Value& in = g_.value(s.input);
    if (!is_float_type(in.dtype) || !in.shape.rank_known() || in.shape.rank() != 3)
      return std::nullopt;
    const auto& dims = *in.shape.dims;
    if (!copies_dim((*shape)[0], dims[0]) || !copies_dim((*shape)[1], dims[1])) return std::nullopt;
    s.heads = (*shape)[2];
    if (s.heads <= 0) return std::nullopt;
    const int64_t d = (*shape)[3];
    const ir::Dim& hidden = dims[2];
    if (d > 0) {
      if (hidden.is_known() && hidden.value != s.heads * d) return std::nullopt;
      s.head_dim = d;
    } else if (d == -1) {
      if (hidden.is_known()) {
        if (hidden.value % s.heads != 0) return std::nullopt;
        s.head_dim = hidden.value / s.heads;
      }
    } else {
      return std::nullopt;
    }
    s.nodes = {reshape, transpose};
    return s;
  }

  // MatMul(q4, kT), optionally scaled by a Div/Mul with a one-element constant.
  std::optional<Scores> match_scores(ir::ValueId scores) const {
    Scores out;
    ir::ValueId product = scores;
    if (const ir::NodeId div = producer(scores, "Div"); div != ir::kNoNode) {
      const auto c = scale_constant(g_.node(div).inputs[1]);
      if (!c || *c == 0.0) return std::nullopt;
      out.scale = 1.0 / *c;
      out.scale_dtype = g_.value(g_.node(div).inputs[1]).dtype;
      product = g_.node(div).inputs[0];
      out.nodes.push_back(div);
    } else if (const ir::NodeId mul = producer(scores, "Mul"); mul != ir::kNoNode) {
      const ir::Node& n = g_.node(mul);
      if (n.inputs.size() != 2) return std::nullopt;
      const int c_slot = scale_constant(n.inputs[1]) ? 1 : 0;
      const auto c = scale_constant(n.inputs[c_slot]);
      if (!c) return std::nullopt;
      out.scale = *c;
      out.scale_dtype = g_.value(n.inputs[c_slot]).dtype;
      product = n.inputs[1 - c_slot];
      out.nodes.push_back(mul);
    }
    out.matmul = producer(product, "MatMul");
    if (out.matmul == ir::kNoNode) return std::nullopt;
    out.nodes.push_back(out.matmul);
    const ir::Node& mm = g_.node(out.matmul);
    if (mm.inputs.size() != 2) return std::nullopt;
    auto q = match_split(mm.inputs[0], kSplitPerm);
    if (!q) return std::nullopt;
    // Kᵀ: one Transpose [0,2,3,1], or [0,2,1,3] then [0,1,3,2] when not yet merged.
    auto k = match_split(mm.inputs[1], kSplitTransposed);
    if (!k) {
      const ir::NodeId swap = producer(mm.inputs[1], "Transpose");
      if (swap == ir::kNoNode || attr_ints_or(g_.node(swap), "perm", {}) != kSwapLast)
        return std::nullopt;
      k = match_split(g_.node(swap).inputs[0], kSplitPerm);
      if (!k) return std::nullopt;
      k->nodes.push_back(swap);
    }
    out.q = std::move(*q);
    out.k = std::move(*k);
    return out;
  }

  // A finite one-element float constant of rank <= 4 (it cannot change the rank-4 score
  // shape); try_fuse checks its dtype against q's.
  std::optional<double> scale_constant(ir::ValueId v) const {
    const ir::TensorData* t = constant_of(g_, v);
    if (t == nullptr || !is_float_type(t->dtype()) || t->dims().size() > 4) return std::nullopt;
    const auto c = scalar_constant(g_, v);
    if (!c || !std::isfinite(*c)) return std::nullopt;
    return c;
  }

  // The mask broadcasts to the scores without enlarging them: rank <= 4 and, right-
  // aligned, every dim but the last is 1 or provably the score's dim. (The last one,
  // against Sk, the kernel checks at run time.)
  bool mask_fits(ir::ValueId mask, DataType dtype, const std::vector<ir::Dim>& score) const {
    const ir::Value& m = g_.value(mask);
    if (m.dtype != dtype || !m.shape.rank_known() || m.shape.rank() > 4) return false;
    const auto& dims = *m.shape.dims;
    const size_t offset = 4 - dims.size();
    for (size_t i = 0; i + 1 < dims.size(); ++i) {
      const ir::Dim& d = dims[i];
      if (!(d.is_known() && d.value == 1) && !same_dim(d, score[offset + i])) return false;
    }
    return true;
  }

  ir::Graph& g_;
  const GraphIndex& index_;
  std::vector<bool>& used_;
  std::vector<bool>& remove_;
};

}  // namespace

Result<int> AttentionFusion::apply(ir::Graph& graph, const PassContext& context) {
  if (context.opset() < 13) return 0;
  const GraphIndex index(graph);
  std::vector<bool> used(graph.node_count(), false);
  std::vector<bool> remove(graph.node_count(), false);
  Matcher matcher(graph, index, used, remove);
  int fused = 0;
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& n = graph.node(id);
    if (used[id] || n.op_type != "Softmax" || !n.domain.empty()) continue;
    if (matcher.try_fuse(id)) ++fused;
  }
  if (fused > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return fused;
}

}  // namespace infer::optimizer
