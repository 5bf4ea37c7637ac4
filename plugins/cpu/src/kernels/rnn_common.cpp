#include "rnn_common.hpp"

#include <cctype>
#include <cstring>

namespace infer::cpu::rnn {
namespace {

// The activation functions the RNN ops accept, whether each takes alpha/beta, and their
// defaults (those of the ONNX operators of the same name).
struct ActivationInfo {
  const char* name;
  Activation::Kind kind;
  bool takes_alpha, takes_beta;
  float default_alpha, default_beta;
};
constexpr ActivationInfo kActivations[] = {
    {"relu", Activation::Kind::kRelu, false, false, 0, 0},
    {"tanh", Activation::Kind::kTanh, false, false, 0, 0},
    {"sigmoid", Activation::Kind::kSigmoid, false, false, 0, 0},
    {"affine", Activation::Kind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", Activation::Kind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", Activation::Kind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", Activation::Kind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", Activation::Kind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", Activation::Kind::kElu, true, false, 1.0f, 0},
    {"softsign", Activation::Kind::kSoftsign, false, false, 0, 0},
    {"softplus", Activation::Kind::kSoftplus, false, false, 0, 0},
};

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> attr_strings(const infer_node_view& n, const char* name) {
  std::vector<std::string> out;
  const infer_attr_view* a = sdk::find_attr(&n, name);
  if (a == nullptr || a->type != INFER_ATTR_STRINGS) return out;
  for (size_t i = 0; i < a->count; ++i) out.emplace_back(a->strings[i] ? a->strings[i] : "");
  return out;
}

// Fails unless `t` (when present) has exactly `want` dims; `meaning` spells the dims out.
Status check_shape(const Tensor* t, const char* name, const Dims& want, const char* meaning) {
  if (t == nullptr || t->dims == want) return Status::ok();
  return invalid(name, " has shape ", dims_str(t->dims), ", expected ", dims_str(want), " (",
                 meaning, ")");
}

}  // namespace

Result<RnnAttrs> read_rnn_attrs(const infer_node_view& n,
                                std::initializer_list<const char*> defaults) {
  RnnAttrs a;
  const char* op = n.op_type;
  const std::string dir = attr_s(n, "direction", "forward");
  if (dir == "forward") {
    a.direction = Direction::kForward;
  } else if (dir == "reverse") {
    a.direction = Direction::kReverse;
  } else if (dir == "bidirectional") {
    a.direction = Direction::kBidirectional;
  } else {
    return unsupported(op, " direction '", dir,
                       "' is not one of 'forward', 'reverse', 'bidirectional'");
  }
  a.num_directions = a.direction == Direction::kBidirectional ? 2 : 1;
  if (has_attr(n, "hidden_size")) {
    a.hidden_size = attr_i(n, "hidden_size", -1);
    if (a.hidden_size <= 0)
      return unsupported(op, " hidden_size must be positive, got ", a.hidden_size);
  }
  a.layout = attr_i(n, "layout", 0);
  if (a.layout != 0 && a.layout != 1)
    return unsupported(op, " layout must be 0 or 1, got ", a.layout);
  if (has_attr(n, "clip")) {
    const double clip = attr_f(n, "clip", 0);
    if (!(clip > 0)) return unsupported(op, " clip must be positive, got ", clip);
    a.clip = static_cast<float>(clip);
  }
  a.linear_before_reset = attr_i(n, "linear_before_reset", 0) != 0;
  a.input_forget = attr_i(n, "input_forget", 0) != 0;

  // Activations: one list for both directions (forward first). A list of one
  // direction's functions for a bidirectional node is used for both directions, as
  // several exporters write it that way.
  const int64_t per_dir = static_cast<int64_t>(defaults.size());
  a.activations_per_direction = per_dir;
  std::vector<std::string> names = attr_strings(n, "activations");
  if (names.empty()) {
    for (int64_t d = 0; d < a.num_directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (a.num_directions == 2 && static_cast<int64_t>(names.size()) == per_dir) {
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = twice;
  }
  if (static_cast<int64_t>(names.size()) != per_dir * a.num_directions)
    return unsupported(op, " activations has ", names.size(), " functions, expected ",
                       per_dir * a.num_directions, " (", per_dir, " per direction, ",
                       a.num_directions, a.num_directions == 1 ? " direction)" : " directions)");
  // alpha and beta values are consumed in order by the functions that take them.
  const std::vector<double> alphas = attr_floats(n, "activation_alpha");
  const std::vector<double> betas = attr_floats(n, "activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string key = lower(name);
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& e : kActivations)
      if (key == e.name) info = &e;
    if (info == nullptr)
      return unsupported(op, " activation '", name,
                         "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                         "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
    Activation act;
    act.kind = info->kind;
    act.alpha = info->default_alpha;
    act.beta = info->default_beta;
    if (info->takes_alpha && next_alpha < alphas.size())
      act.alpha = static_cast<float>(alphas[next_alpha++]);
    if (info->takes_beta && next_beta < betas.size())
      act.beta = static_cast<float>(betas[next_beta++]);
    a.activations.push_back(act);
  }
  return a;
}

Status check_rnn_node(const infer_node_view& node, std::initializer_list<const char*> defaults,
                      size_t max_inputs) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, max_inputs));
  for (size_t i = 0; i < max_inputs; ++i) {
    if (i == 4) {
      CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), dtypes::kInts, "sequence_lens"));
      continue;
    }
    const infer_value_view* v = node_input(node, i);
    if (v != nullptr && node.inputs[0] != nullptr && v->dtype != node.inputs[0]->dtype)
      return unsupported(node.op_type, " input ", i, " is ", dtype_name(v->dtype), " but X is ",
                         dtype_name(node.inputs[0]->dtype));
    CPU_RETURN_IF_ERROR(check_dtype(node, v, kRnnDtypes, "X, W, R and the states"));
  }
  CPU_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(node, defaults));
  (void)a;
  return Status::ok();
}

Result<RnnShape> check_rnn_shapes(const KernelContext& ctx, const RnnAttrs& a, int64_t gates,
                                  bool lstm) {
  const Tensor* X = ctx.input(0);
  const Tensor* W = ctx.input(1);
  const Tensor* R = ctx.input(2);
  if (X == nullptr || W == nullptr || R == nullptr) return invalid("X, W and R are required");
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (i != 4 && t != nullptr && t->dtype != X->dtype)
      return invalid("input ", i, " is ", dtype_name(t->dtype), " but X is ", dtype_name(X->dtype));
  }
  if (X->rank() != 3)
    return invalid("X has shape ", dims_str(X->dims), ", expected 3 dims ",
                   a.layout == 0 ? "[seq_length, batch_size, input_size]"
                                 : "[batch_size, seq_length, input_size]");
  RnnShape s;
  s.gates = gates;
  s.dirs = a.num_directions;
  s.seq = a.layout == 0 ? X->dims[0] : X->dims[1];
  s.batch = a.layout == 0 ? X->dims[1] : X->dims[0];
  s.input = X->dims[2];
  if (R->rank() != 3)
    return invalid("R has shape ", dims_str(R->dims), ", expected 3 dims [num_directions, ", gates,
                   "*hidden_size, hidden_size]");
  s.hidden = a.hidden_size > 0 ? a.hidden_size : R->dims[2];
  const int64_t gh = s.gh();
  // The dims spelled out with their values, so that a wrong hidden_size is easy to spot.
  const std::string g = gates == 1 ? "" : cat(gates, "*");
  const std::string from_r = a.hidden_size > 0 ? "" : " (hidden_size from R)";
  CPU_RETURN_IF_ERROR(check_shape(W, "W", {s.dirs, gh, s.input},
                                  cat("num_directions = ", s.dirs, ", ", g, "hidden_size = ", gh,
                                      from_r, ", input_size = ", s.input)
                                      .c_str()));
  CPU_RETURN_IF_ERROR(check_shape(R, "R", {s.dirs, gh, s.hidden},
                                  cat("num_directions = ", s.dirs, ", ", g, "hidden_size = ", gh,
                                      ", hidden_size = ", s.hidden, from_r)
                                      .c_str()));
  CPU_RETURN_IF_ERROR(check_shape(
      ctx.input(3), "B", {s.dirs, 2 * gh},
      cat("num_directions = ", s.dirs, ", 2*", g, "hidden_size = ", 2 * gh, from_r).c_str()));
  if (const Tensor* L = ctx.input(4))
    CPU_RETURN_IF_ERROR(check_shape(L, "sequence_lens", {s.batch}, "batch_size"));
  const Dims state =
      a.layout == 0 ? Dims{s.dirs, s.batch, s.hidden} : Dims{s.batch, s.dirs, s.hidden};
  const char* state_meaning = a.layout == 0 ? "num_directions, batch_size, hidden_size"
                                            : "batch_size, num_directions, hidden_size";
  CPU_RETURN_IF_ERROR(check_shape(ctx.input(5), "initial_h", state, state_meaning));
  if (lstm) {
    CPU_RETURN_IF_ERROR(check_shape(ctx.input(6), "initial_c", state, state_meaning));
    CPU_RETURN_IF_ERROR(
        check_shape(ctx.input(7), "P", {s.dirs, 3 * s.hidden}, "num_directions, 3*hidden_size"));
  }
  return s;
}

Result<std::vector<int64_t>> read_sequence_lens(const KernelContext& ctx, const RnnShape& s) {
  std::vector<int64_t> lens(static_cast<size_t>(s.batch), s.seq);
  const Tensor* L = ctx.input(4);
  if (L == nullptr) return lens;
  CPU_ASSIGN_OR_RETURN(lens, read_int_list(*L, "sequence_lens"));
  for (size_t b = 0; b < lens.size(); ++b)
    if (lens[b] < 0 || lens[b] > s.seq)
      return invalid("sequence_lens[", b, "] is ", lens[b], ", outside [0, seq_length = ", s.seq,
                     "]");
  return lens;
}

}  // namespace infer::cpu::rnn

namespace infer::cpu::rnn {

std::shared_ptr<const RnnWeights<float>> prepare_rnn_weights(const infer_node_view& node,
                                                             int64_t gates, bool lstm) {
  auto input = [&](size_t i) { return i < node.num_inputs ? node.inputs[i] : nullptr; };
  // A float32 constant of exactly `dims`.
  auto usable = [&](const infer_value_view* v, std::initializer_list<int64_t> dims) {
    if (v == nullptr || v->dtype != INFER_DTYPE_FLOAT32 || v->const_data == nullptr ||
        v->rank != static_cast<int64_t>(dims.size()))
      return false;
    int64_t n = 1, k = 0;
    for (int64_t d : dims) {
      if (v->dims[k++] != d) return false;
      n *= d;
    }
    return v->const_size == static_cast<size_t>(n) * sizeof(float);
  };
  const infer_value_view* W = input(1);
  const infer_value_view* R = input(2);
  if (W == nullptr || R == nullptr || W->rank != 3 || R->rank != 3) return nullptr;
  RnnShape s;
  s.gates = gates;
  s.dirs = W->dims[0];
  s.input = W->dims[2];
  s.hidden = R->dims[2];
  const int64_t gh = s.gh();
  if (s.dirs <= 0 || s.input <= 0 || s.hidden <= 0 || !usable(W, {s.dirs, gh, s.input}) ||
      !usable(R, {s.dirs, gh, s.hidden}))
    return nullptr;
  const infer_value_view* B = input(3);
  const infer_value_view* P = lstm ? input(7) : nullptr;
  if ((B != nullptr && !usable(B, {s.dirs, 2 * gh})) ||
      (P != nullptr && !usable(P, {s.dirs, 3 * s.hidden})))
    return nullptr;
  auto w = std::make_shared<RnnWeights<float>>();
  auto data = [](const infer_value_view* v) {
    return v != nullptr ? static_cast<const float*>(v->const_data) : nullptr;
  };
  load_rnn_weights<float>(data(W), data(R), data(B), data(P), s, w.get());
  return w;
}

}  // namespace infer::cpu::rnn
