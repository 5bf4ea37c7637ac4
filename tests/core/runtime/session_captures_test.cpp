// Values that If, Loop and Scan bodies read from enclosing graphs by name (captures):
// graph inputs, initializers and values computed by other nodes, read one, two and three
// levels down, by bodies that do not declare them, also when the value is a graph output
// or a body returns it directly. Each model runs on cpu alone and split across the
// example device and cpu (the example device computes the captured intermediate value;
// the control-flow node runs on cpu, so the value crosses devices to reach the body), at
// optimization levels 0 and 3. Expected outputs are worked out by hand below each model.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <string>
#include <vector>

#include "onnx_graph_proto.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::tree_options;
using namespace testing::proto;  // NOLINT: the models below read better

// ---- Writing the models with the onnx protobuf API --------------------------------

// A body with one node `op` over `in` (read from the enclosing graph) and output `out`.
::onnx::GraphProto unary_body(const std::string& name, const std::string& op, const std::string& in,
                              const std::string& out) {
  ::onnx::GraphProto b;
  b.set_name(name);
  node(b, name + "_" + op, op, {in}, {out});
  output(b, out, ::onnx::TensorProto::FLOAT, {4});
  return b;
}

constexpr int kF32 = ::onnx::TensorProto::FLOAT;
constexpr int kBool = ::onnx::TensorProto::BOOL;
constexpr int kI64 = ::onnx::TensorProto::INT64;

// ---- Running them -----------------------------------------------------------------

const std::vector<float> kX = {1.5f, -2.0f, 0.5f, 3.0f};
const std::vector<float> kW = {0.5f, 1.0f, 2.0f, -1.0f};

Tensor f32(const std::vector<float>& v, std::vector<int64_t> dims) {
  auto t =
      Tensor::from_bytes(DataType::kFloat32, std::move(dims), v.data(), v.size() * sizeof(float));
  EXPECT_TRUE(t.is_ok());
  return *t;
}
Tensor boolean(bool b) {
  const uint8_t v = b ? 1 : 0;
  auto t = Tensor::from_bytes(DataType::kBool, {}, &v, 1);
  EXPECT_TRUE(t.is_ok());
  return *t;
}
Tensor i64(int64_t v) {
  auto t = Tensor::from_bytes(DataType::kInt64, {}, &v, sizeof(v));
  EXPECT_TRUE(t.is_ok());
  return *t;
}

std::vector<float> values_of(const Tensor& t) {
  const float* p = t.data_as<float>();
  size_t n = 1;
  for (int64_t d : t.shape()) n *= static_cast<size_t>(d);
  return std::vector<float>(p, p + n);
}

struct Config {
  std::vector<std::string> backends;
  int opt_level;
};
std::string describe(const Config& c) {
  std::string s;
  for (const auto& b : c.backends) s += (s.empty() ? "" : ",") + b;
  return s + " at opt level " + std::to_string(c.opt_level);
}
const std::vector<Config>& configs() {
  static const std::vector<Config> all = {
      {{"cpu"}, 0}, {{"cpu"}, 3}, {{"example", "cpu"}, 0}, {{"example", "cpu"}, 3}};
  return all;
}

// Runs `path` under every config with `inputs` and checks the outputs named in `expected`.
// In the split configs the model's node "square" (when it has one) is pinned to the
// example device, which a lone node would otherwise leave (islands under 3 nodes move to
// cpu): its output then has to be copied to cpu for the body that captures it.
void expect_outputs(const std::string& path, const std::vector<NamedTensor>& inputs,
                    const std::vector<std::pair<std::string, std::vector<float>>>& expected,
                    bool has_square = false) {
  for (const Config& c : configs()) {
    SCOPED_TRACE(describe(c));
    SessionOptions o = tree_options(c.backends);
    o.optimization_level = c.opt_level;
    const bool split = c.backends.front() == "example";
    if (split && has_square) o.placement.push_back(PlacementPin{"square", "example"});
    auto session = Session::create(path, o);
    ASSERT_TRUE(session.is_ok()) << session.status().message();
    if (split && has_square) {
      bool on_example = false, copied = false;
      for (const NodePlacement& n : (*session)->plan().nodes)
        on_example = on_example || (n.node == "square" && n.backend == "example");
      for (const CopySummary& copy : (*session)->plan().copies)
        copied = copied || (copy.tensor == "sq" && copy.from_backend == "example" &&
                            copy.to_backend == "cpu");
      EXPECT_TRUE(on_example) << (*session)->plan().to_text();
      EXPECT_TRUE(copied) << (*session)->plan().to_text();
    }
    auto out = (*session)->run(inputs);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    for (const auto& [name, want] : expected) {
      bool found = false;
      for (const NamedTensor& t : *out) {
        if (t.name != name) continue;
        found = true;
        const std::vector<float> got = values_of(t.tensor);
        ASSERT_EQ(got.size(), want.size()) << name;
        for (size_t i = 0; i < want.size(); ++i)
          EXPECT_FLOAT_EQ(got[i], want[i]) << name << "[" << i << "]";
      }
      EXPECT_TRUE(found) << "no output named " << name;
    }
  }
}

std::vector<float> neg(std::vector<float> v) {
  for (float& x : v) x = -x;
  return v;
}
std::vector<float> relu(std::vector<float> v) {
  for (float& x : v) x = x > 0 ? x : 0;
  return v;
}
std::vector<float> square(std::vector<float> v) {
  for (float& x : v) x = x * x;
  return v;
}

// ---- The reproduction: If reads a graph input only inside its branches --------

TEST(SessionCaptures, IfBranchesReadAGraphInputTheIfDoesNotTake) {
  ::onnx::GraphProto g;
  g.set_name("if_capture_input");
  input(g, "x", kF32, {4});
  input(g, "sr", kI64, {});
  auto* k = node(g, "k", "Constant", {}, {"k"});
  {
    auto* a = k->add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(::onnx::TensorProto::INT64);
    a->mutable_t()->add_int64_data(16000);
  }
  node(g, "eq", "Equal", {"sr", "k"}, {"c"});
  auto* if_node = node(g, "if", "If", {"c"}, {"y"});
  graph_attr(if_node, "then_branch", unary_body("then", "Relu", "x", "t"));
  graph_attr(if_node, "else_branch", unary_body("else", "Neg", "x", "e"));
  output(g, "y", kF32, {4});
  const std::string path = save(g, "captures_if_input.onnx");

  expect_outputs(path, {{"x", f32(kX, {4})}, {"sr", i64(16000)}}, {{"y", relu(kX)}});
  expect_outputs(path, {{"x", f32(kX, {4})}, {"sr", i64(8000)}}, {{"y", neg(kX)}});
}

// ---- Bodies are optimized too: weights an exporter slices inside a branch -------------

// outer_if(c): then { Constant kw = kW; inner_if(c): then { w = Concat(kw[2:4], kw[0:2]);
// t = x * w } else { Neg(x) } } else { Neg(x) }. The inner branch reads kw, a Constant node
// of the enclosing branch: the session folds the Slices and the Concat at load time.
TEST(SessionCaptures, BodiesFoldWhatTheyComputeFromEnclosingConstants) {
  ::onnx::GraphProto inner_then;
  inner_then.set_name("inner_then");
  raw_initializer<int64_t>(inner_then, "zero", kI64, {1}, {0});
  raw_initializer<int64_t>(inner_then, "two", kI64, {1}, {2});
  raw_initializer<int64_t>(inner_then, "four", kI64, {1}, {4});
  node(inner_then, "low", "Slice", {"kw", "zero", "two"}, {"s0"});
  node(inner_then, "high", "Slice", {"kw", "two", "four"}, {"s1"});
  int_attr(node(inner_then, "swap", "Concat", {"s1", "s0"}, {"w"}), "axis", 0);
  node(inner_then, "scale", "Mul", {"x", "w"}, {"t"});
  output(inner_then, "t", kF32, {4});

  ::onnx::GraphProto outer_then;
  outer_then.set_name("outer_then");
  auto* kw = node(outer_then, "kw", "Constant", {}, {"kw"});
  {
    auto* a = kw->add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(4);
    for (float v : kW) a->mutable_t()->add_float_data(v);
  }
  auto* inner = node(outer_then, "inner_if", "If", {"c"}, {"u"});
  graph_attr(inner, "then_branch", std::move(inner_then));
  graph_attr(inner, "else_branch", unary_body("inner_else", "Neg", "x", "n"));
  output(outer_then, "u", kF32, {4});

  ::onnx::GraphProto g;
  g.set_name("fold_in_bodies");
  input(g, "x", kF32, {4});
  input(g, "c", kBool, {});
  auto* outer = node(g, "outer_if", "If", {"c"}, {"y"});
  graph_attr(outer, "then_branch", std::move(outer_then));
  graph_attr(outer, "else_branch", unary_body("outer_else", "Neg", "x", "m"));
  output(g, "y", kF32, {4});
  const std::string path = save(g, "captures_fold_in_bodies.onnx");

  const std::vector<float> want = {kX[0] * kW[2], kX[1] * kW[3], kX[2] * kW[0], kX[3] * kW[1]};
  expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(true)}}, {{"y", want}});
  expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(false)}}, {{"y", neg(kX)}});

  auto session = Session::create(path, tree_options({"cpu"}));
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  bool folded = false;
  for (const std::string& line : (*session)->plan().passes)
    folded = folded || line.rfind("constant_folding (in subgraphs): ", 0) == 0;
  EXPECT_TRUE(folded) << (*session)->plan().to_text();
}

// ---- If nested `depth` levels deep, the innermost branches reading `v` --------------

enum class Source { kGraphInput, kInitializer, kIntermediate };
const char* source_name(Source s) {
  switch (s) {
    case Source::kGraphInput:
      return "graph input x";
    case Source::kInitializer:
      return "initializer w";
    case Source::kIntermediate:
      return "intermediate sq = x * x";
  }
  return "?";
}

// Level `level` of the nesting: an If on the captured condition c whose branches are the
// next level; the innermost branches compute Neg(v) (then) and Relu(v) (else). Only the
// innermost bodies name v: the bodies in between declare nothing.
::onnx::GraphProto nested_body(const std::string& prefix, int level, int depth, bool then_side,
                               const std::string& v) {
  if (level == depth)
    return then_side ? unary_body(prefix, "Neg", v, prefix + "_out")
                     : unary_body(prefix, "Relu", v, prefix + "_out");
  ::onnx::GraphProto b;
  b.set_name(prefix);
  auto* n = node(b, prefix + "_if", "If", {"c"}, {prefix + "_out"});
  graph_attr(n, "then_branch", nested_body(prefix + "_t", level + 1, depth, true, v));
  graph_attr(n, "else_branch", nested_body(prefix + "_e", level + 1, depth, false, v));
  output(b, prefix + "_out", kF32, {4});
  return b;
}

// y = (c ? -v : relu(v)) through `depth` levels of If; with `v_is_output`, v (which must
// be the intermediate sq) is also a graph output.
std::string write_nested_if(Source source, int depth, bool v_is_output, const std::string& file) {
  ::onnx::GraphProto g;
  g.set_name("nested_if");
  input(g, "x", kF32, {4});
  input(g, "c", kBool, {});
  std::string v = "x";
  if (source == Source::kInitializer) {
    f32_initializer(g, "w", {4}, kW);
    v = "w";
  } else if (source == Source::kIntermediate) {
    // Mul runs on the example device in a split session.
    node(g, "square", "Mul", {"x", "x"}, {"sq"});
    v = "sq";
  }
  auto* top = node(g, "if", "If", {"c"}, {"y"});
  graph_attr(top, "then_branch", nested_body("l1t", 1, depth, true, v));
  graph_attr(top, "else_branch", nested_body("l1e", 1, depth, false, v));
  output(g, "y", kF32, {4});
  if (v_is_output) output(g, v, kF32, {4});
  return save(g, file);
}

TEST(SessionCaptures, NestedIfReadsInputsInitializersAndIntermediatesOneToThreeLevelsDown) {
  for (Source source : {Source::kGraphInput, Source::kInitializer, Source::kIntermediate}) {
    const std::vector<float> v = source == Source::kGraphInput    ? kX
                                 : source == Source::kInitializer ? kW
                                                                  : square(kX);
    for (int depth = 1; depth <= 3; ++depth) {
      SCOPED_TRACE(std::string(source_name(source)) + " read " + std::to_string(depth) +
                   " level(s) down");
      const std::string path = write_nested_if(source, depth, false, "captures_nested.onnx");
      const bool has_square = source == Source::kIntermediate;
      expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(true)}}, {{"y", neg(v)}},
                     has_square);
      expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(false)}}, {{"y", relu(v)}},
                     has_square);
    }
  }
}

TEST(SessionCaptures, ACapturedIntermediateThatIsAlsoAGraphOutput) {
  const std::string path = write_nested_if(Source::kIntermediate, 2, true, "captures_output.onnx");
  expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(true)}},
                 {{"y", neg(square(kX))}, {"sq", square(kX)}}, true);
}

TEST(SessionCaptures, ABranchReturnsAnOuterValueDirectly) {
  ::onnx::GraphProto g;
  g.set_name("branch_returns_outer");
  input(g, "x", kF32, {4});
  input(g, "c", kBool, {});
  node(g, "square", "Mul", {"x", "x"}, {"sq"});
  auto* n = node(g, "if", "If", {"c"}, {"y"});
  ::onnx::GraphProto then_branch;  // no nodes: its output is sq itself
  then_branch.set_name("then");
  output(then_branch, "sq", kF32, {4});
  graph_attr(n, "then_branch", then_branch);
  graph_attr(n, "else_branch", unary_body("else", "Neg", "x", "e"));
  output(g, "y", kF32, {4});
  const std::string path = save(g, "captures_branch_returns_outer.onnx");
  expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(true)}}, {{"y", square(kX)}}, true);
  expect_outputs(path, {{"x", f32(kX, {4})}, {"c", boolean(false)}}, {{"y", neg(kX)}}, true);
}

// ---- Loop and Scan bodies --------------------------------------------------------

// y = x + n * sq, accumulated by a Loop whose body adds the captured sq each iteration;
// with `nested`, the Add sits in an If (always true) inside the body: sq is read two
// levels down.
std::string write_loop(bool nested, const std::string& file) {
  ::onnx::GraphProto g;
  g.set_name("loop_capture");
  input(g, "x", kF32, {4});
  input(g, "n", kI64, {});
  node(g, "square", "Mul", {"x", "x"}, {"sq"});
  auto* loop = node(g, "loop", "Loop", {"n", "", "x"}, {"y"});
  ::onnx::GraphProto body;
  body.set_name("loop_body");
  input(body, "i", kI64, {});
  input(body, "cond_in", kBool, {});
  input(body, "acc_in", kF32, {4});
  node(body, "keep_going", "Identity", {"cond_in"}, {"cond_out"});
  if (nested) {
    auto* inner = node(body, "inner_if", "If", {"cond_in"}, {"acc_out"});
    ::onnx::GraphProto add_branch;
    add_branch.set_name("add_branch");
    node(add_branch, "add", "Add", {"acc_in", "sq"}, {"added"});
    output(add_branch, "added", kF32, {4});
    graph_attr(inner, "then_branch", add_branch);
    graph_attr(inner, "else_branch", unary_body("never", "Identity", "acc_in", "same"));
  } else {
    node(body, "add", "Add", {"acc_in", "sq"}, {"acc_out"});
  }
  output(body, "cond_out", kBool, {});
  output(body, "acc_out", kF32, {4});
  graph_attr(loop, "body", body);
  output(g, "y", kF32, {4});
  return save(g, file);
}

TEST(SessionCaptures, LoopBodyReadsAnIntermediateOneAndTwoLevelsDown) {
  for (bool nested : {false, true}) {
    SCOPED_TRACE(nested ? "inside an If of the body" : "in the body");
    const std::string path = write_loop(nested, "captures_loop.onnx");
    for (int64_t n : {0, 1, 3}) {
      std::vector<float> want = kX;
      for (size_t i = 0; i < want.size(); ++i) want[i] += static_cast<float>(n) * kX[i] * kX[i];
      expect_outputs(path, {{"x", f32(kX, {4})}, {"n", i64(n)}}, {{"y", want}}, true);
    }
  }
}

// s = sum over the rows r of X of r * w (w a graph input the body captures), and the
// running sums as the scan output.
TEST(SessionCaptures, ScanBodyReadsAGraphInput) {
  ::onnx::GraphProto g;
  g.set_name("scan_capture");
  input(g, "X", kF32, {3, 4});
  input(g, "w", kF32, {4});
  f32_initializer(g, "zeros", {4}, {0, 0, 0, 0});
  auto* scan = node(g, "scan", "Scan", {"zeros", "X"}, {"s", "running"});
  int_attr(scan, "num_scan_inputs", 1);
  ::onnx::GraphProto body;
  body.set_name("scan_body");
  input(body, "s_in", kF32, {4});
  input(body, "row", kF32, {4});
  node(body, "scale", "Mul", {"row", "w"}, {"scaled"});
  node(body, "acc", "Add", {"s_in", "scaled"}, {"s_out"});
  node(body, "copy", "Identity", {"s_out"}, {"r_out"});
  output(body, "s_out", kF32, {4});
  output(body, "r_out", kF32, {4});
  graph_attr(scan, "body", body);
  output(g, "s", kF32, {4});
  output(g, "running", kF32, {3, 4});
  const std::string path = save(g, "captures_scan.onnx");

  const std::vector<float> X = {1, 2, 3, 4, -1, 0.5f, 2, 1, 0, -3, 1, 2};
  std::vector<float> s(4, 0), running;
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 4; ++j) s[j] += X[r * 4 + j] * kW[j];
    running.insert(running.end(), s.begin(), s.end());
  }
  expect_outputs(path, {{"X", f32(X, {3, 4})}, {"w", f32(kW, {4})}},
                 {{"s", s}, {"running", running}});
}

// ---- Bad bodies: a clear error naming the node, never a crash ------------------------

std::string create_error(const ::onnx::GraphProto& g, const std::string& file) {
  auto session = Session::create(save(g, file), tree_options({"cpu"}));
  EXPECT_FALSE(session.is_ok());
  return session.is_ok() ? std::string() : session.status().message();
}

TEST(SessionCaptures, BadBodiesFailNamingTheNode) {
  auto if_graph = [](::onnx::GraphProto then_branch) {
    ::onnx::GraphProto g;
    g.set_name("bad_if");
    input(g, "x", kF32, {4});
    input(g, "c", kBool, {});
    auto* n = node(g, "the_if", "If", {"c"}, {"y"});
    graph_attr(n, "then_branch", std::move(then_branch));
    graph_attr(n, "else_branch", unary_body("else", "Neg", "x", "e"));
    output(g, "y", kF32, {4});
    return g;
  };
  // A body reading a name no enclosing graph defines.
  const std::string undefined =
      create_error(if_graph(unary_body("then", "Relu", "nowhere", "t")), "captures_bad_name.onnx");
  EXPECT_NE(undefined.find("the_if"), std::string::npos) << undefined;
  EXPECT_NE(undefined.find("'nowhere'"), std::string::npos) << undefined;

  // Branches that disagree in output count, then in dtype.
  ::onnx::GraphProto two = unary_body("then", "Relu", "x", "t");
  node(two, "then_neg", "Neg", {"x"}, {"t2"});
  output(two, "t2", kF32, {4});
  const std::string count = create_error(if_graph(two), "captures_bad_count.onnx");
  EXPECT_NE(count.find("the_if"), std::string::npos) << count;
  EXPECT_NE(count.find("then_branch has 2 outputs but else_branch has 1"), std::string::npos)
      << count;

  ::onnx::GraphProto cast;
  cast.set_name("then");
  int_attr(node(cast, "to_int", "Cast", {"x"}, {"t"}), "to", kI64);
  output(cast, "t", kI64, {4});
  const std::string dtype = create_error(if_graph(cast), "captures_bad_dtype.onnx");
  EXPECT_NE(dtype.find("the_if"), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("int64 in then_branch but float32 in else_branch"), std::string::npos)
      << dtype;
}

}  // namespace
}  // namespace infer
