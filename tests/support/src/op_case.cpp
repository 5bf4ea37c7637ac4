#include "infer/test_support/op_case.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "infer/plugin.hpp"

namespace infer::test {
namespace {

class ParseError {
 public:
  explicit ParseError(std::string m) : message(std::move(m)) {}
  std::string message;
};

template <typename T>
void put(std::vector<uint8_t>* bytes, T v) {
  size_t at = bytes->size();
  bytes->resize(at + sizeof(T));
  std::memcpy(bytes->data() + at, &v, sizeof(T));
}

double parse_number(const std::string& tok) {
  char* end = nullptr;
  double v = std::strtod(tok.c_str(), &end);
  if (end == tok.c_str() || *end != '\0') throw ParseError("bad number '" + tok + "'");
  return v;
}

int64_t parse_int(const std::string& tok) {
  char* end = nullptr;
  long long v = std::strtoll(tok.c_str(), &end, 0);
  if (end == tok.c_str() || *end != '\0') throw ParseError("bad integer '" + tok + "'");
  return v;
}

uint64_t parse_uint(const std::string& tok) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(tok.c_str(), &end, 0);
  if (end == tok.c_str() || *end != '\0') throw ParseError("bad integer '" + tok + "'");
  return v;
}

void append_value(infer_dtype dt, const std::string& tok, std::vector<uint8_t>* b) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32:
      put(b, static_cast<float>(parse_number(tok)));
      break;
    case INFER_DTYPE_FLOAT64:
      put(b, parse_number(tok));
      break;
    case INFER_DTYPE_INT8:
      put(b, static_cast<int8_t>(parse_int(tok)));
      break;
    case INFER_DTYPE_UINT8:
      put(b, static_cast<uint8_t>(parse_uint(tok)));
      break;
    case INFER_DTYPE_BOOL:
      put(b, static_cast<uint8_t>(parse_uint(tok) != 0));
      break;
    case INFER_DTYPE_INT16:
      put(b, static_cast<int16_t>(parse_int(tok)));
      break;
    case INFER_DTYPE_UINT16:
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16:
      put(b, static_cast<uint16_t>(parse_uint(tok)));
      break;
    case INFER_DTYPE_INT32:
      put(b, static_cast<int32_t>(parse_int(tok)));
      break;
    case INFER_DTYPE_UINT32:
      put(b, static_cast<uint32_t>(parse_uint(tok)));
      break;
    case INFER_DTYPE_INT64:
      put(b, parse_int(tok));
      break;
    case INFER_DTYPE_UINT64:
      put(b, parse_uint(tok));
      break;
    default:
      throw ParseError("unsupported dtype " + dtype_name(dt));
  }
}

// Parses "<dtype> <rank> <dims...> [: <values...>]" starting at toks[at].
HostTensor parse_tensor(const std::vector<std::string>& toks, size_t at, bool with_data) {
  if (toks.size() < at + 2) throw ParseError("expected '<dtype> <rank> <dims...>'");
  HostTensor t;
  t.dtype = dtype_from_name(toks[at]);
  if (t.dtype == INFER_DTYPE_UNDEFINED) throw ParseError("unknown dtype '" + toks[at] + "'");
  int64_t rank = parse_int(toks[at + 1]);
  size_t i = at + 2;
  for (int64_t d = 0; d < rank; ++d, ++i) {
    if (i >= toks.size()) throw ParseError("missing dims");
    t.dims.push_back(parse_int(toks[i]));
  }
  if (!with_data) {
    if (i != toks.size()) throw ParseError("unexpected tokens after dims");
    return t;
  }
  if (i >= toks.size() || toks[i] != ":") throw ParseError("expected ':' before values");
  ++i;
  int64_t n = t.element_count();
  if (static_cast<int64_t>(toks.size() - i) != n)
    throw ParseError("expected " + std::to_string(n) + " values, got " +
                     std::to_string(toks.size() - i));
  for (; i < toks.size(); ++i) append_value(t.dtype, toks[i], &t.bytes);
  return t;
}

TensorSpec spec_of(const OpCaseValue& v) {
  TensorSpec s = TensorSpec::of(v.name, v.tensor.dtype, v.tensor.dims);
  if (v.kind == OpCaseValue::Kind::kConst) {
    s.is_const = true;
    s.data = v.tensor.bytes;
  }
  return s;
}

AttrSpec parse_attr(const std::vector<std::string>& toks) {
  if (toks.size() < 4) throw ParseError("attr needs '<type> <name> <value...>'");
  const std::string& type = toks[1];
  const std::string& name = toks[2];
  auto list_values = [&]() {
    int64_t n = parse_int(toks[3]);
    if (n > 0 && (toks.size() < 5 || toks[4] != ":")) throw ParseError("expected ':' in list");
    size_t first = n > 0 ? 5 : 4;
    if (static_cast<int64_t>(toks.size() - first) != n) throw ParseError("list length mismatch");
    return std::vector<std::string>(toks.begin() + static_cast<long>(first), toks.end());
  };
  if (type == "int") return AttrSpec::Int(name, parse_int(toks[3]));
  if (type == "float") return AttrSpec::Float(name, parse_number(toks[3]));
  if (type == "string") return AttrSpec::String(name, toks[3]);
  if (type == "ints") {
    std::vector<int64_t> v;
    for (const auto& t : list_values()) v.push_back(parse_int(t));
    return AttrSpec::Ints(name, v);
  }
  if (type == "floats") {
    std::vector<double> v;
    for (const auto& t : list_values()) v.push_back(parse_number(t));
    return AttrSpec::Floats(name, v);
  }
  if (type == "tensor") {
    HostTensor t = parse_tensor(toks, 3, true);
    TensorSpec s = TensorSpec::of(name, t.dtype, t.dims);
    s.data = t.bytes;
    return AttrSpec::Tensor(name, s);
  }
  throw ParseError("unknown attr type '" + type + "'");
}

OpCaseNode parse_node(const std::vector<std::string>& toks) {
  // node <op> <opset> <name> | ins... | outs...
  if (toks.size() < 6 || toks[4] != "|")
    throw ParseError("node needs '<op> <opset> <name> | ins | outs'");
  OpCaseNode n;
  n.op_type = toks[1];
  // "ai.infer:FusedConv": an operator of another domain.
  if (const size_t colon = n.op_type.find(':'); colon != std::string::npos) {
    n.domain = n.op_type.substr(0, colon);
    n.op_type = n.op_type.substr(colon + 1);
  }
  n.opset = parse_int(toks[2]);
  n.name = toks[3];
  size_t i = 5;
  for (; i < toks.size() && toks[i] != "|"; ++i) n.inputs.push_back(toks[i] == "-" ? "" : toks[i]);
  if (i == toks.size()) throw ParseError("node: missing second '|'");
  for (++i; i < toks.size(); ++i) n.outputs.push_back(toks[i] == "-" ? "" : toks[i]);
  return n;
}

bool close_enough(double a, double e, double atol, double rtol) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return a == e;
  return std::fabs(a - e) <= atol + rtol * std::fabs(e);
}

}  // namespace

std::vector<OpCase> load_op_cases(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    if (error) *error = path + ": cannot open";
    return {};
  }
  std::vector<OpCase> cases;
  std::string line;
  int lineno = 0;
  OpCase* cur = nullptr;
  try {
    while (std::getline(in, line)) {
      ++lineno;
      auto hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      std::istringstream ss(line);
      std::vector<std::string> toks;
      for (std::string t; ss >> t;) toks.push_back(t);
      if (toks.empty()) continue;
      const std::string& kw = toks[0];
      if (kw == "case") {
        if (cur) throw ParseError("'case' before 'end'");
        if (toks.size() != 2) throw ParseError("case needs a name");
        cases.emplace_back();
        cur = &cases.back();
        cur->name = toks[1];
        continue;
      }
      if (!cur) throw ParseError("'" + kw + "' outside a case");
      if (kw == "end") {
        cur = nullptr;
      } else if (kw == "tol") {
        if (toks.size() != 3) throw ParseError("tol needs atol and rtol");
        cur->atol = parse_number(toks[1]);
        cur->rtol = parse_number(toks[2]);
      } else if (kw == "input" || kw == "const" || kw == "value" || kw == "output") {
        if (toks.size() < 3) throw ParseError(kw + " needs a name and a tensor");
        OpCaseValue v;
        v.kind = kw == "input"   ? OpCaseValue::Kind::kInput
                 : kw == "const" ? OpCaseValue::Kind::kConst
                 : kw == "value" ? OpCaseValue::Kind::kValue
                                 : OpCaseValue::Kind::kOutput;
        v.name = toks[1];
        v.tensor = parse_tensor(toks, 2, kw != "value");
        cur->values.push_back(std::move(v));
      } else if (kw == "node") {
        cur->nodes.push_back(parse_node(toks));
      } else if (kw == "attr") {
        if (cur->nodes.empty()) throw ParseError("attr before any node");
        cur->nodes.back().attrs.push_back(parse_attr(toks));
      } else {
        throw ParseError("unknown keyword '" + kw + "'");
      }
    }
    if (cur) throw ParseError("missing 'end' for case " + cur->name);
  } catch (const ParseError& e) {
    if (error) *error = path + ":" + std::to_string(lineno) + ": " + e.message;
    return {};
  }
  return cases;
}

std::vector<HostTensor> OpCase::inputs() const {
  std::vector<HostTensor> out;
  for (const auto& v : values)
    if (v.kind == OpCaseValue::Kind::kInput) out.push_back(v.tensor);
  return out;
}

std::vector<std::string> OpCase::input_names() const {
  std::vector<std::string> out;
  for (const auto& v : values)
    if (v.kind == OpCaseValue::Kind::kInput) out.push_back(v.name);
  return out;
}

std::vector<const OpCaseValue*> OpCase::expected() const {
  std::vector<const OpCaseValue*> out;
  for (const auto& v : values)
    if (v.kind == OpCaseValue::Kind::kOutput) out.push_back(&v);
  return out;
}

const infer_graph_view* OpCase::build(GraphBuilder& builder) const {
  for (const auto& v : values) builder.value(spec_of(v));
  for (const auto& n : nodes) {
    // Values used by a node but never declared get a float32 view of unknown rank.
    for (const auto* list : {&n.inputs, &n.outputs})
      for (const auto& name : *list)
        if (!name.empty() && builder.find(name) == nullptr) {
          TensorSpec s = TensorSpec::f32(name, {});
          s.unknown_rank = true;
          builder.value(s);
        }
    builder.node_by_name(n.op_type, n.inputs, n.outputs, n.attrs, n.opset, n.name, n.domain);
  }
  std::vector<std::string> outs;
  for (const OpCaseValue* v : expected()) outs.push_back(v->name);
  return builder.graph(input_names(), outs, name);
}

std::string OpCase::compare(const std::vector<HostTensor>& actual) const {
  auto exp = expected();
  if (actual.size() != exp.size())
    return "expected " + std::to_string(exp.size()) + " outputs, got " +
           std::to_string(actual.size());
  std::ostringstream msg;
  for (size_t i = 0; i < exp.size(); ++i) {
    const HostTensor& e = exp[i]->tensor;
    const HostTensor& a = actual[i];
    if (a.dtype != e.dtype || a.dims != e.dims) {
      msg << "output '" << exp[i]->name << "': got " << a.describe() << ", expected "
          << e.describe() << "\n";
      continue;
    }
    std::vector<double> av = a.to_doubles(), ev = e.to_doubles();
    if (av.size() != ev.size()) {
      msg << "output '" << exp[i]->name << "': " << av.size() << " values, expected " << ev.size()
          << "\n";
      continue;
    }
    int shown = 0;
    for (size_t k = 0; k < ev.size(); ++k) {
      if (close_enough(av[k], ev[k], atol, rtol)) continue;
      if (shown++ < 8) {
        msg.precision(9);
        msg << "output '" << exp[i]->name << "'[" << k << "] = " << av[k] << ", expected " << ev[k]
            << "\n";
      }
    }
    if (shown > 8) msg << "... " << shown << " mismatches in output '" << exp[i]->name << "'\n";
  }
  return msg.str();
}

}  // namespace infer::test
