#include "optimizer/gelu_fusion.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// The float32 constants torch 1.13 writes (printed from its opset-13 export of
// nn.GELU() and nn.GELU(approximate='tanh')).
constexpr float kTorchSqrt2 = 1.4142135381698608f;
constexpr float kTorchCube = 0.044714998453855515f;
constexpr float kTorchSqrt2OverPi = 0.7978845834732056f;

enum class Tail { kTorch, kHalfLast, kHalfFirst };  // forms (a), (b), (c) of 0.5·x·a

// x [batch, 16] -> ... -> a = Add(Erf(x/√2), 1) -> 0.5·x·a in the given grouping -> y.
// Also gives x a second reader (Relu) to show x itself may have other uses.
void build_erf(ir::Graph& g, Tail tail, bool mul_form = false, float sqrt2 = kTorchSqrt2,
               float half = 0.5f) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), dim(16)}));
  b.input("x");
  b.f32("one", {}, {1.0f});
  b.f32("half", {}, {half});
  if (mul_form) {
    b.f32("c", {}, {0.70710678f});
    b.node("scale", "Mul", {"c", "x"}, {"u"});
  } else {
    b.f32("c", {}, {sqrt2});
    b.node("scale", "Div", {"x", "c"}, {"u"});
  }
  b.node("erf", "Erf", {"u"}, {"e"});
  b.node("add1", "Add", {"e", "one"}, {"a"});
  switch (tail) {
    case Tail::kTorch:  // Mul(Mul(x, a), 0.5)
      b.node("mul_x", "Mul", {"x", "a"}, {"xa"});
      b.node("mul_half", "Mul", {"xa", "half"}, {"y"});
      break;
    case Tail::kHalfLast:  // Mul(x, Mul(a, 0.5))
      b.node("mul_half", "Mul", {"half", "a"}, {"ah"});
      b.node("mul_x", "Mul", {"ah", "x"}, {"y"});
      break;
    case Tail::kHalfFirst:  // Mul(Mul(x, 0.5), a)
      b.node("mul_half", "Mul", {"x", "half"}, {"xh"});
      b.node("mul_x", "Mul", {"a", "xh"}, {"y"});
      break;
  }
  b.node("relu", "Relu", {"x"}, {"r"});
  b.output("y");
  b.output("r");
  g.rebuild_links();
}

// torch 1.13's tanh form: Mul(0.5, Mul(x, Add(1, Tanh(Mul(k, Add(x, Mul(c, x³))))))) with
// x³ = Mul(x, Mul(x, x)), or Pow(x, 3) when `pow` is set.
void build_tanh(ir::Graph& g, bool pow = false, float cube = kTorchCube) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, shape_of({sym("batch"), dim(16)}));
  b.input("x");
  b.f32("one", {}, {1.0f});
  b.f32("half", {}, {0.5f});
  b.f32("c", {}, {cube});
  b.f32("k", {}, {kTorchSqrt2OverPi});
  if (pow) {
    b.f32("three", {}, {3.0f});
    b.node("pow", "Pow", {"x", "three"}, {"x3"});
  } else {
    b.node("sq", "Mul", {"x", "x"}, {"x2"});
    b.node("cube", "Mul", {"x", "x2"}, {"x3"});
  }
  b.node("mul_c", "Mul", {"c", "x3"}, {"cx3"});
  b.node("inner", "Add", {"x", "cx3"}, {"in"});
  b.node("mul_k", "Mul", {"k", "in"}, {"w"});
  b.node("tanh", "Tanh", {"w"}, {"t"});
  b.node("add1", "Add", {"one", "t"}, {"a"});
  b.node("mul_x", "Mul", {"x", "a"}, {"xa"});
  b.node("mul_half", "Mul", {"half", "xa"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

int apply(ir::Graph& g, int64_t opset = 13) { return apply_pass<GeluFusion>(g, context_at(opset)); }

// The graph is exactly one ai.infer Gelu(x) -> y named `name` (plus the Relu if any).
void expect_gelu(const ir::Graph& g, const std::string& name, const std::string& approximate) {
  ASSERT_EQ(count_op(g, "Gelu"), 1u);
  const ir::Node* gelu = find_op(g, "Gelu");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->name, name);
  EXPECT_EQ(gelu->domain, "ai.infer");
  EXPECT_EQ(gelu->inputs, std::vector<ir::ValueId>{id_of(g, "x")});
  EXPECT_EQ(gelu->outputs, std::vector<ir::ValueId>{id_of(g, "y")});
  EXPECT_EQ(gelu->attr_string("approximate", "?"), approximate);
  EXPECT_EQ(gelu->attributes.size(), 1u);
}

// Expects one fusion that leaves exactly `ops` with the Gelu named `name`.
void expect_fused(ir::Graph& g, const Names& ops, const std::string& name,
                  const std::string& approximate) {
  EXPECT_EQ(apply(g), 1);
  EXPECT_EQ(op_types(g), ops);
  expect_gelu(g, name, approximate);
}

TEST(GeluFusion, TorchErfForm) {
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  expect_fused(g, {"Gelu", "Relu"}, "erf", "none");
}

TEST(GeluFusion, HalfAppliedToTheErfSum) {
  ir::Graph g;
  build_erf(g, Tail::kHalfLast);
  expect_fused(g, {"Gelu", "Relu"}, "erf", "none");
}

TEST(GeluFusion, HalfAppliedToX) {
  ir::Graph g;
  build_erf(g, Tail::kHalfFirst);
  expect_fused(g, {"Gelu", "Relu"}, "erf", "none");
}

TEST(GeluFusion, ErfOfXTimesInverseSqrt2) {
  ir::Graph g;
  build_erf(g, Tail::kTorch, /*mul_form=*/true);
  expect_fused(g, {"Gelu", "Relu"}, "erf", "none");
}

TEST(GeluFusion, ConstantsWithinTheTolerance) {
  // √2 written to 5 significant digits: 1.4142 is 1.5e-5 relative away.
  ir::Graph g;
  build_erf(g, Tail::kTorch, false, 1.4142f);
  EXPECT_EQ(apply(g), 1);
  expect_gelu(g, "erf", "none");
}

TEST(GeluFusion, TorchTanhForm) {
  ir::Graph g;
  build_tanh(g);
  expect_fused(g, {"Gelu"}, "tanh", "tanh");
}

TEST(GeluFusion, TanhFormWithPow) {
  ir::Graph g;
  build_tanh(g, /*pow=*/true);
  expect_fused(g, {"Gelu"}, "tanh", "tanh");
}

TEST(GeluFusion, TwoGelusInOneGraph) {
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  GraphBuilder b(g);
  b.typed("y", DataType::kFloat32, shape_of({sym("batch"), dim(16)}));
  b.node("div2", "Div", {"y", "c"}, {"u2"});
  b.node("erf2", "Erf", {"u2"}, {"e2"});
  b.node("add2", "Add", {"one", "e2"}, {"a2"});
  b.node("mul2", "Mul", {"a2", "y"}, {"ya2"});
  b.node("half2", "Mul", {"ya2", "half"}, {"z"});
  g.outputs = {id_of(g, "z"), id_of(g, "r")};
  g.rebuild_links();
  EXPECT_EQ(apply(g), 2);
  EXPECT_EQ(count_op(g, "Gelu"), 2u);
  EXPECT_EQ(g.node_count(), 3u);
}

TEST(GeluFusion, Float16) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat16, shape_of({dim(4)}));
  b.input("x");
  b.constant("c", make_float_tensor(DataType::kFloat16, {}, {1.4142135}));
  b.constant("one", make_float_tensor(DataType::kFloat16, {}, {1.0}));
  b.constant("half", make_float_tensor(DataType::kFloat16, {}, {0.5}));
  b.node("div", "Div", {"x", "c"}, {"u"});
  b.node("erf", "Erf", {"u"}, {"e"});
  b.node("add1", "Add", {"e", "one"}, {"a"});
  b.node("mul_x", "Mul", {"x", "a"}, {"xa"});
  b.node("mul_half", "Mul", {"xa", "half"}, {"y"});
  b.output("y");
  g.rebuild_links();
  // float16 holds √2 as 1.4140625, 1.1e-4 relative away: a float16 constant is compared
  // within its own precision, or no float16 model would ever fuse.
  EXPECT_NEAR(*scalar_constant(g, id_of(g, "c")), 1.4140625, 1e-9);
  EXPECT_EQ(apply(g), 1);
  expect_gelu(g, "erf", "none");
}

TEST(GeluFusion, Float32ConstantOutsideTheTolerance) {
  // The same float16-rounded √2 in a float32 model is not close enough.
  ir::Graph g;
  build_erf(g, Tail::kTorch, false, 1.4140625f);
  EXPECT_EQ(apply(g), 0);
}

// ---- Chains that must stay as they are ----------------------------------------------

void expect_untouched(ir::Graph& g, int64_t opset = 13) {
  expect_untouched_by<GeluFusion>(g, context_at(opset));
}

TEST(GeluFusion, NotBelowOpset13) {
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  expect_untouched(g, 12);
}

TEST(GeluFusion, NotWhenAnIntermediateHasASecondReader) {
  for (const char* name : {"u", "e", "a", "xa"}) {
    ir::Graph g;
    build_erf(g, Tail::kTorch);
    add_reader(g, name, "spy", "Neg", "spy_out");
    expect_untouched(g);
  }
}

TEST(GeluFusion, NotWhenAnIntermediateIsAGraphOutput) {
  ir::Graph g;
  build_tanh(g);
  g.outputs.push_back(id_of(g, "x3"));
  expect_untouched(g);
}

TEST(GeluFusion, NotWithOtherConstants) {
  {
    ir::Graph g;
    build_erf(g, Tail::kTorch, false, 1.42f);  // 4e-3 relative away from √2
    expect_untouched(g);
  }
  {
    ir::Graph g;
    build_erf(g, Tail::kHalfFirst, false, kTorchSqrt2, 0.6f);
    expect_untouched(g);
  }
  {
    ir::Graph g;
    build_tanh(g, false, 0.05f);
    expect_untouched(g);
  }
}

TEST(GeluFusion, NotWithANonConstantFactor) {
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  make_graph_input(g, "half");
  expect_untouched(g);
}

TEST(GeluFusion, NotWhenTheOuterFactorIsAnotherValue) {
  // Mul(z, a) with z != x: 0.5·z·(1 + erf(x/√2)) is not a Gelu of anything.
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  GraphBuilder b(g);
  b.typed("z", DataType::kFloat32, shape_of({sym("batch"), dim(16)}));
  b.input("z");
  for (ir::Node& n : g.mutable_nodes())
    if (n.name == "mul_x") n.inputs[0] = id_of(g, "z");
  g.rebuild_links();
  expect_untouched(g);
}

TEST(GeluFusion, NotWithAConstantThatBroadcastsX) {
  // A [1, 1, 1] one would turn y into rank 3.
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  g.value(id_of(g, "one")).constant = make_float_tensor(DataType::kFloat32, {1, 1, 1}, {1.0});
  expect_untouched(g);
}

TEST(GeluFusion, NotOnIntegerTensors) {
  ir::Graph g;
  build_erf(g, Tail::kTorch);
  g.value(id_of(g, "x")).dtype = DataType::kInt32;
  expect_untouched(g);
}

TEST(GeluFusion, NotWithASquareInsteadOfACube) {
  ir::Graph g;
  build_tanh(g, /*pow=*/true);
  g.value(id_of(g, "three")).constant = make_float_tensor(DataType::kFloat32, {}, {2.0});
  expect_untouched(g);
}

}  // namespace
}  // namespace infer::optimizer
