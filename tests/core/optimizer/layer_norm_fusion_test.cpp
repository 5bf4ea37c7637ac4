#include "optimizer/layer_norm_fusion.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph_builder.hpp"
#include "optimizer/pass_registry.hpp"
#include "optimizer/pipeline.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// How the decomposed chain is written; the defaults are torch 1.13's opset-13 export of
// nn.LayerNorm(8) on x [batch, seq, 8].
struct Chain {
  int64_t opset = 13;
  std::vector<int64_t> axes = {-1};
  std::vector<int64_t> second_axes = {-1};
  bool square_by_mul = false;  // Mul(d, d) instead of Pow(d, 2)
  float exponent = 2.0f;
  bool swap_operands = false;  // Add(eps, var), Mul(scale, n), Add(bias, m)
  bool scale = true;
  bool bias = true;
  std::vector<int64_t> scale_dims = {8};
  ir::Shape x_shape = shape_of({sym("batch"), sym("seq"), dim(8)});
  DataType dtype = DataType::kFloat32;
  int64_t keepdims = 1;
};

// y = Add(Mul(Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)), eps))), w), b) with d = x - mean(x).
void build(ir::Graph& g, const Chain& c) {
  GraphBuilder b(g);
  b.typed("x", c.dtype, c.x_shape);
  b.input("x");
  size_t n = 1;
  for (int64_t d : c.scale_dims) n *= static_cast<size_t>(d);
  std::vector<float> w(n), bias(n);
  for (size_t i = 0; i < n; ++i) {
    w[i] = 1.0f + 0.5f * static_cast<float>(i);
    bias[i] = -0.25f * static_cast<float>(i);
  }
  b.f32("w", c.scale_dims, w);
  b.f32("b", c.scale_dims, bias);
  b.f32("two", {}, {c.exponent});
  b.f32("eps", {}, {1e-5f});
  auto reduce = [&](const std::string& name, const std::string& in, const std::string& out,
                    const std::vector<int64_t>& axes) {
    std::vector<ir::Attribute> attrs;
    if (c.keepdims != 1) attrs.push_back(attr_int("keepdims", c.keepdims));
    if (c.opset >= 18) {
      b.i64(name + "_axes", {static_cast<int64_t>(axes.size())}, axes);
      b.node(name, "ReduceMean", {in, name + "_axes"}, {out}, attrs);
    } else {
      attrs.push_back(attr_ints("axes", axes));
      b.node(name, "ReduceMean", {in}, {out}, attrs);
    }
  };
  auto pair = [&](const std::string& a, const std::string& z) {
    return c.swap_operands ? std::vector<std::string>{z, a} : std::vector<std::string>{a, z};
  };
  reduce("rm1", "x", "mean", c.axes);
  b.node("sub", "Sub", {"x", "mean"}, {"d"});
  if (c.square_by_mul)
    b.node("sq", "Mul", {"d", "d"}, {"sq"});
  else
    b.node("sq", "Pow", {"d", "two"}, {"sq"});
  reduce("rm2", "sq", "var", c.second_axes);
  b.node("add_eps", "Add", pair("var", "eps"), {"ve"});
  b.node("sqrt", "Sqrt", {"ve"}, {"std"});
  b.node("div", "Div", {"d", "std"}, {"n"});
  std::string last = "n";
  if (c.scale) {
    b.node("mul", "Mul", pair("n", "w"), {"m"});
    last = "m";
  }
  if (c.bias) {
    b.node("add", "Add", pair(last, "b"), {"y"});
    last = "y";
  }
  b.output(last);
  g.rebuild_links();
}

int apply(ir::Graph& g, int64_t opset) { return apply_pass<LayerNormFusion>(g, context_at(opset)); }

// Builds the chain `c`, expects one fusion at c.opset and that only a LayerNormalization
// is left.
void build_and_fuse(ir::Graph& g, const Chain& c) {
  build(g, c);
  EXPECT_EQ(apply(g, c.opset), 1);
  ASSERT_EQ(op_types(g), Names({"LayerNormalization"}));
}

TEST(LayerNormFusion, TorchOpset13ChainBecomesInferLayerNormalization) {
  ir::Graph g;
  ASSERT_NO_FATAL_FAILURE(build_and_fuse(g, Chain{}));
  const ir::Node& ln = g.node(0);
  EXPECT_EQ(ln.name, "rm1");
  EXPECT_EQ(ln.domain, "ai.infer");
  EXPECT_EQ(ln.inputs, (std::vector<ir::ValueId>{id_of(g, "x"), id_of(g, "w"), id_of(g, "b")}));
  EXPECT_EQ(ln.outputs, std::vector<ir::ValueId>{id_of(g, "y")});
  EXPECT_EQ(g.outputs, std::vector<ir::ValueId>{id_of(g, "y")});
  EXPECT_EQ(ln.attr_int("axis", 99), -1);
  EXPECT_NEAR(ln.attr_float("epsilon", 0), 1e-5, 1e-12);
  EXPECT_EQ(ln.attributes.size(), 2u);
}

TEST(LayerNormFusion, Opset17EmitsOnnxLayerNormalization) {
  ir::Graph g;
  Chain c;
  c.opset = 17;
  ASSERT_NO_FATAL_FAILURE(build_and_fuse(g, c));
  EXPECT_EQ(g.node(0).domain, "");
}

TEST(LayerNormFusion, Opset18ReadsAxesFromTheSecondInput) {
  ir::Graph g;
  Chain c;
  c.opset = 18;
  c.axes = {2};
  c.second_axes = {-1};
  ASSERT_NO_FATAL_FAILURE(build_and_fuse(g, c));
  EXPECT_EQ(g.node(0).domain, "");
  EXPECT_EQ(g.node(0).inputs.size(), 3u);  // the axes constant is not an input any more
  EXPECT_EQ(g.node(0).attr_int("axis", 99), 2);
}

TEST(LayerNormFusion, MulSquareSwappedOperandsAndTrailingAxes) {
  ir::Graph g;
  Chain c;
  c.square_by_mul = true;
  c.swap_operands = true;
  c.axes = {-2, -1};
  c.second_axes = {2, 1};
  c.x_shape = shape_of({sym("batch"), dim(3), dim(4)});
  c.scale_dims = {3, 4};
  ASSERT_NO_FATAL_FAILURE(build_and_fuse(g, c));
  EXPECT_EQ(g.node(0).attr_int("axis", 99), -2);
  EXPECT_EQ(g.node(0).inputs,
            (std::vector<ir::ValueId>{id_of(g, "x"), id_of(g, "w"), id_of(g, "b")}));
}

TEST(LayerNormFusion, WithoutBias) {
  ir::Graph g;
  Chain c;
  c.bias = false;
  ASSERT_NO_FATAL_FAILURE(build_and_fuse(g, c));
  EXPECT_EQ(g.node(0).inputs, (std::vector<ir::ValueId>{id_of(g, "x"), id_of(g, "w")}));
  EXPECT_EQ(g.node(0).outputs, std::vector<ir::ValueId>{id_of(g, "m")});
}

TEST(LayerNormFusion, WithoutScaleGetsAScaleOfOnes) {
  ir::Graph g;
  Chain c;
  c.scale = false;
  ASSERT_NO_FATAL_FAILURE(build_and_fuse(g, c));
  const ir::Node& ln = g.node(0);
  ASSERT_EQ(ln.inputs.size(), 3u);
  EXPECT_EQ(ln.inputs[2], id_of(g, "b"));
  const auto ones = float_constant(g, ln.inputs[1]);
  ASSERT_TRUE(ones.has_value());
  EXPECT_EQ(*ones, std::vector<double>(8, 1.0));
  EXPECT_EQ(constant_of(g, ln.inputs[1])->dims(), std::vector<int64_t>{8});
}

TEST(LayerNormFusion, NonConstantScaleStaysOutsideTheFusion) {
  // The normalization still fuses (with ones); the Mul by a graph input stays.
  ir::Graph g;
  Chain c;
  c.bias = false;
  build(g, c);
  make_graph_input(g, "w");
  EXPECT_EQ(apply(g, 13), 1);
  ASSERT_EQ(op_types(g), Names({"LayerNormalization", "Mul"}));
  EXPECT_EQ(g.node(0).outputs, std::vector<ir::ValueId>{id_of(g, "n")});
  EXPECT_EQ(g.node(1).inputs[0], id_of(g, "n"));
}

TEST(LayerNormFusion, ScaleOfAnotherShapeStaysOutsideTheFusion) {
  // w [1, 8] would add nothing here, but LayerNormalization's scale is the normalized
  // shape exactly; the Mul (and the Add after it) stay.
  ir::Graph g;
  Chain c;
  c.scale_dims = {1, 8};
  build(g, c);
  EXPECT_EQ(apply(g, 13), 1);
  EXPECT_EQ(op_types(g), Names({"LayerNormalization", "Mul", "Add"}));
}

TEST(LayerNormFusion, TwoChainsInOneGraph) {
  ir::Graph g;
  build(g, {});
  // A second layer norm reading the first one's output, named with a prefix.
  GraphBuilder b(g);
  b.typed("y", DataType::kFloat32, shape_of({sym("batch"), sym("seq"), dim(8)}));
  b.node("r1", "ReduceMean", {"y"}, {"mean2"}, {attr_ints("axes", {-1})});
  b.node("s", "Sub", {"y", "mean2"}, {"d2"});
  b.node("p", "Pow", {"d2", "two"}, {"sq2"});
  b.node("r2", "ReduceMean", {"sq2"}, {"var2"}, {attr_ints("axes", {-1})});
  b.node("ae", "Add", {"var2", "eps"}, {"ve2"});
  b.node("sr", "Sqrt", {"ve2"}, {"std2"});
  b.node("dv", "Div", {"d2", "std2"}, {"y2"});
  g.outputs = {id_of(g, "y2")};
  g.rebuild_links();
  EXPECT_EQ(apply(g, 13), 2);
  EXPECT_EQ(op_types(g), Names({"LayerNormalization", "LayerNormalization"}));
  EXPECT_EQ(g.node(1).name, "r1");
  EXPECT_EQ(g.node(1).inputs[0], id_of(g, "y"));
}

// ---- Chains that must stay as they are ----------------------------------------------

void expect_untouched(ir::Graph& g, int64_t opset) {
  expect_untouched_by<LayerNormFusion>(g, context_at(opset));
}

// Builds the chain `c` and expects the pass (at opset 13) to leave it alone.
void expect_untouched(const Chain& c) {
  ir::Graph g;
  build(g, c);
  expect_untouched(g, 13);
}

TEST(LayerNormFusion, NotBelowOpset13) {
  ir::Graph g;
  build(g, {});
  expect_untouched(g, 12);
}

TEST(LayerNormFusion, NotWhenDHasAThirdReader) {
  ir::Graph g;
  build(g, {});
  add_reader(g, "d");
  expect_untouched(g, 13);
}

TEST(LayerNormFusion, NotWhenAnIntermediateIsAGraphOutput) {
  for (const char* name : {"mean", "var", "std", "d"}) {
    ir::Graph g;
    build(g, {});
    g.outputs.push_back(id_of(g, name));
    expect_untouched(g, 13);
  }
}

TEST(LayerNormFusion, NotWithNonConstantEpsilon) {
  ir::Graph g;
  build(g, {});
  make_graph_input(g, "eps");
  expect_untouched(g, 13);
}

TEST(LayerNormFusion, NotOverANonTrailingAxis) {
  Chain c;
  c.axes = {1};
  c.second_axes = {1};
  expect_untouched(c);
}

TEST(LayerNormFusion, NotWhenTheTwoReductionsDiffer) {
  Chain c;
  c.second_axes = {-2, -1};
  expect_untouched(c);
}

TEST(LayerNormFusion, NotWithKeepdimsZero) {
  Chain c;
  c.keepdims = 0;
  expect_untouched(c);
}

TEST(LayerNormFusion, NotWithAnotherExponent) {
  Chain c;
  c.exponent = 3.0f;
  expect_untouched(c);
}

TEST(LayerNormFusion, NotWithAnUnknownNormalizedDim) {
  Chain c;
  c.x_shape = shape_of({sym("batch"), sym("seq"), sym("hidden")});
  expect_untouched(c);
}

TEST(LayerNormFusion, NotOnIntegerTensors) {
  Chain c;
  c.dtype = DataType::kInt32;
  expect_untouched(c);
}

TEST(LayerNormFusion, NotWhenTheSubtractionIsReversed) {
  ir::Graph g;
  build(g, {});
  std::swap(g.node(1).inputs[0], g.node(1).inputs[1]);  // Sub(mean, x)
  expect_untouched(g, 13);
}

TEST(LayerNormFusion, NotWhenAxesAreMissingOrDynamic) {
  {
    ir::Graph g;
    build(g, {});
    g.node(0).attributes.clear();  // reduce over every axis
    expect_untouched(g, 13);
  }
  {
    ir::Graph g;
    Chain c;
    c.opset = 18;
    build(g, c);
    make_graph_input(g, "rm1_axes");
    expect_untouched(g, 18);
  }
}

// ---- Registration ----------------------------------------------------------------------

TEST(LayerNormFusion, RegisteredAtLevelTwoBeforeGeluAndAttention) {
  Result<Pipeline> one = make_pipeline(1, {});
  ASSERT_TRUE(one.is_ok());
  const Names level1 = one->pass_names();
  for (const char* n : {"layer_norm_fusion", "gelu_fusion", "attention_fusion"})
    EXPECT_EQ(std::find(level1.begin(), level1.end(), n), level1.end()) << n;

  Result<Pipeline> two = make_pipeline(2, {});
  ASSERT_TRUE(two.is_ok());
  const Names level2 = two->pass_names();
  auto at = [&](const char* n) { return std::find(level2.begin(), level2.end(), n); };
  ASSERT_NE(at("layer_norm_fusion"), level2.end());
  ASSERT_NE(at("gelu_fusion"), level2.end());
  ASSERT_NE(at("attention_fusion"), level2.end());
  EXPECT_EQ(at("layer_norm_fusion") + 1, at("gelu_fusion"));
  EXPECT_EQ(at("gelu_fusion") + 1, at("attention_fusion"));

  Result<Pipeline> disabled = make_pipeline(2, {"layer_norm_fusion"});
  ASSERT_TRUE(disabled.is_ok());
  const Names rest = disabled->pass_names();
  EXPECT_EQ(std::find(rest.begin(), rest.end(), "layer_norm_fusion"), rest.end());
  EXPECT_NE(std::find(rest.begin(), rest.end(), "gelu_fusion"), rest.end());
}

TEST(LayerNormFusion, PipelineAtLevelTwoFusesAndCanBeDisabled) {
  {
    ir::Graph g;
    build(g, {});
    Result<Pipeline> p = make_pipeline(2, {});
    ASSERT_TRUE(p.is_ok());
    ASSERT_TRUE(p->run(g, context_at(13)).is_ok());
    EXPECT_EQ(op_types(g), Names({"LayerNormalization"}));
  }
  {
    ir::Graph g;
    build(g, {});
    Result<Pipeline> p = make_pipeline(2, {"layer_norm_fusion"});
    ASSERT_TRUE(p.is_ok());
    ASSERT_TRUE(p->run(g, context_at(13)).is_ok());
    EXPECT_EQ(count_op(g, "LayerNormalization"), 0u);
    EXPECT_EQ(count_op(g, "ReduceMean"), 2u);
  }
}

}  // namespace
}  // namespace infer::optimizer
