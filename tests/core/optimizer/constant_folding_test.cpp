#include "optimizer/constant_folding.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// A stand-in for the CPU plugin: elementwise Add/Mul/Neg on float32 and int64 tensors of
// equal shape (or with a one-element second operand), Dropout as identity, "Fill" making
// attribute `count` float zeros, and "Broken" failing like a kernel would. Anything else
// is Unsupported. It counts its calls so tests can tell "not tried" from "refused".
class FakeEvaluator final : public ConstantEvaluator {
 public:
  mutable int calls = 0;

  Result<std::vector<ir::TensorDataPtr>> evaluate(const ir::Graph& graph,
                                                  const ir::Node& node) const override {
    ++calls;
    if (node.op_type == "Broken") return internal_error(node.describe() + ": index out of range");
    if (node.op_type == "Fill") {
      const auto count = static_cast<size_t>(node.attr_int("count", 0));
      std::vector<uint8_t> bytes(count * sizeof(float), 0);
      return std::vector<ir::TensorDataPtr>{std::make_shared<const ir::TensorData>(
          DataType::kFloat32, std::vector<int64_t>{static_cast<int64_t>(count)}, std::move(bytes))};
    }
    if (node.op_type == "Constant") {
      const ir::Attribute* value = node.attr("value");
      if (value == nullptr || value->tensors.empty()) return unsupported(node.describe());
      return std::vector<ir::TensorDataPtr>{value->tensors[0]};
    }
    if (node.op_type == "Dropout") {
      std::vector<ir::TensorDataPtr> out{graph.value(node.inputs[0]).constant};
      out.resize(node.outputs.size());
      return out;
    }
    const ir::TensorData& a = *graph.value(node.inputs[0]).constant;
    if (node.op_type == "Neg")
      return std::vector<ir::TensorDataPtr>{map(a, a, [](auto x, auto) { return -x; })};
    if (node.op_type != "Add" && node.op_type != "Mul") return unsupported(node.describe());
    const ir::TensorData& b = *graph.value(node.inputs[1]).constant;
    if (a.dtype() != b.dtype() || (b.element_count() != 1 && b.dims() != a.dims()))
      return unsupported(node.describe() + ": shapes");
    if (node.op_type == "Add")
      return std::vector<ir::TensorDataPtr>{map(a, b, [](auto x, auto y) { return x + y; })};
    return std::vector<ir::TensorDataPtr>{map(a, b, [](auto x, auto y) { return x * y; })};
  }

 private:
  template <typename F>
  static ir::TensorDataPtr map(const ir::TensorData& a, const ir::TensorData& b, F f) {
    const int64_t n = a.element_count();
    std::vector<uint8_t> bytes(a.size_bytes());
    auto apply = [&](auto* out, const auto* x, const auto* y) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], y[b.element_count() == 1 ? 0 : i]);
    };
    if (a.dtype() == DataType::kFloat32)
      apply(reinterpret_cast<float*>(bytes.data()), a.as<float>(), b.as<float>());
    else
      apply(reinterpret_cast<int64_t*>(bytes.data()), a.as<int64_t>(), b.as<int64_t>());
    return std::make_shared<const ir::TensorData>(a.dtype(), a.dims(), std::move(bytes));
  }
};

PassContext context_with(const ConstantEvaluator* evaluator, int64_t opset = 17) {
  PassContext c = context_at(opset);
  c.evaluator = evaluator;
  return c;
}

int run(ir::Graph& g, const PassContext& ctx) { return apply_pass<ConstantFolding>(g, ctx); }

TEST(ConstantFolding, FoldsAChainInOneApplication) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.f32("b", {2}, {3, 4});
  b.input("x");
  b.node("add", "Add", {"a", "b"}, {"c"});
  b.node("mul", "Mul", {"c", "a"}, {"d"});
  b.node("neg", "Neg", {"d"}, {"e"});
  b.node("live", "Add", {"e", "x"}, {"y"});
  b.output("y");
  g.rebuild_links();

  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 3);
  EXPECT_EQ(node_names(g), Names({"live"}));
  // c = [1+3, 2+4] = [4, 6]; d = c * a = [4, 12]; e = -d.
  EXPECT_EQ(floats_of(g, "c"), std::vector<float>({4, 6}));
  EXPECT_EQ(floats_of(g, "d"), std::vector<float>({4, 12}));
  EXPECT_EQ(floats_of(g, "e"), std::vector<float>({-4, -12}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "e"));
  EXPECT_EQ(val(g, "e").producer, ir::kNoNode);
  EXPECT_EQ(val(g, "e").shape.to_string(), "[2]");
  // A fixed point: nothing is left to fold.
  EXPECT_EQ(run(g, context_with(&eval)), 0);
}

TEST(ConstantFolding, FoldsInt64AndTakesDimsFromTheResult) {
  ir::Graph g;
  GraphBuilder b(g);
  b.i64("s", {3}, {2, 3, 4});
  b.i64("two", {}, {2});
  b.typed("scaled", DataType::kInt64, ir::Shape{});  // rank unknown before folding
  b.input("x");
  b.node("mul", "Mul", {"s", "two"}, {"scaled"});
  b.node("reshape", "Reshape", {"x", "scaled"}, {"y"});
  b.output("y");
  g.rebuild_links();

  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 1);
  EXPECT_EQ(op_types(g), Names({"Reshape"}));
  EXPECT_EQ(int_constant(g, id_of(g, "scaled")), std::vector<int64_t>({4, 6, 8}));
  EXPECT_EQ(val(g, "scaled").shape.to_string(), "[3]");
}

// Constant nodes have no inputs but fold like anything else (even large ones: their bytes
// are in the model already), so that the value they make is a constant for later nodes.
TEST(ConstantFolding, ConstantNodesBecomeConstantsAndFeedLaterFolds) {
  ir::Graph g;
  GraphBuilder b(g);
  ir::Attribute value;
  value.name = "value";
  value.type = ir::AttrType::kTensor;
  std::vector<float> big(40000, 0.5f);  // 160 KB: above the 64 KiB floor of the size cap
  std::vector<uint8_t> bytes(big.size() * sizeof(float));
  std::memcpy(bytes.data(), big.data(), bytes.size());
  value.tensors = {std::make_shared<const ir::TensorData>(
      DataType::kFloat32, std::vector<int64_t>{40000}, std::move(bytes))};
  b.node("c", "Constant", {}, {"cv"}, {value});
  b.f32("two", {}, {2.0f});
  b.node("m", "Mul", {"cv", "two"}, {"mv"});
  b.input("x");
  b.node("use", "Add", {"x", "mv"}, {"y"});
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  // The Constant, then the Mul on its value (160 KB from 160 KB of inputs: within 4x).
  EXPECT_EQ(run(g, context_with(&eval)), 2);
  EXPECT_TRUE(val(g, "cv").is_constant());
  EXPECT_EQ(val(g, "cv").constant->element_count(), 40000);
  EXPECT_EQ(floats_of(g, "mv")[39999], 1.0f);
  EXPECT_EQ(node_names(g), Names({"use"}));
}

TEST(ConstantFolding, NoEvaluatorFoldsNothing) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.node("neg", "Neg", {"a"}, {"c"});
  b.node("live", "Add", {"c", "x"}, {"y"});
  b.input("x");
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g, context_with(nullptr)), 0);
  EXPECT_EQ(node_names(g), Names({"neg", "live"}));
}

TEST(ConstantFolding, NodeWithANonConstantInputIsUntouched) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.input("x");
  b.node("add", "Add", {"a", "x"}, {"c"});
  b.node("neg", "Neg", {"c"}, {"y"});
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 0);
  EXPECT_EQ(node_names(g), Names({"add", "neg"}));
  EXPECT_EQ(eval.calls, 0);
  EXPECT_FALSE(val(g, "c").is_constant());
}

TEST(ConstantFolding, UnsupportedOrFailingEvaluationLeavesTheNode) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.input("x");
  b.node("sin", "Sin", {"a"}, {"c"});        // the evaluator answers Unsupported
  b.node("broken", "Broken", {"a"}, {"d"});  // the evaluator's kernel fails
  b.node("neg", "Neg", {"a"}, {"e"});        // still folds
  b.node("sum", "Sum", {"c", "d", "e", "x"}, {"y"});
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 1);
  EXPECT_EQ(node_names(g), Names({"sin", "broken", "sum"}));
  EXPECT_EQ(eval.calls, 3);
  EXPECT_EQ(floats_of(g, "e"), std::vector<float>({-1, -2}));
}

TEST(ConstantFolding, ResultsOverTheSizeCapStay) {
  ir::Graph g;
  GraphBuilder b(g);
  b.i64("n", {1}, {0});  // 8 bytes of constant input: the 64 KiB floor applies
  std::vector<float> big(20000, 1.0f);
  b.f32("big", {20000}, big);  // 80000 bytes: 4x allows 320000
  // 16384 floats = 65536 bytes: exactly the cap.
  b.node("fits", "Fill", {"n"}, {"f1"}, {attr_int("count", 16384)});
  // 16385 floats = 65540 bytes: over.
  b.node("too_big", "Fill", {"n"}, {"f2"}, {attr_int("count", 16385)});
  // 80000 floats = 320000 bytes = 4 x 80000 input bytes: fits; 80001 does not.
  b.node("grows_4x", "Fill", {"big"}, {"f3"}, {attr_int("count", 80000)});
  b.node("grows_more", "Fill", {"big"}, {"f4"}, {attr_int("count", 80001)});
  b.input("x");
  b.node("use", "Concat", {"f1", "f2", "f3", "f4", "x"}, {"y"}, {attr_int("axis", 0)});
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 2);
  EXPECT_EQ(node_names(g), Names({"too_big", "grows_more", "use"}));
  EXPECT_TRUE(val(g, "f1").is_constant());
  EXPECT_TRUE(val(g, "f3").is_constant());
  EXPECT_EQ(val(g, "f3").constant->size_bytes(), 320000u);
}

TEST(ConstantFolding, GraphOutputsAndCapturedValuesStayComputed) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.i64("cond", {}, {1});
  b.node("to_output", "Neg", {"a"}, {"y"});
  b.node("captured", "Neg", {"a"}, {"c"});
  // The If reads only constants explicitly but has subgraphs: never evaluated.
  b.node("if", "If", {"cond"}, {"z"}, if_branches_reading("c", "Identity"));
  b.output("y");
  b.output("z");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 0);
  EXPECT_EQ(node_names(g), Names({"to_output", "captured", "if"}));
  EXPECT_EQ(eval.calls, 0);
}

TEST(ConstantFolding, RandomOperatorsAndNodesWithoutInputsStay) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.node("rand", "RandomUniformLike", {"a"}, {"r"});
  b.node("bern", "Bernoulli", {"a"}, {"s"});
  b.node("gen", "RandomNormal", {}, {"t"}, {attr_ints("shape", {2})});
  b.node("sum", "Sum", {"r", "s", "t"}, {"y"});
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 0);
  EXPECT_EQ(g.node_count(), 4u);
  EXPECT_EQ(eval.calls, 0);
}

TEST(ConstantFolding, DropoutFoldsOnlyOutsideTrainingMode) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.f32("ratio", {}, {0.5f});
  b.constant_of<uint8_t>("on", DataType::kBool, {}, {1});
  b.constant_of<uint8_t>("off", DataType::kBool, {}, {0});
  b.node("train", "Dropout", {"a", "ratio", "on"}, {"d1"});
  b.node("infer", "Dropout", {"a", "ratio", "off"}, {"d2"});
  b.node("plain", "Dropout", {"a"}, {"d3"});
  b.node("sum", "Sum", {"d1", "d2", "d3", "x"}, {"y"});
  b.input("x");
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 2);
  EXPECT_EQ(node_names(g), Names({"train", "sum"}));
  EXPECT_EQ(floats_of(g, "d2"), std::vector<float>({1, 2}));
}

TEST(ConstantFolding, AResultOfAnotherDtypeThanDeclaredIsRejected) {
  ir::Graph g;
  GraphBuilder b(g);
  b.f32("a", {2}, {1, 2});
  b.typed("c", DataType::kFloat16, {2});  // the evaluator will answer float32
  b.node("neg", "Neg", {"a"}, {"c"});
  b.node("use", "Add", {"c", "x"}, {"y"});
  b.input("x");
  b.output("y");
  g.rebuild_links();
  FakeEvaluator eval;
  EXPECT_EQ(run(g, context_with(&eval)), 0);
  EXPECT_EQ(node_names(g), Names({"neg", "use"}));
}

}  // namespace
}  // namespace infer::optimizer
