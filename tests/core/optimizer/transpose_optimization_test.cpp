#include "optimizer/transpose_optimization.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "graph_builder.hpp"
#include "optimizer/pipeline.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;
using Perm = std::vector<int64_t>;

int run(ir::Graph& g, const PassContext& context = context_at(13)) {
  return apply_pass<TransposeOptimization>(g, context);
}

ir::Attribute perm(Perm p) { return attr_ints("perm", std::move(p)); }

// A float32 Transpose evaluator written for these tests (row-major index arithmetic),
// standing in for the session's backend-backed evaluator. It counts its calls.
class TestTransposeEvaluator final : public ConstantEvaluator {
 public:
  mutable int calls = 0;
  Result<std::vector<ir::TensorDataPtr>> evaluate(const ir::Graph& graph,
                                                  const ir::Node& node) const override {
    ++calls;
    if (node.op_type != "Transpose") return unsupported("only Transpose");
    const ir::TensorData& in = *graph.value(node.inputs[0]).constant;
    if (in.dtype() != DataType::kFloat32) return unsupported("only float32");
    const Perm p = node.attr("perm")->ints;
    const std::vector<int64_t>& d = in.dims();
    const size_t r = d.size();
    std::vector<int64_t> od(r), in_strides(r, 1);
    for (size_t i = r; i-- > 1;) in_strides[i - 1] = in_strides[i] * d[i];
    for (size_t j = 0; j < r; ++j) od[j] = d[p[j]];
    std::vector<float> out(static_cast<size_t>(in.element_count()));
    std::vector<int64_t> idx(r, 0);  // output multi-index
    for (size_t flat = 0; flat < out.size(); ++flat) {
      int64_t src = 0;
      for (size_t j = 0; j < r; ++j) src += idx[j] * in_strides[p[j]];
      out[flat] = in.as<float>()[src];
      for (size_t j = r; j-- > 0;) {
        if (++idx[j] < od[j]) break;
        idx[j] = 0;
      }
    }
    std::vector<uint8_t> bytes(out.size() * sizeof(float));
    std::memcpy(bytes.data(), out.data(), bytes.size());
    return std::vector<ir::TensorDataPtr>{
        std::make_shared<const ir::TensorData>(DataType::kFloat32, od, std::move(bytes))};
  }
};

// x [1,2,3,4] (NCHW) -> Transpose to NHWC -> Relu -> Transpose back (p2) -> y.
void build_nhwc_sandwich(ir::Graph& g, Perm p2) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 2, 3, 4});
  b.typed("t", DataType::kFloat32, {1, 3, 4, 2});
  b.typed("r", DataType::kFloat32, {1, 3, 4, 2});
  b.input("x");
  b.node("to_nhwc", "Transpose", {"x"}, {"t"}, {perm({0, 2, 3, 1})});
  b.node("relu", "Relu", {"t"}, {"r"});
  b.node("to_nchw", "Transpose", {"r"}, {"y"}, {perm(std::move(p2))});
  b.output("y");
  g.rebuild_links();
}

TEST(TransposeOptimization, InversePairAroundAnElementwiseOpVanishes) {
  ir::Graph g;
  build_nhwc_sandwich(g, {0, 3, 1, 2});
  EXPECT_GT(run(g), 0);
  ASSERT_EQ(op_types(g), Ops({"Relu"}));
  EXPECT_EQ(g.node(0).name, "relu");
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
  // The graph output keeps its name: the Relu writes it directly.
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));
  EXPECT_EQ(g.outputs[0], id_of(g, "y"));
}

TEST(TransposeOptimization, NonInversePermsMergeIntoOneTranspose) {
  // Applying [0,2,3,1] twice: q[j] = p1[p2[j]] = [0,3,1,2] ([1,2,3,4] -> [1,4,2,3]).
  ir::Graph g;
  build_nhwc_sandwich(g, {0, 2, 3, 1});
  EXPECT_GT(run(g), 0);
  ASSERT_EQ(op_types(g), Ops({"Relu", "Transpose"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
  EXPECT_EQ(g.value(g.node(0).outputs[0]).shape, ir::Shape::of({1, 2, 3, 4}));
  const ir::Node& t = g.node(1);
  EXPECT_EQ(t.attr("perm")->ints, Perm({0, 3, 1, 2}));
  EXPECT_EQ(t.inputs[0], g.node(0).outputs[0]);
  EXPECT_EQ(t.outputs[0], id_of(g, "y"));
}

TEST(TransposeOptimization, ATransposeWithTwoConsumersIsNotMoved) {
  ir::Graph g;
  build_nhwc_sandwich(g, {0, 3, 1, 2});
  add_reader(g, "t", "other", "Neg", "n");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Relu", "Transpose", "Neg"}));
  EXPECT_EQ(g.node(1).inputs[0], id_of(g, "t"));
}

TEST(TransposeOptimization, AGraphOutputBetweenTheTransposesBlocksSinking) {
  ir::Graph g;
  build_nhwc_sandwich(g, {0, 3, 1, 2});
  GraphBuilder(g).output("t");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Relu", "Transpose"}));
}

TEST(TransposeOptimization, DirectInversePairs) {
  // x -> Neg -> n -> T -> T^-1 -> y (output): the Neg writes y.
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3, 4});
  b.input("x");
  b.node("neg", "Neg", {"x"}, {"n"});
  b.node("t1", "Transpose", {"n"}, {"t"}, {perm({1, 2, 0})});
  b.node("t2", "Transpose", {"t"}, {"y"}, {perm({2, 0, 1})});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Neg"}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));

  // Graph input straight to graph output: the pair becomes one Identity.
  ir::Graph h;
  GraphBuilder hb(h);
  hb.typed("x", DataType::kFloat32, {2, 3});
  hb.input("x");
  hb.node("t1", "Transpose", {"x"}, {"t"});  // default perm: reverse
  hb.node("t2", "Transpose", {"t"}, {"y"}, {perm({1, 0})});
  hb.output("y");
  h.rebuild_links();
  EXPECT_EQ(run(h), 1);
  ASSERT_EQ(op_types(h), Ops({"Identity"}));
  EXPECT_EQ(h.node(0).inputs[0], id_of(h, "x"));
  EXPECT_EQ(h.node(0).outputs[0], id_of(h, "y"));
  EXPECT_TRUE(h.node(0).attributes.empty());
}

TEST(TransposeOptimization, InnerTransposeWithAnotherReaderStays) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3});
  b.input("x");
  b.node("t1", "Transpose", {"x"}, {"t"}, {perm({1, 0})});
  b.node("t2", "Transpose", {"t"}, {"y"}, {perm({1, 0})});
  b.node("after", "Neg", {"y"}, {"z"});
  b.output("z");
  b.output("t");  // t1's output is observed: t1 must stay
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Neg"}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "t"));
  EXPECT_EQ(g.node(1).inputs[0], id_of(g, "x"));
}

TEST(TransposeOptimization, BinaryOpOfTwoEqualTransposes) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("a", DataType::kFloat32, {1, 2, 3, 4});
  b.typed("c", DataType::kFloat32, {1, 2, 3, 4});
  b.input("a");
  b.input("c");
  b.node("ta", "Transpose", {"a"}, {"at"}, {perm({0, 2, 3, 1})});
  b.node("tc", "Transpose", {"c"}, {"ct"}, {perm({0, 2, 3, 1})});
  b.node("sub", "Sub", {"at", "ct"}, {"d"});
  b.typed("d", DataType::kFloat32, {1, 3, 4, 2});
  b.output("d");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Sub", "Transpose"}));
  const ir::Node& sub = g.node(0);
  EXPECT_EQ(sub.inputs, std::vector<ir::ValueId>({id_of(g, "a"), id_of(g, "c")}));
  EXPECT_EQ(g.value(sub.outputs[0]).shape, ir::Shape::of({1, 2, 3, 4}));
  EXPECT_EQ(g.node(1).attr("perm")->ints, Perm({0, 2, 3, 1}));
  EXPECT_EQ(g.node(1).outputs[0], id_of(g, "d"));
}

TEST(TransposeOptimization, BinaryOpOfDifferentTransposesStays) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("a");
  b.input("c");
  b.typed("a", DataType::kFloat32, {2, 2});
  b.typed("c", DataType::kFloat32, {2, 2});
  b.node("ta", "Transpose", {"a"}, {"at"}, {perm({1, 0})});
  b.node("tc", "Identity", {"c"}, {"ct"});
  b.node("add", "Add", {"at", "ct"}, {"d"});
  b.output("d");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Identity", "Add"}));
}

TEST(TransposeOptimization, ScalarOperandKeepsItsSide) {
  // Div(2, T(x)) -> T(Div(2, x)): the operand order of a non-commutative op stays.
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3});
  b.f32("two", {}, {2});
  b.input("x");
  b.node("t", "Transpose", {"x"}, {"xt"}, {perm({1, 0})});
  b.node("div", "Div", {"two", "xt"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Div", "Transpose"}));
  EXPECT_EQ(g.node(0).inputs, std::vector<ir::ValueId>({id_of(g, "two"), id_of(g, "x")}));
  EXPECT_EQ(g.node(1).outputs[0], id_of(g, "y"));
}

// x [1,2,1,3] -> T [0,2,3,1] -> [1,1,3,2] -> Add(·, k [1,1,3,2] = 0..5) -> y.
void build_add_constant(ir::Graph& g) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 2, 1, 3});
  b.typed("y", DataType::kFloat32, {1, 1, 3, 2});
  b.f32("k", {1, 1, 3, 2}, {0, 1, 2, 3, 4, 5});
  b.input("x");
  b.node("t", "Transpose", {"x"}, {"xt"}, {perm({0, 2, 3, 1})});
  b.node("add", "Add", {"xt", "k"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

TEST(TransposeOptimization, SameRankConstantIsTransposedByTheEvaluator) {
  ir::Graph g;
  build_add_constant(g);
  TestTransposeEvaluator evaluator;
  PassContext ctx = context_at(13);
  ctx.evaluator = &evaluator;
  EXPECT_EQ(run(g, ctx), 1);
  EXPECT_EQ(evaluator.calls, 1);
  ASSERT_EQ(op_types(g), Ops({"Add", "Transpose"}));
  const ir::Node& add = g.node(0);
  EXPECT_EQ(add.inputs[0], id_of(g, "x"));
  // k' = Transpose(k, [0,3,1,2]) has dims [1,2,1,3] and k'[0,i,0,j] = k[0,0,j,i] = 2j + i.
  const ir::ValueId k2 = add.inputs[1];
  EXPECT_EQ(g.value(k2).shape, ir::Shape::of({1, 2, 1, 3}));
  EXPECT_EQ(float_constant(g, k2).value(), std::vector<double>({0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(g.node(1).attr("perm")->ints, Perm({0, 2, 3, 1}));
  EXPECT_EQ(g.node(1).outputs[0], id_of(g, "y"));
}

TEST(TransposeOptimization, SameRankConstantWithoutAnEvaluatorStays) {
  ir::Graph g;
  build_add_constant(g);
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Add"}));
}

TEST(TransposeOptimization, LowerRankNonScalarConstantStays) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3});
  b.f32("k", {2}, {1, 2});
  b.input("x");
  b.node("t", "Transpose", {"x"}, {"xt"}, {perm({1, 0})});
  b.node("mul", "Mul", {"xt", "k"}, {"y"});
  b.output("y");
  g.rebuild_links();
  TestTransposeEvaluator evaluator;
  PassContext ctx = context_at(13);
  ctx.evaluator = &evaluator;
  EXPECT_EQ(run(g, ctx), 0);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Mul"}));
}

TEST(TransposeOptimization, CastSinksWithItsOwnDtype) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {2, 3});
  b.typed("y", DataType::kInt64, {3, 2});
  b.input("x");
  b.node("t", "Transpose", {"x"}, {"xt"}, {perm({1, 0})});
  b.node("cast", "Cast", {"xt"}, {"y"}, {attr_int("to", 7)});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Cast", "Transpose"}));
  const ir::Value& mid = g.value(g.node(0).outputs[0]);
  EXPECT_EQ(mid.dtype, DataType::kInt64);
  EXPECT_EQ(mid.shape, ir::Shape::of({2, 3}));
}

TEST(TransposeOptimization, ClipSinksOnlyWithConstantBounds) {
  for (bool constant_min : {true, false}) {
    ir::Graph g;
    GraphBuilder b(g);
    b.typed("x", DataType::kFloat32, {2, 3});
    if (constant_min) {
      b.f32("lo", {}, {0});
    } else {
      b.typed("lo", DataType::kFloat32, ir::Shape::of({}));
      b.input("lo");
    }
    b.input("x");
    b.node("t", "Transpose", {"x"}, {"xt"}, {perm({1, 0})});
    b.node("clip", "Clip", {"xt", "lo"}, {"y"});
    b.output("y");
    g.rebuild_links();
    EXPECT_EQ(run(g), constant_min ? 1 : 0);
    EXPECT_EQ(op_types(g), constant_min ? Ops({"Clip", "Transpose"}) : Ops({"Transpose", "Clip"}));
  }
}

TEST(TransposeOptimization, ChainOfElementwiseOpsCollapses) {
  // T -> Relu -> Mul(scalar) -> Sigmoid -> T^-1 collapses to the three ops alone.
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 2, 3, 4});
  b.f32("s", {}, {0.5f});
  b.input("x");
  b.node("t1", "Transpose", {"x"}, {"a"}, {perm({0, 2, 3, 1})});
  b.node("relu", "Relu", {"a"}, {"b"});
  b.node("mul", "Mul", {"b", "s"}, {"c"});
  b.node("sig", "Sigmoid", {"c"}, {"d"});
  b.node("t2", "Transpose", {"d"}, {"y"}, {perm({0, 3, 1, 2})});
  b.output("y");
  g.rebuild_links();
  EXPECT_GT(run(g), 0);
  ASSERT_EQ(op_types(g), Ops({"Relu", "Mul", "Sigmoid"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "x"));
  EXPECT_EQ(g.node(2).outputs[0], id_of(g, "y"));
}

TEST(TransposeOptimization, InvalidPermIsLeftAlone) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("t1", "Transpose", {"x"}, {"a"}, {perm({0, 0})});
  b.node("t2", "Transpose", {"a"}, {"y"}, {perm({0, 0})});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Transpose", "Transpose"}));
}

TEST(TransposeOptimization, RunsOnlyAtLevel3AndCanBeDisabled) {
  for (int level = 0; level <= 3; ++level) {
    Result<Pipeline> p = make_pipeline(level, {});
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    const std::vector<std::string> names = p->pass_names();
    const bool present =
        std::find(names.begin(), names.end(), "transpose_optimization") != names.end();
    EXPECT_EQ(present, level == 3) << "level " << level;
    if (level == 3) {
      EXPECT_EQ(names.back(), "transpose_optimization");
    }
  }
  Result<Pipeline> off = make_pipeline(3, {"transpose_optimization"});
  ASSERT_TRUE(off.is_ok());
  const std::vector<std::string> names = off->pass_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "transpose_optimization"), names.end());

  // Through the level-3 pipeline the NHWC sandwich collapses too.
  ir::Graph g;
  build_nhwc_sandwich(g, {0, 3, 1, 2});
  Result<Pipeline> p = make_pipeline(3, {});
  ASSERT_TRUE(p.is_ok());
  ASSERT_TRUE(p->run(g, context_at(13)).is_ok());
  EXPECT_EQ(op_types(g), Ops({"Relu"}));
}

}  // namespace
}  // namespace infer::optimizer
