#include "optimizer/transpose_optimization.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using Perm = std::vector<int64_t>;

// A pass application repeats its sweeps while they change something; every rewrite
// removes a Transpose or moves one closer to the outputs, so this cap only guards
// against a bug turning into a hang.
constexpr int kMaxSweeps = 64;

// Operators computing each output element from the same-position input element alone, so
// that U(Transpose(x)) == Transpose(U(x)). Extra inputs, where the op has any (Clip's
// bounds), are scalars.
const std::set<std::string>& unary_elementwise() {
  static const std::set<std::string> kOps = {
      "Abs",       "Acos",     "Acosh", "Asin",       "Asinh",          "Atan",
      "Atanh",     "Cast",     "Ceil",  "Celu",       "Clip",           "Cos",
      "Cosh",      "Elu",      "Erf",   "Exp",        "Floor",          "HardSigmoid",
      "HardSwish", "Identity", "IsInf", "IsNaN",      "LeakyRelu",      "Log",
      "Mish",      "Neg",      "Not",   "Reciprocal", "Relu",           "Round",
      "Selu",      "Sigmoid",  "Sign",  "Sin",        "Sinh",           "Softplus",
      "Softsign",  "Sqrt",     "Tan",   "Tanh",       "ThresholdedRelu"};
  return kOps;
}

const std::set<std::string>& binary_elementwise() {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  return kOps;
}

bool is_onnx(const ir::Node& node) { return node.domain.empty() && !has_subgraphs(node); }

bool is_permutation(const Perm& p) {
  std::vector<bool> seen(p.size(), false);
  for (int64_t v : p) {
    if (v < 0 || v >= static_cast<int64_t>(p.size()) || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}

bool is_identity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Perm inverse(const Perm& p) {
  Perm inv(p.size());
  for (size_t j = 0; j < p.size(); ++j) inv[p[j]] = static_cast<int64_t>(j);
  return inv;
}

// The perm of a well-formed Transpose node, or nullopt.
std::optional<Perm> transpose_perm(const ir::Graph& graph, const ir::Node& node) {
  if (!is_onnx(node) || node.op_type != "Transpose") return std::nullopt;
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return std::nullopt;
  if (node.inputs[0] == ir::kNoValue || node.outputs[0] == ir::kNoValue) return std::nullopt;
  Perm perm;
  if (const ir::Attribute* a = node.attr("perm")) {
    perm = a->ints;
  } else {
    // The default reverses the dims, which needs the input's rank.
    const ir::Shape& s = graph.value(node.inputs[0]).shape;
    if (!s.rank_known()) return std::nullopt;
    perm.resize(s.rank());
    std::iota(perm.rbegin(), perm.rend(), int64_t{0});
  }
  if (!is_permutation(perm)) return std::nullopt;
  return perm;
}

// The shape of m where Transpose(m, p) has shape `out`: m.dims[p[j]] = out.dims[j].
ir::Shape untransposed_shape(const ir::Shape& out, const Perm& p) {
  if (!out.rank_known() || out.rank() != p.size()) return ir::Shape{};
  std::vector<ir::Dim> dims(p.size());
  for (size_t j = 0; j < p.size(); ++j) dims[p[j]] = (*out.dims)[j];
  ir::Shape s;
  s.dims = std::move(dims);
  return s;
}

// A value every permutation of rank `rank` leaves alone under broadcasting: rank at most
// `rank` and every dim 1 (a scalar included).
bool layout_free(const ir::Shape& s, size_t rank) {
  if (!s.rank_known() || s.rank() > rank) return false;
  for (const ir::Dim& d : *s.dims)
    if (d.value != 1) return false;
  return true;
}

class Sweep {
 public:
  Sweep(ir::Graph& graph, const PassContext& context)
      : graph_(graph),
        context_(context),
        index_(graph),
        touched_(graph.node_count(), false),
        remove_(graph.node_count(), false) {}

  int run() {
    int rewrites = 0;
    for (ir::NodeId id = 0; id < graph_.node_count(); ++id) {
      if (touched_[id]) continue;
      if (try_transpose(id) || try_unary(id) || try_binary(id)) ++rewrites;
    }
    return rewrites;
  }
  const std::vector<bool>& removed() const { return remove_; }

 private:
  // The Transpose producing `v` and its perm, when no rewrite of this sweep touched it.
  std::optional<std::pair<ir::NodeId, Perm>> transpose_producing(ir::ValueId v) const {
    const ir::NodeId p = index_.producer_id(v);
    if (p == ir::kNoNode || touched_[p]) return std::nullopt;
    std::optional<Perm> perm = transpose_perm(graph_, graph_.node(p));
    if (!perm) return std::nullopt;
    return std::make_pair(p, *perm);
  }

  // False when dropping Transpose `id` in favour of `source` must wait for the next
  // sweep: bypass() may hand the output's name to `source`'s producer, and that producer
  // must still be as the index describes it.
  bool can_drop_now(ir::NodeId id, ir::ValueId source) const {
    const ir::ValueId out = graph_.node(id).outputs[0];
    if (!index_.is_graph_output(out) && !index_.is_captured(out)) return true;
    const ir::NodeId p = index_.producer_id(source);
    return p == ir::kNoNode || !touched_[p];
  }

  // Removes Transpose `id`, whose output equals `source` (can_drop_now holds). Falls back
  // to an Identity when the output's name must survive and cannot move onto `source`'s
  // producer (e.g. a graph input forwarded to a graph output).
  void drop_transpose(ir::NodeId id, ir::ValueId source) {
    ir::Node& node = graph_.node(id);
    const ir::ValueId out = node.outputs[0];
    const ir::NodeId source_producer = index_.producer_id(source);
    if (bypass(graph_, index_, source, out)) {
      remove_[id] = true;
    } else {
      node.op_type = "Identity";
      node.inputs = {source};
      node.attributes.clear();
    }
    touched_[id] = true;
    if (source_producer != ir::kNoNode) touched_[source_producer] = true;
  }

  // Rule 1: a Transpose of a Transpose, or an identity Transpose.
  bool try_transpose(ir::NodeId id) {
    std::optional<Perm> p2 = transpose_perm(graph_, graph_.node(id));
    if (!p2) return false;
    const ir::ValueId in = graph_.node(id).inputs[0];
    if (is_identity(*p2)) {
      if (!can_drop_now(id, in)) return false;
      drop_transpose(id, in);
      return true;
    }
    auto inner = transpose_producing(in);
    if (!inner || inner->second.size() != p2->size()) return false;
    const auto& [inner_id, p1] = *inner;
    Perm q(p2->size());
    for (size_t j = 0; j < q.size(); ++j) q[j] = p1[(*p2)[j]];
    const ir::ValueId source = graph_.node(inner_id).inputs[0];
    if (is_identity(q) && !can_drop_now(id, source)) return false;
    // The inner Transpose goes when this node was its only reader.
    if (index_.has_single_use(in)) {
      remove_[inner_id] = true;
      touched_[inner_id] = true;
    }
    if (is_identity(q)) {
      drop_transpose(id, source);
    } else {
      ir::Node& node = graph_.node(id);
      node.inputs[0] = source;
      set_attr(node, attr_ints("perm", q));
      touched_[id] = true;
    }
    return true;
  }

  // Moves Transpose `t` (read only by `op`, through the value `op` read it as) below
  // `op`: op writes a new value m and t transposes m into op's old output.
  void move_below(ir::NodeId op_id, ir::NodeId t_id, const Perm& perm, ir::Shape m_shape) {
    ir::Node& op = graph_.node(op_id);
    const ir::ValueId out = op.outputs[0];
    const ir::ValueId m = add_value(graph_, graph_.value(out).name + "_untransposed",
                                    graph_.value(out).dtype, std::move(m_shape));
    op.outputs[0] = m;
    ir::Node& t = graph_.node(t_id);
    t.inputs[0] = m;
    t.outputs[0] = out;
    set_attr(t, attr_ints("perm", perm));
    touched_[op_id] = true;
    touched_[t_id] = true;
  }

  // Rule 2: a unary elementwise operator reading a Transpose.
  bool try_unary(ir::NodeId id) {
    const ir::Node& op = graph_.node(id);
    if (!is_onnx(op) || !unary_elementwise().count(op.op_type)) return false;
    if (op.inputs.empty() || op.inputs[0] == ir::kNoValue) return false;
    if (op.outputs.size() != 1 || op.outputs[0] == ir::kNoValue) return false;
    // Clip's bounds must be scalars known now, so that they cannot depend on layout.
    for (size_t i = 1; i < op.inputs.size(); ++i) {
      if (op.op_type != "Clip" || i > 2) return false;
      if (op.inputs[i] != ir::kNoValue && !scalar_constant(graph_, op.inputs[i])) return false;
    }
    const ir::ValueId t_out = op.inputs[0];
    auto t = transpose_producing(t_out);
    if (!t || !index_.has_single_use(t_out)) return false;
    const auto& [t_id, perm] = *t;
    const ir::ValueId x = graph_.node(t_id).inputs[0];
    graph_.node(id).inputs[0] = x;
    move_below(id, t_id, perm, graph_.value(x).shape);
    return true;
  }

  // Rule 3: a binary elementwise operator reading one or two Transposes.
  bool try_binary(ir::NodeId id) {
    const ir::Node& op = graph_.node(id);
    if (!is_onnx(op) || !binary_elementwise().count(op.op_type)) return false;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return false;
    if (op.inputs[0] == ir::kNoValue || op.inputs[1] == ir::kNoValue) return false;
    if (op.outputs[0] == ir::kNoValue) return false;
    std::optional<std::pair<ir::NodeId, Perm>> t[2];
    for (size_t s = 0; s < 2; ++s)
      if (index_.has_single_use(op.inputs[s])) t[s] = transpose_producing(op.inputs[s]);
    const ir::Shape out_shape = graph_.value(op.outputs[0]).shape;

    if (t[0] && t[1]) {
      if (t[0]->second != t[1]->second) return false;
      const Perm perm = t[0]->second;
      ir::Node& node = graph_.node(id);
      node.inputs[0] = graph_.node(t[0]->first).inputs[0];
      node.inputs[1] = graph_.node(t[1]->first).inputs[0];
      remove_[t[1]->first] = true;
      touched_[t[1]->first] = true;
      move_below(id, t[0]->first, perm, untransposed_shape(out_shape, perm));
      return true;
    }
    for (size_t s = 0; s < 2; ++s) {
      if (!t[s]) continue;
      const auto& [t_id, perm] = *t[s];
      const ir::ValueId other = op.inputs[1 - s];
      std::optional<ir::ValueId> replacement;
      if (layout_free(graph_.value(other).shape, perm.size()))
        replacement = other;
      else
        replacement = transposed_constant(other, inverse(perm), op.name);
      if (!replacement) continue;
      ir::Node& node = graph_.node(id);
      node.inputs[s] = graph_.node(t_id).inputs[0];
      node.inputs[1 - s] = *replacement;
      move_below(id, t_id, perm, untransposed_shape(out_shape, perm));
      return true;
    }
    return false;
  }

  // A new constant holding constant `c` (of rank perm.size()) transposed by `perm`,
  // evaluated by the context's evaluator; nullopt when that is not possible.
  std::optional<ir::ValueId> transposed_constant(ir::ValueId c, const Perm& perm,
                                                 const std::string& user) {
    if (context_.evaluator == nullptr) return std::nullopt;
    const ir::TensorData* data = constant_of(graph_, c);
    if (data == nullptr || data->dims().size() != perm.size()) return std::nullopt;
    std::vector<int64_t> dims(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) dims[j] = data->dims()[perm[j]];
    ir::Node node;
    node.name = user + "/transpose_constant";
    node.op_type = "Transpose";
    node.inputs = {c};
    node.attributes = {attr_ints("perm", perm)};
    const ir::ValueId out =
        add_value(graph_, graph_.value(c).name + "_transposed", data->dtype(), ir::Shape::of(dims));
    node.outputs = {out};
    Result<std::vector<ir::TensorDataPtr>> folded = context_.evaluator->evaluate(graph_, node);
    // A failed evaluation leaves `out` as an unreferenced value, which nothing reads.
    if (!folded.is_ok() || folded->size() != 1 || (*folded)[0] == nullptr) return std::nullopt;
    const ir::TensorDataPtr& t = (*folded)[0];
    if (t->dtype() != data->dtype() || t->dims() != dims) return std::nullopt;
    graph_.value(out).constant = t;
    return out;
  }

  ir::Graph& graph_;
  const PassContext& context_;
  const GraphIndex index_;
  std::vector<bool> touched_;
  std::vector<bool> remove_;
};

}  // namespace

Result<int> TransposeOptimization::apply(ir::Graph& graph, const PassContext& context) {
  int total = 0;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    Sweep s(graph, context);
    const int rewrites = s.run();
    if (rewrites == 0) break;
    INFER_RETURN_IF_ERROR(commit(graph, s.removed()));
    total += rewrites;
  }
  return total;
}

}  // namespace infer::optimizer
