#include "optimizer/shape_folding.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// Recursion bound for the dim-equality proof (chains of elementwise ops and transposes).
constexpr int kMaxProofDepth = 16;

bool is_onnx(const ir::Node& node, const char* op) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op;
}

bool has_input(const ir::Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != ir::kNoValue;
}

// The dims [start, end) a Shape node reports for an input of rank `rank` (opset 15
// clamps negative and out-of-range bounds).
std::pair<int64_t, int64_t> shape_range(const ir::Node& shape_node, int64_t rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  return {clamp(shape_node.attr_int("start", 0)), clamp(shape_node.attr_int("end", rank))};
}

// ---- (a) Shape and Size ----------------------------------------------------------

ir::TensorDataPtr fold_shape_or_size(const ir::Graph& graph, const ir::Node& node) {
  const ir::Shape& s = graph.value(node.inputs[0]).shape;
  if (!s.rank_known()) return nullptr;
  const auto rank = static_cast<int64_t>(s.rank());
  if (node.op_type == "Shape") {
    const auto [start, end] = shape_range(node, rank);
    std::vector<int64_t> dims;
    for (int64_t i = start; i < end; ++i) {
      const ir::Dim& d = (*s.dims)[static_cast<size_t>(i)];
      if (!d.is_known()) return nullptr;
      dims.push_back(d.value);
    }
    return make_int64_tensor({static_cast<int64_t>(dims.size())}, dims);
  }
  int64_t count = 1;
  for (const ir::Dim& d : *s.dims) {
    if (!d.is_known()) return nullptr;
    count *= d.value;
  }
  return make_int64_tensor({}, {count});
}

// ---- (b) Reshape shapes ----------------------------------------------------------

// One element of a Reshape's shape: a constant, or "dim `dim` of value `of`".
struct ShapeElement {
  bool dynamic = false;
  int64_t constant = 0;
  ir::ValueId of = ir::kNoValue;
  int64_t dim = 0;
};
using Elements = std::vector<ShapeElement>;

class ReshapeSimplifier {
 public:
  ReshapeSimplifier(const ir::Graph& graph, const GraphIndex& index)
      : graph_(graph), index_(index) {}

  // The constant shape for Reshape `node`, or nullopt to leave it.
  std::optional<std::vector<int64_t>> simplify(const ir::Node& node) const {
    if (!has_input(node, 0) || !has_input(node, 1) || node.attr_int("allowzero", 0) != 0)
      return std::nullopt;
    if (graph_.value(node.inputs[1]).is_constant()) return std::nullopt;
    const ir::Node* concat = index_.producer(strip_casts(node.inputs[1]));
    if (concat == nullptr || !is_onnx(*concat, "Concat")) return std::nullopt;
    const int64_t axis = concat->attr_int("axis", 0);
    if (axis != 0 && axis != -1) return std::nullopt;
    Elements elements;
    for (ir::ValueId piece : concat->inputs)
      if (piece == ir::kNoValue || !append_piece(piece, elements)) return std::nullopt;
    const ir::ValueId data = node.inputs[0];
    const ir::Shape& data_shape = graph_.value(data).shape;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < elements.size(); ++i) {
      const ShapeElement& e = elements[i];
      if (!e.dynamic) {
        shape.push_back(e.constant);
        continue;
      }
      const ir::Shape& of_shape = graph_.value(e.of).shape;
      if (of_shape.rank_known() && e.dim < static_cast<int64_t>(of_shape.rank()) &&
          (*of_shape.dims)[static_cast<size_t>(e.dim)].is_known()) {
        shape.push_back((*of_shape.dims)[static_cast<size_t>(e.dim)].value);
        continue;
      }
      // 0 copies dim i of the data, which only exists for i < rank(data).
      if (!data_shape.rank_known() || i >= data_shape.rank()) return std::nullopt;
      if (!same_dim_as(data, static_cast<int64_t>(i), e.of, e.dim, 0)) return std::nullopt;
      shape.push_back(0);
    }
    return shape;
  }

 private:
  // Skips Casts to int64 of int64/int32 values: they do not change a shape's numbers.
  ir::ValueId strip_casts(ir::ValueId v) const {
    for (int guard = 0; guard < kMaxProofDepth; ++guard) {
      const ir::Node* p = index_.producer(v);
      if (p == nullptr || !is_onnx(*p, "Cast") || !has_input(*p, 0) ||
          p->attr_int("to", 0) != static_cast<int64_t>(DataType::kInt64))
        return v;
      const DataType from = graph_.value(p->inputs[0]).dtype;
      if (from != DataType::kInt64 && from != DataType::kInt32) return v;
      v = p->inputs[0];
    }
    return v;
  }

  // Appends the elements of a 1-D Concat piece.
  bool append_piece(ir::ValueId piece, Elements& out) const {
    piece = strip_casts(piece);
    if (const ir::TensorData* t = constant_of(graph_, piece)) {
      std::optional<std::vector<int64_t>> values = int_constant(graph_, piece);
      if (!values || t->dims().size() != 1) return false;
      for (int64_t v : *values) out.push_back(ShapeElement{false, v, ir::kNoValue, 0});
      return true;
    }
    const ir::Node* p = index_.producer(piece);
    if (p == nullptr) return false;
    if (is_onnx(*p, "Unsqueeze")) {
      if (!has_input(*p, 0) || !unsqueezes_to_front(*p)) return false;
      std::optional<ShapeElement> e = gathered_element(strip_casts(p->inputs[0]), true);
      if (!e) return false;
      out.push_back(*e);
      return true;
    }
    if (is_onnx(*p, "Gather")) {
      std::optional<ShapeElement> e = gathered_element(piece, false);
      if (!e) return false;
      out.push_back(*e);
      return true;
    }
    if (is_onnx(*p, "Shape") && has_input(*p, 0)) {
      const ir::Shape& s = graph_.value(p->inputs[0]).shape;
      if (!s.rank_known()) return false;
      const auto [start, end] = shape_range(*p, static_cast<int64_t>(s.rank()));
      for (int64_t d = start; d < end; ++d) out.push_back(ShapeElement{true, 0, p->inputs[0], d});
      return true;
    }
    return false;
  }

  // Unsqueeze of a scalar to shape [1]: axes [0] (or [-1]), attribute or input (13+).
  bool unsqueezes_to_front(const ir::Node& unsqueeze) const {
    std::optional<std::vector<int64_t>> axes;
    if (const ir::Attribute* a = unsqueeze.attr("axes"))
      axes = a->ints;
    else if (has_input(unsqueeze, 1))
      axes = int_constant(graph_, unsqueeze.inputs[1]);
    return axes && axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1);
  }

  // The element `v` = Gather(shape_vector, k) holds: k a scalar when `scalar_index`, else
  // a 1-D index of one element. The shape vector is a Shape node or an int constant.
  std::optional<ShapeElement> gathered_element(ir::ValueId v, bool scalar_index) const {
    const ir::Node* gather = index_.producer(v);
    if (gather == nullptr || !is_onnx(*gather, "Gather") || !has_input(*gather, 0) ||
        !has_input(*gather, 1))
      return std::nullopt;
    const int64_t axis = gather->attr_int("axis", 0);
    if (axis != 0 && axis != -1) return std::nullopt;
    const ir::TensorData* index_data = constant_of(graph_, gather->inputs[1]);
    std::optional<std::vector<int64_t>> k = int_constant(graph_, gather->inputs[1]);
    if (index_data == nullptr || !k || k->size() != 1) return std::nullopt;
    if (index_data->dims().size() != (scalar_index ? 0u : 1u)) return std::nullopt;
    int64_t index = (*k)[0];

    const ir::ValueId source = strip_casts(gather->inputs[0]);
    if (std::optional<std::vector<int64_t>> values = int_constant(graph_, source)) {
      const auto n = static_cast<int64_t>(values->size());
      if (index < 0) index += n;
      if (index < 0 || index >= n) return std::nullopt;
      return ShapeElement{false, (*values)[static_cast<size_t>(index)], ir::kNoValue, 0};
    }
    const ir::Node* shape = index_.producer(source);
    if (shape == nullptr || !is_onnx(*shape, "Shape") || !has_input(*shape, 0)) return std::nullopt;
    const ir::ValueId u = shape->inputs[0];
    const ir::Shape& us = graph_.value(u).shape;
    if (!us.rank_known()) {
      // Without the rank only a plain Shape and a non-negative index are understood.
      if (shape->attr("start") != nullptr || shape->attr("end") != nullptr || index < 0)
        return std::nullopt;
      return ShapeElement{true, 0, u, index};
    }
    const auto [start, end] = shape_range(*shape, static_cast<int64_t>(us.rank()));
    if (index < 0) index += end - start;
    if (index < 0 || index >= end - start) return std::nullopt;
    return ShapeElement{true, 0, u, start + index};
  }

  // Whether dim i of `a` is provably dim k of `u`.
  bool same_dim_as(ir::ValueId a, int64_t i, ir::ValueId u, int64_t k, int depth) const {
    if (a == u && i == k) return true;
    if (depth > kMaxProofDepth || i < 0) return false;
    const ir::Shape& as = graph_.value(a).shape;
    const ir::Shape& us = graph_.value(u).shape;
    if (as.rank_known() && us.rank_known() && i < static_cast<int64_t>(as.rank()) &&
        k < static_cast<int64_t>(us.rank()) &&
        same_dim((*as.dims)[static_cast<size_t>(i)], (*us.dims)[static_cast<size_t>(k)]))
      return true;
    const ir::Node* p = index_.producer(a);
    if (p == nullptr || !has_input(*p, 0)) return false;
    if (is_onnx(*p, "Transpose")) {
      std::vector<int64_t> perm;
      if (const ir::Attribute* attr = p->attr("perm")) {
        perm = attr->ints;
      } else {
        const ir::Shape& in = graph_.value(p->inputs[0]).shape;
        if (!in.rank_known()) return false;
        for (size_t d = in.rank(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      }
      if (i >= static_cast<int64_t>(perm.size())) return false;
      return same_dim_as(p->inputs[0], perm[static_cast<size_t>(i)], u, k, depth + 1);
    }
    static const char* const kUnary[] = {"Relu", "Erf", "Tanh", "Sigmoid", "Neg", "Sqrt", "Cast"};
    for (const char* op : kUnary)
      if (is_onnx(*p, op)) return same_dim_as(p->inputs[0], i, u, k, depth + 1);
    static const char* const kBinary[] = {"Add", "Sub", "Mul", "Div"};
    for (const char* op : kBinary) {
      if (!is_onnx(*p, op)) continue;
      if (p->inputs.size() != 2 || !has_input(*p, 1)) return false;
      // One operand a constant of rank <= 1; the other decides the output's shape
      // (except that a constant vector of length L > 1 broadcasts into the last dim).
      for (int c = 0; c < 2; ++c) {
        const ir::TensorData* t = constant_of(graph_, p->inputs[static_cast<size_t>(c)]);
        const ir::ValueId other = p->inputs[static_cast<size_t>(1 - c)];
        if (t == nullptr || t->dims().size() > 1 || constant_of(graph_, other) != nullptr) continue;
        const ir::Shape& os = graph_.value(other).shape;
        if (!os.rank_known() || os.rank() < 1 || i >= static_cast<int64_t>(os.rank())) return false;
        if (t->element_count() != 1 && i == static_cast<int64_t>(os.rank()) - 1) return false;
        return same_dim_as(other, i, u, k, depth + 1);
      }
      return false;
    }
    return false;
  }

  const ir::Graph& graph_;
  const GraphIndex& index_;
};

}  // namespace

Result<int> ShapeFolding::apply(ir::Graph& graph, const PassContext&) {
  const GraphIndex index(graph);
  std::vector<bool> remove(graph.node_count(), false);
  int rewrites = 0;
  // (a) first, so that a Shape folded here reads as a constant vector in (b).
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    const ir::Node& node = graph.node(id);
    if ((!is_onnx(node, "Shape") && !is_onnx(node, "Size")) || !has_input(node, 0) ||
        node.outputs.size() != 1 || node.outputs[0] == ir::kNoValue)
      continue;
    const ir::ValueId out = node.outputs[0];
    if (index.is_graph_output(out) || index.is_captured(out)) continue;
    ir::TensorDataPtr folded = fold_shape_or_size(graph, node);
    if (!folded) continue;
    ir::Value& v = graph.value(out);
    v.dtype = DataType::kInt64;
    v.shape = ir::Shape::of(folded->dims());
    v.constant = std::move(folded);
    remove[id] = true;
    ++rewrites;
  }
  const ReshapeSimplifier simplifier(graph, index);
  for (ir::NodeId id = 0; id < graph.node_count(); ++id) {
    if (remove[id] || !is_onnx(graph.node(id), "Reshape")) continue;
    std::optional<std::vector<int64_t>> shape = simplifier.simplify(graph.node(id));
    if (!shape) continue;
    const ir::ValueId old_shape = graph.node(id).inputs[1];
    const ir::ValueId constant =
        add_constant(graph, graph.value(old_shape).name + "_folded",
                     make_int64_tensor({static_cast<int64_t>(shape->size())}, *shape));
    graph.node(id).inputs[1] = constant;
    ++rewrites;
  }
  if (rewrites > 0) INFER_RETURN_IF_ERROR(commit(graph, remove));
  return rewrites;
}

}  // namespace infer::optimizer
