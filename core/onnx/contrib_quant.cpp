#include "onnx/contrib_quant.hpp"

#include <set>
#include <string>
#include <vector>

namespace infer::onnx_io {
namespace {

constexpr const char* kMicrosoft = "com.microsoft";

bool expands(const ::onnx::NodeProto& n) {
  if (n.domain() != kMicrosoft) return false;
  static const char* kOps[] = {"QLinearAdd",         "QLinearMul",     "QLinearSigmoid",
                               "QLinearLeakyRelu",   "QLinearSoftmax", "QLinearGlobalAveragePool",
                               "QLinearAveragePool", "QLinearConcat",  "QGemm"};
  for (const char* op : kOps)
    if (n.op_type() == op) return true;
  return false;
}

const ::onnx::AttributeProto* attr(const ::onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_int(const ::onnx::NodeProto& n, const char* name, int64_t fallback) {
  const ::onnx::AttributeProto* a = attr(n, name);
  return a != nullptr ? a->i() : fallback;
}
void set_int(::onnx::NodeProto& n, const char* name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

// Expands one graph's nodes (and, first, their bodies').
class Expander {
 public:
  Expander(::onnx::GraphProto& graph, int64_t opset) : g_(graph), opset_(opset) {
    for (const auto& v : g_.input()) used_.insert(v.name());
    for (const auto& t : g_.initializer()) used_.insert(t.name());
    for (const auto& n : g_.node()) {
      used_.insert(n.name());
      for (const auto& s : n.input()) used_.insert(s);
      for (const auto& s : n.output()) used_.insert(s);
    }
  }

  Status run() {
    google::protobuf::RepeatedPtrField<::onnx::NodeProto> nodes;
    for (auto& n : *g_.mutable_node()) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) INFER_RETURN_IF_ERROR(Expander(*a.mutable_g(), opset_).run());
        for (auto& body : *a.mutable_graphs()) INFER_RETURN_IF_ERROR(Expander(body, opset_).run());
      }
      if (!expands(n)) {
        *nodes.Add() = std::move(n);
        continue;
      }
      made_.clear();
      node_ = &n;
      INFER_RETURN_IF_ERROR(expand());
      for (auto& m : made_) *nodes.Add() = std::move(m);
    }
    g_.mutable_node()->Swap(&nodes);
    return Status::ok();
  }

 private:
  const ::onnx::NodeProto& n() const { return *node_; }
  std::string where() const {
    return "node '" + n().name() + "' (" + n().op_type() + ", domain '" + kMicrosoft + "')";
  }
  // Input i, or "" when absent.
  std::string in(int i) const { return i < n().input_size() ? n().input(i) : std::string(); }
  Status need(std::initializer_list<int> slots) const {
    for (int i : slots)
      if (in(i).empty())
        return invalid_argument(where() + ": input " + std::to_string(i) + " is required");
    return Status::ok();
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }
  // Nodes in dependency order. The float operator (`main`) takes the contrib node's name,
  // the others "<name>/<op>".
  ::onnx::NodeProto& add(const std::string& op, const std::vector<std::string>& inputs,
                         const std::string& output, bool main = false) {
    ::onnx::NodeProto& m = made_.emplace_back();
    m.set_op_type(op);
    const std::string base = n().name().empty() ? n().op_type() : n().name();
    m.set_name(main ? n().name() : fresh(base + "/" + op));
    for (const auto& s : inputs) m.add_input(s);
    // Trailing absent optional inputs are dropped; inner ones stay "".
    while (m.input_size() > 0 && m.input(m.input_size() - 1).empty()) m.mutable_input()->RemoveLast();
    m.add_output(output);
    return m;
  }
  std::string dequantize(const std::string& x, const std::string& scale, const std::string& zero,
                         int64_t axis = -1) {
    const std::string out = fresh(x + "_dequantized");
    ::onnx::NodeProto& m = add("DequantizeLinear", {x, scale, zero}, out);
    if (axis >= 0) set_int(m, "axis", axis);
    return out;
  }
  void quantize(const std::string& v, const std::string& scale, const std::string& zero,
                const std::string& out) {
    add("QuantizeLinear", {v, scale, zero}, out);
  }
  std::string value(const std::string& what) { return fresh(n().output(0) + "_" + what); }

  Status expand() {
    if (n().output_size() < 1 || n().output(0).empty())
      return invalid_argument(where() + ": it has no output");
    const std::string& op = n().op_type();
    const std::string y = n().output(0);
    if (op == "QLinearAdd" || op == "QLinearMul") {
      INFER_RETURN_IF_ERROR(need({0, 1, 3, 4, 6}));
      const std::string a = dequantize(in(0), in(1), in(2));
      const std::string b = dequantize(in(3), in(4), in(5));
      const std::string s = value(op == "QLinearAdd" ? "sum" : "product");
      add(op == "QLinearAdd" ? "Add" : "Mul", {a, b}, s, true);
      quantize(s, in(6), in(7), y);
    } else if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu") {
      INFER_RETURN_IF_ERROR(need({0, 1, 3}));
      const std::string x = dequantize(in(0), in(1), in(2));
      const std::string f = value(op == "QLinearSigmoid" ? "sigmoid" : "leaky_relu");
      ::onnx::NodeProto& m = add(op == "QLinearSigmoid" ? "Sigmoid" : "LeakyRelu", {x}, f, true);
      if (const auto* alpha = attr(n(), "alpha"); alpha != nullptr && op == "QLinearLeakyRelu")
        *m.add_attribute() = *alpha;
      quantize(f, in(3), in(4), y);
    } else if (op == "QLinearGlobalAveragePool" || op == "QLinearAveragePool") {
      INFER_RETURN_IF_ERROR(need({0, 1, 3}));
      if (attr_int(n(), "channels_last", 0) != 0)
        return invalid_argument(where() + ": channels_last=1 (an NHWC input) is not supported");
      const std::string x = dequantize(in(0), in(1), in(2));
      const std::string f = value("pooled");
      const bool global = op == "QLinearGlobalAveragePool";
      ::onnx::NodeProto& m = add(global ? "GlobalAveragePool" : "AveragePool", {x}, f, true);
      if (!global)
        for (const auto& a : n().attribute())
          if (a.name() != "channels_last") *m.add_attribute() = a;
      quantize(f, in(3), in(4), y);
    } else if (op == "QLinearConcat") {
      if (n().input_size() < 5 || (n().input_size() - 2) % 3 != 0)
        return invalid_argument(where() + ": expected Y_scale, Y_zero_point and then (X, " +
                                "X_scale, X_zero_point) triples, got " +
                                std::to_string(n().input_size()) + " inputs");
      INFER_RETURN_IF_ERROR(need({0}));
      std::vector<std::string> parts;
      for (int i = 2; i + 2 < n().input_size(); i += 3) {
        INFER_RETURN_IF_ERROR(need({i, i + 1}));
        parts.push_back(dequantize(in(i), in(i + 1), in(i + 2)));
      }
      const std::string f = value("concat");
      ::onnx::NodeProto& m = add("Concat", parts, f, true);
      if (const auto* axis = attr(n(), "axis")) *m.add_attribute() = *axis;
      quantize(f, in(0), in(1), y);
    } else if (op == "QLinearSoftmax") {
      INFER_RETURN_IF_ERROR(need({0, 1, 3}));
      INFER_RETURN_IF_ERROR(softmax(y));
    } else {  // QGemm
      INFER_RETURN_IF_ERROR(need({0, 1, 3, 4}));
      const int64_t trans_b = attr_int(n(), "transB", 0);
      const std::string a = dequantize(in(0), in(1), in(2));
      // b_scale per tensor, or per output column: the axis of B that is N.
      const std::string b = dequantize(in(3), in(4), in(5), trans_b != 0 ? 0 : 1);
      std::string c;
      if (!in(6).empty()) {  // int32 with scale alpha * a_scale * b_scale, zero point 0
        std::string cs = value("bias_scale");
        add("Mul", {in(1), in(4)}, cs);
        if (const auto* alpha = attr(n(), "alpha"); alpha != nullptr && alpha->f() != 1.0f) {
          ::onnx::TensorProto* t = g_.add_initializer();
          t->set_name(value("alpha"));
          t->set_data_type(::onnx::TensorProto::FLOAT);
          t->add_float_data(alpha->f());
          const std::string scaled = value("bias_scale_alpha");
          add("Mul", {cs, t->name()}, scaled);
          cs = scaled;
        }
        c = dequantize(in(6), cs, "", 0);
      }
      const bool float_out = in(7).empty();
      const std::string f = float_out ? y : value("gemm");
      ::onnx::NodeProto& m = add("Gemm", {a, b, c}, f, true);
      for (const char* name : {"alpha", "transA", "transB"})
        if (const auto* at = attr(n(), name)) *m.add_attribute() = *at;
      if (!float_out) quantize(f, in(7), in(8), y);
    }
    return Status::ok();
  }

  // QLinearSoftmax's `opset` attribute says which Softmax it means: from 13 one axis,
  // before it the input coerced to 2-D at `axis`.
  Status softmax(const std::string& y) {
    const int64_t axis = attr_int(n(), "axis", -1);
    const bool one_axis = attr_int(n(), "opset", opset_) >= 13;
    const std::string x = dequantize(in(0), in(1), in(2));
    const std::string f = value("softmax");
    if (one_axis == (opset_ >= 13) || (one_axis && axis == -1)) {
      // The model's Softmax means the same (over the last axis both forms agree).
      ::onnx::NodeProto& m = add("Softmax", {x}, f, true);
      set_int(m, "axis", axis);
    } else if (!one_axis) {  // opset >= 13: Flatten at axis, Softmax rows, shape back
      const std::string flat = value("flat"), rows = value("rows"), shape = value("shape");
      ::onnx::NodeProto& fl = add("Flatten", {x}, flat);
      set_int(fl, "axis", axis);
      ::onnx::NodeProto& sm = add("Softmax", {flat}, rows, true);
      set_int(sm, "axis", -1);
      add("Shape", {x}, shape);
      add("Reshape", {rows, shape}, f);
    } else {
      return invalid_argument(where() + ": a Softmax over axis " + std::to_string(axis) +
                              " alone (opset 13 semantics) in a model of ONNX opset " +
                              std::to_string(opset_) + ", whose Softmax cannot express it");
    }
    quantize(f, in(3), in(4), y);
    return Status::ok();
  }

  ::onnx::GraphProto& g_;
  int64_t opset_;
  std::set<std::string> used_;
  const ::onnx::NodeProto* node_ = nullptr;
  std::vector<::onnx::NodeProto> made_;
};

}  // namespace

Status expand_contrib_quant_ops(::onnx::GraphProto& graph, int64_t default_opset) {
  return Expander(graph, default_opset).run();
}

}  // namespace infer::onnx_io
