#include "optimizer/fused_decomposition.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numbers>

#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

// Emits the nodes of one decomposition into the graph, appending them (commit() sorts).
class Emitter {
 public:
  Emitter(ir::Graph& graph, const ir::Node& fused, int64_t opset)
      : graph_(graph), fused_name_(fused.name), opset_(opset) {}

  int64_t opset() const { return opset_; }

  // A scalar constant of `dtype`.
  ir::ValueId scalar(DataType dtype, double v, const std::string& what) {
    return add_constant(graph_, fused_name_ + "/" + what, make_float_tensor(dtype, {}, {v}));
  }
  ir::ValueId ints(const std::vector<int64_t>& values, const std::string& what) {
    return add_constant(graph_, fused_name_ + "/" + what,
                        make_int64_tensor({static_cast<int64_t>(values.size())}, values));
  }

  // The shape new values get unless node() is given one: backends decide what they claim
  // from shapes (a known rank at least), so the decomposition's values carry what is
  // known, e.g. the fused output's shape for every value of an elementwise chain.
  void set_shape(ir::Shape shape) { shape_ = std::move(shape); }

  // Appends op(inputs) -> a new value (or `out` when given) and returns the output.
  ir::ValueId node(const std::string& op, std::vector<ir::ValueId> inputs, DataType dtype,
                   std::vector<ir::Attribute> attrs = {}, ir::ValueId out = ir::kNoValue,
                   const ir::Shape* shape = nullptr) {
    ir::Node n;
    n.name = unique_node_name(op);
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attributes = std::move(attrs);
    if (out == ir::kNoValue) out = add_value(graph_, n.name, dtype, shape ? *shape : shape_);
    n.outputs = {out};
    graph_.add_node(std::move(n));
    return out;
  }

 private:
  // The first node takes the fused node's own name (usually the name the anchor node had
  // in the model, so pins and messages speak of the node the user knows); the others are
  // "<name>/<Op>", numbered when an op repeats.
  std::string unique_node_name(const std::string& op) {
    if (!named_first_) {
      named_first_ = true;
      return fused_name_;
    }
    const int count = ++ops_[op];
    return fused_name_ + "/" + op + (count > 1 ? "_" + std::to_string(count) : "");
  }

  ir::Graph& graph_;
  std::string fused_name_;
  int64_t opset_;
  std::map<std::string, int> ops_;
  ir::Shape shape_;
  bool named_first_ = false;
};

// [d0, d1, ...] of a rank-3 value, or unknown dims when its rank is not 3.
std::vector<ir::Dim> dims3(const ir::Graph& g, ir::ValueId v) {
  const ir::Shape& s = g.value(v).shape;
  if (s.rank_known() && s.rank() == 3) return *s.dims;
  return {ir::Dim{}, ir::Dim{}, ir::Dim{}};
}

ir::Dim divided(const ir::Dim& d, int64_t by) {
  return d.is_known() && by > 0 ? ir::Dim::known(d.value / by) : ir::Dim{};
}

ir::Shape shape4(ir::Dim a, ir::Dim b, ir::Dim c, ir::Dim d) {
  ir::Shape s;
  s.dims = std::vector<ir::Dim>{std::move(a), std::move(b), std::move(c), std::move(d)};
  return s;
}

// Applies `activation` to x, writing `out` with the last node. With no activation, x is
// forwarded through an Identity so that `out` keeps its producer (callers avoid that case
// when they can make their own last node write `out`).
Status emit_activation(Emitter& e, const ir::Node& fused, ir::ValueId x, DataType dt,
                       ir::ValueId out) {
  const std::string act = fused.attr_string("activation", "");
  const ir::Attribute* p = fused.attr("activation_params");
  const std::vector<double> params = p != nullptr ? p->floats : std::vector<double>{};
  auto need = [&](size_t n) -> Status {
    if (params.size() == n) return Status::ok();
    return invalid_argument(fused.describe() + ": activation '" + act + "' takes " +
                            std::to_string(n) + " activation_params, got " +
                            std::to_string(params.size()));
  };
  if (act.empty()) {
    e.node("Identity", {x}, dt, {}, out);
  } else if (act == "Relu" || act == "Tanh" || act == "Sigmoid") {
    INFER_RETURN_IF_ERROR(need(0));
    e.node(act, {x}, dt, {}, out);
  } else if (act == "LeakyRelu") {
    INFER_RETURN_IF_ERROR(need(1));
    e.node("LeakyRelu", {x}, dt, {attr_float("alpha", params[0])}, out);
  } else if (act == "HardSigmoid") {
    INFER_RETURN_IF_ERROR(need(2));
    e.node("HardSigmoid", {x}, dt, {attr_float("alpha", params[0]), attr_float("beta", params[1])},
           out);
  } else if (act == "HardSwish") {
    INFER_RETURN_IF_ERROR(need(0));
    if (e.opset() >= 14) {
      e.node("HardSwish", {x}, dt, {}, out);
    } else {
      ir::ValueId hs =
          e.node("HardSigmoid", {x}, dt, {attr_float("alpha", 1.0 / 6), attr_float("beta", 0.5)});
      e.node("Mul", {x, hs}, dt, {}, out);
    }
  } else if (act == "Clip") {
    INFER_RETURN_IF_ERROR(need(2));
    if (e.opset() < 11) {
      // Clip-6: bounds as attributes; an infinite one is the float range's end (the
      // attribute default).
      std::vector<ir::Attribute> bounds;
      if (!std::isinf(params[0])) bounds.push_back(attr_float("min", params[0]));
      if (!std::isinf(params[1])) bounds.push_back(attr_float("max", params[1]));
      e.node("Clip", {x}, dt, bounds, out);
      return Status::ok();
    }
    // Clip-11+ takes its bounds as inputs; an infinite bound is an omitted input.
    std::vector<ir::ValueId> ins = {x, ir::kNoValue, ir::kNoValue};
    if (!std::isinf(params[0])) ins[1] = e.scalar(dt, params[0], "clip_min");
    if (!std::isinf(params[1])) ins[2] = e.scalar(dt, params[1], "clip_max");
    while (ins.back() == ir::kNoValue) ins.pop_back();
    e.node("Clip", ins, dt, {}, out);
  } else if (act == "Gelu" || act == "GeluTanh") {
    INFER_RETURN_IF_ERROR(need(0));
    ir::ValueId inner;
    if (act == "Gelu") {
      ir::ValueId scaled = e.node("Div", {x, e.scalar(dt, std::numbers::sqrt2, "sqrt2")}, dt);
      inner = e.node("Erf", {scaled}, dt);
    } else {
      ir::ValueId cube = e.node("Pow", {x, e.scalar(dt, 3.0, "three")}, dt);
      ir::ValueId c1 = e.node("Mul", {cube, e.scalar(dt, 0.044715, "gelu_c")}, dt);
      ir::ValueId sum = e.node("Add", {x, c1}, dt);
      ir::ValueId arg =
          e.node("Mul", {sum, e.scalar(dt, std::sqrt(2.0 / std::numbers::pi), "sqrt_2_pi")}, dt);
      inner = e.node("Tanh", {arg}, dt);
    }
    ir::ValueId one_plus = e.node("Add", {inner, e.scalar(dt, 1.0, "one")}, dt);
    ir::ValueId times_x = e.node("Mul", {x, one_plus}, dt);
    e.node("Mul", {times_x, e.scalar(dt, 0.5, "half")}, dt, {}, out);
  } else {
    return invalid_argument(fused.describe() + ": unknown activation '" + act +
                            "' (expected Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid, "
                            "HardSwish, Gelu or GeluTanh)");
  }
  return Status::ok();
}

// The node's attributes without the fused-activation ones: those of the base operator.
std::vector<ir::Attribute> base_attributes(const ir::Node& fused) {
  std::vector<ir::Attribute> out;
  for (const ir::Attribute& a : fused.attributes)
    if (a.name != "activation" && a.name != "activation_params") out.push_back(a);
  return out;
}

ir::ValueId input_or_none(const ir::Node& n, size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : ir::kNoValue;
}

Status decompose_one(ir::Graph& graph, const ir::Node& fused, int64_t opset) {
  if (fused.outputs.empty() || fused.outputs[0] == ir::kNoValue)
    return invalid_argument(fused.describe() + ": has no output");
  const ir::ValueId out = fused.outputs[0];
  const DataType dt = graph.value(out).dtype;
  Emitter e(graph, fused, opset);
  e.set_shape(graph.value(out).shape);
  const std::string& op = fused.op_type;

  if (op == "FusedConv" || op == "FusedGemm" || op == "FusedMatMul") {
    std::vector<ir::ValueId> ins = fused.inputs;
    ir::ValueId extra = ir::kNoValue;  // FusedConv's Z or FusedMatMul's bias
    if (op == "FusedConv") {
      extra = input_or_none(fused, 3);
      if (ins.size() > 3) ins.resize(3);
    } else if (op == "FusedMatMul") {
      extra = input_or_none(fused, 2);
      if (ins.size() > 2) ins.resize(2);
    }
    while (!ins.empty() && ins.back() == ir::kNoValue) ins.pop_back();
    const std::string base = op.substr(5);  // Conv, Gemm, MatMul
    // The last node of the chain writes the fused node's output itself (no Identity).
    const bool has_activation = !fused.attr_string("activation", "").empty();
    const bool base_is_last = extra == ir::kNoValue && !has_activation;
    ir::ValueId y = e.node(
        base, ins, dt, op == "FusedMatMul" ? std::vector<ir::Attribute>{} : base_attributes(fused),
        base_is_last ? out : ir::kNoValue);
    if (extra != ir::kNoValue)
      y = e.node("Add", {y, extra}, dt, {}, has_activation ? ir::kNoValue : out);
    if (!has_activation) return Status::ok();
    return emit_activation(e, fused, y, dt, out);
  }
  if (op == "Gelu") {
    const std::string approx = fused.attr_string("approximate", "none");
    if (approx != "none" && approx != "tanh")
      return invalid_argument(fused.describe() + ": attribute 'approximate' is '" + approx +
                              "', expected 'none' or 'tanh'");
    ir::Node as_activation = fused;
    as_activation.attributes = {attr_string("activation", approx == "tanh" ? "GeluTanh" : "Gelu")};
    return emit_activation(e, as_activation, fused.inputs.at(0), dt, out);
  }
  if (op == "LayerNormalization") {
    const ir::ValueId x = fused.inputs.at(0);
    const int64_t axis = fused.attr_int("axis", -1);
    const double eps = fused.attr_float("epsilon", 1e-5);
    std::vector<ir::ValueId> ins = fused.inputs;
    ins.resize(3, ir::kNoValue);
    if (opset >= 17) {  // ONNX's own operator exists: the fused op is exactly it.
      std::vector<ir::ValueId> lin = ins;
      while (lin.back() == ir::kNoValue) lin.pop_back();
      e.node("LayerNormalization", lin, dt, fused.attributes, out);
      return Status::ok();
    }
    // Normalized axes [axis, rank); negative axes count from the end, so a negative
    // `axis` needs no rank.
    std::vector<int64_t> axes;
    if (axis < 0) {
      for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
    } else {
      const ir::Shape& s = graph.value(x).shape;
      if (!s.rank_known())
        return invalid_argument(fused.describe() + ": a non-negative axis needs the rank of X");
      for (int64_t a = axis; a < static_cast<int64_t>(s.rank()); ++a) axes.push_back(a);
    }
    ir::Shape reduced = graph.value(x).shape;
    if (reduced.rank_known()) {
      const auto rank = static_cast<int64_t>(reduced.rank());
      for (int64_t a : axes) {
        const int64_t i = a < 0 ? a + rank : a;
        if (i >= 0 && i < rank) (*reduced.dims)[static_cast<size_t>(i)] = ir::Dim::known(1);
      }
    }
    auto reduce_mean = [&](ir::ValueId v) {
      if (opset >= 18)
        return e.node("ReduceMean", {v, e.ints(axes, "axes")}, dt, {attr_int("keepdims", 1)},
                      ir::kNoValue, &reduced);
      return e.node("ReduceMean", {v}, dt, {attr_ints("axes", axes), attr_int("keepdims", 1)},
                    ir::kNoValue, &reduced);
    };
    ir::ValueId mean = reduce_mean(x);
    ir::ValueId d = e.node("Sub", {x, mean}, dt);
    ir::ValueId var = reduce_mean(e.node("Mul", {d, d}, dt));
    ir::ValueId sd =
        e.node("Sqrt",
               {e.node("Add", {var, e.scalar(dt, eps, "epsilon")}, dt, {}, ir::kNoValue, &reduced)},
               dt, {}, ir::kNoValue, &reduced);
    ir::ValueId n = e.node("Div", {d, sd}, dt);
    if (ins[2] == ir::kNoValue) {
      e.node("Mul", {n, ins[1]}, dt, {}, out);
    } else {
      e.node("Add", {e.node("Mul", {n, ins[1]}, dt), ins[2]}, dt, {}, out);
    }
    return Status::ok();
  }
  if (op == "Attention") {
    const ir::Attribute* heads = fused.attr("num_heads");
    const ir::Attribute* scale = fused.attr("scale");
    if (heads == nullptr || scale == nullptr)
      return invalid_argument(fused.describe() +
                              ": attributes 'num_heads' and 'scale' are required");
    const int64_t h = heads->i;
    // Shapes: q [B,Sq,H*Dk], k [B,Sk,H*Dk], v [B,Sk,H*Dv] (dims unknown where they are).
    const std::vector<ir::Dim> qd = dims3(graph, fused.inputs.at(0));
    const std::vector<ir::Dim> kd = dims3(graph, fused.inputs.at(1));
    const std::vector<ir::Dim> vd = dims3(graph, fused.inputs.at(2));
    const ir::Dim hd = ir::Dim::known(h), dk = divided(qd[2], h), dv = divided(vd[2], h);
    auto split = [&](ir::ValueId v, const std::vector<ir::Dim>& d, const ir::Dim& head_dim,
                     std::vector<int64_t> perm, const std::string& what) {
      const ir::Shape split_shape = shape4(d[0], d[1], hd, head_dim);
      ir::ValueId r = e.node("Reshape", {v, e.ints({0, 0, h, -1}, what + "_heads")}, dt, {},
                             ir::kNoValue, &split_shape);
      const std::vector<ir::Dim>& sd = *split_shape.dims;
      const ir::Shape t = shape4(sd[perm[0]], sd[perm[1]], sd[perm[2]], sd[perm[3]]);
      return e.node("Transpose", {r}, dt, {attr_ints("perm", std::move(perm))}, ir::kNoValue, &t);
    };
    ir::ValueId q = split(fused.inputs.at(0), qd, dk, {0, 2, 1, 3}, "q");
    ir::ValueId kt = split(fused.inputs.at(1), kd, dk, {0, 2, 3, 1}, "k");
    ir::ValueId v = split(fused.inputs.at(2), vd, dv, {0, 2, 1, 3}, "v");
    const ir::Shape scores = shape4(qd[0], hd, qd[1], kd[1]);
    ir::ValueId s = e.node("MatMul", {q, kt}, dt, {}, ir::kNoValue, &scores);
    s = e.node("Mul", {s, e.scalar(dt, scale->f, "scale")}, dt, {}, ir::kNoValue, &scores);
    const ir::ValueId mask = input_or_none(fused, 3);
    if (mask != ir::kNoValue) s = e.node("Add", {s, mask}, dt, {}, ir::kNoValue, &scores);
    ir::ValueId p = e.node("Softmax", {s}, dt, {attr_int("axis", -1)}, ir::kNoValue, &scores);
    const ir::Shape context = shape4(qd[0], hd, qd[1], dv);
    ir::ValueId o = e.node("MatMul", {p, v}, dt, {}, ir::kNoValue, &context);
    const ir::Shape merged = shape4(qd[0], qd[1], hd, dv);
    o = e.node("Transpose", {o}, dt, {attr_ints("perm", {0, 2, 1, 3})}, ir::kNoValue, &merged);
    e.node("Reshape", {o, e.ints({0, 0, -1}, "merged_heads")}, dt, {}, out);
    return Status::ok();
  }
  if (op == "QLinearAdd" || op == "QLinearMul") {
    // DequantizeLinear both operands, the float op, QuantizeLinear: the definition itself.
    if (fused.inputs.size() != 8)
      return invalid_argument(fused.describe() + ": expected 8 inputs, got " +
                              std::to_string(fused.inputs.size()));
    const ir::ValueId a = fused.inputs[0], b = fused.inputs[3];
    // Copies: emitting nodes adds values, which may move the graph's value table.
    const ir::Shape a_shape = graph.value(a).shape, b_shape = graph.value(b).shape;
    const ir::ValueId fa = e.node("DequantizeLinear", {a, fused.inputs[1], fused.inputs[2]},
                                  DataType::kFloat32, {}, ir::kNoValue, &a_shape);
    const ir::ValueId fb = e.node("DequantizeLinear", {b, fused.inputs[4], fused.inputs[5]},
                                  DataType::kFloat32, {}, ir::kNoValue, &b_shape);
    const ir::ValueId fc = e.node(op == "QLinearAdd" ? "Add" : "Mul", {fa, fb}, DataType::kFloat32);
    e.node("QuantizeLinear", {fc, fused.inputs[6], fused.inputs[7]}, dt, {}, out);
    return Status::ok();
  }
  if (op == "MatMulIntegerToFloat") {
    // MatMulInteger, Cast to float32, Mul by a_scale * b_scale, Add bias: the chain itself.
    if (fused.inputs.size() < 4)
      return invalid_argument(fused.describe() + ": expected at least 4 inputs, got " +
                              std::to_string(fused.inputs.size()));
    std::vector<ir::ValueId> mm = {fused.inputs[0], fused.inputs[1], input_or_none(fused, 4),
                                   input_or_none(fused, 5)};
    while (mm.back() == ir::kNoValue) mm.pop_back();
    const ir::ValueId acc = e.node("MatMulInteger", mm, DataType::kInt32);
    const ir::ValueId f = e.node("Cast", {acc}, DataType::kFloat32,
                                 {attr_int("to", static_cast<int64_t>(DataType::kFloat32))});
    const ir::Shape scale_shape = graph.value(fused.inputs[3]).shape;
    const ir::ValueId s = e.node("Mul", {fused.inputs[2], fused.inputs[3]}, DataType::kFloat32, {},
                                 ir::kNoValue, &scale_shape);
    const ir::ValueId bias = input_or_none(fused, 6);
    const ir::ValueId y =
        e.node("Mul", {f, s}, DataType::kFloat32, {}, bias == ir::kNoValue ? out : ir::kNoValue);
    if (bias != ir::kNoValue) e.node("Add", {y, bias}, DataType::kFloat32, {}, out);
    return Status::ok();
  }
  if (op == "QLinearLookup") {
    // Y = Gather(table, X as an int32 index), the index of an int8 X shifted by 128.
    if (fused.inputs.size() != 2)
      return invalid_argument(fused.describe() + ": expected 2 inputs (X, table), got " +
                              std::to_string(fused.inputs.size()));
    const ir::ValueId x = fused.inputs[0];
    const ir::Shape xs = graph.value(x).shape;  // a copy: emitting adds values
    ir::ValueId index =
        e.node("Cast", {x}, DataType::kInt32,
               {attr_int("to", static_cast<int64_t>(DataType::kInt32))}, ir::kNoValue, &xs);
    if (graph.value(x).dtype == DataType::kInt8) {
      const int32_t offset = 128;
      std::vector<uint8_t> bytes(sizeof(offset));
      std::memcpy(bytes.data(), &offset, sizeof(offset));
      const ir::ValueId c =
          add_constant(graph, fused.name + "/offset",
                       std::make_shared<const ir::TensorData>(
                           DataType::kInt32, std::vector<int64_t>{}, std::move(bytes)));
      index = e.node("Add", {index, c}, DataType::kInt32, {}, ir::kNoValue, &xs);
    }
    e.node("Gather", {fused.inputs[1], index}, dt, {attr_int("axis", 0)}, out);
    return Status::ok();
  }
  return invalid_argument(fused.describe() + ": no decomposition for " + kFusedDomain + "." + op);
}

}  // namespace

bool is_decomposable_fused_node(const ir::Node& node) {
  if (node.domain != kFusedDomain) return false;
  static const char* kOps[] = {
      "FusedConv", "FusedGemm",  "FusedMatMul", "Gelu",          "LayerNormalization",
      "Attention", "QLinearAdd", "QLinearMul",  "QLinearLookup", "MatMulIntegerToFloat"};
  for (const char* op : kOps)
    if (node.op_type == op) return true;
  return false;
}

Result<std::vector<std::vector<std::string>>> decompose_fused_nodes(
    ir::Graph& graph, const std::vector<ir::NodeId>& nodes, const PassContext& context) {
  std::vector<std::vector<std::string>> made;
  if (nodes.empty()) return made;
  const int64_t opset = context.opset("");
  std::vector<bool> remove(graph.node_count(), false);
  for (ir::NodeId id : nodes) {
    // Copy: emitting nodes appends to the node list.
    const ir::Node fused = graph.node(id);
    if (!is_decomposable_fused_node(fused))
      return invalid_argument(fused.describe() + " is not a fused " + kFusedDomain + " operator");
    const size_t before = graph.node_count();
    INFER_RETURN_IF_ERROR(decompose_one(graph, fused, opset));
    made.emplace_back();
    for (size_t i = before; i < graph.node_count(); ++i)
      made.back().push_back(graph.node(static_cast<ir::NodeId>(i)).name);
    remove[id] = true;
  }
  INFER_RETURN_IF_ERROR(commit(graph, remove));
  return made;
}

}  // namespace infer::optimizer
