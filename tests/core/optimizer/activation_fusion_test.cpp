#include "optimizer/activation_fusion.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "graph_builder.hpp"
#include "optimizer/pipeline.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<ActivationFusion>(g, context_at(opset));
}

// x -> Conv(W) -> c -> <act>(c, extra inputs...) -> y.
void build_conv_act(ir::Graph& g, const std::string& act, std::vector<std::string> act_inputs = {},
                    std::vector<ir::Attribute> act_attrs = {}, const std::string& domain = "") {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 1, 2, 2});
  b.f32("W", {1, 1, 1, 1}, {2});
  b.input("x");
  b.node("conv", "Conv", {"x", "W"}, {"c"}, {attr_ints("kernel_shape", {1, 1})});
  act_inputs.insert(act_inputs.begin(), "c");
  b.node("act", act, act_inputs, {"y"}, std::move(act_attrs), domain);
  b.output("y");
  g.rebuild_links();
}

TEST(ActivationFusion, ConvReluBecomesFusedConv) {
  ir::Graph g;
  build_conv_act(g, "Relu");
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedConv"}));
  const ir::Node& n = g.node(0);
  EXPECT_EQ(n.name, "conv");
  EXPECT_EQ(n.domain, "ai.infer");
  EXPECT_EQ(n.attr_string("activation", ""), "Relu");
  EXPECT_EQ(n.attr("activation_params"), nullptr);
  EXPECT_EQ(n.attr("kernel_shape")->ints, std::vector<int64_t>({1, 1}));
  EXPECT_EQ(n.inputs, std::vector<ir::ValueId>({id_of(g, "x"), id_of(g, "W")}));
  EXPECT_EQ(n.outputs[0], id_of(g, "y"));
}

TEST(ActivationFusion, ParameterlessActivations) {
  for (const char* act : {"Tanh", "Sigmoid", "HardSwish"}) {
    ir::Graph g;
    build_conv_act(g, act);
    EXPECT_EQ(run(g, 14), 1) << act;
    EXPECT_EQ(g.node(0).attr_string("activation", ""), act);
    EXPECT_EQ(g.node(0).attr("activation_params"), nullptr);
  }
}

std::vector<double> params_of(const ir::Node& n) {
  const ir::Attribute* a = n.attr("activation_params");
  return a == nullptr ? std::vector<double>{} : a->floats;
}

TEST(ActivationFusion, ParametersAndTheirDefaults) {
  struct Case {
    std::string op;
    std::vector<ir::Attribute> attrs;
    std::vector<double> params;
  };
  const std::vector<Case> cases = {
      {"LeakyRelu", {}, {0.01}},
      {"LeakyRelu", {attr_float("alpha", 0.25)}, {0.25}},
      {"HardSigmoid", {}, {0.2, 0.5}},
      {"HardSigmoid", {attr_float("alpha", 0.5), attr_float("beta", 0.25)}, {0.5, 0.25}}};
  for (const Case& c : cases) {
    ir::Graph g;
    build_conv_act(g, c.op, {}, c.attrs);
    EXPECT_EQ(run(g), 1) << c.op;
    EXPECT_EQ(g.node(0).attr_string("activation", ""), c.op);
    EXPECT_EQ(params_of(g.node(0)), c.params) << c.op;
  }
}

TEST(ActivationFusion, ClipWithConstantOrOmittedBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  {
    ir::Graph g;
    GraphBuilder b(g);
    b.f32("lo", {}, {0});
    b.f32("hi", {}, {6});
    build_conv_act(g, "Clip", {"lo", "hi"});
    EXPECT_EQ(run(g), 1);
    EXPECT_EQ(g.node(0).attr_string("activation", ""), "Clip");
    EXPECT_EQ(params_of(g.node(0)), std::vector<double>({0, 6}));
  }
  {
    ir::Graph g;
    GraphBuilder b(g);
    b.f32("hi", {}, {6});
    build_conv_act(g, "Clip", {"", "hi"});
    EXPECT_EQ(run(g), 1);
    EXPECT_EQ(params_of(g.node(0)), std::vector<double>({-inf, 6}));
  }
  {
    ir::Graph g;
    build_conv_act(g, "Clip");
    EXPECT_EQ(run(g), 1);
    EXPECT_EQ(params_of(g.node(0)), std::vector<double>({-inf, inf}));
  }
}

TEST(ActivationFusion, ClipWithAttributeBoundsBeforeOpset11) {
  // Clip-6 (opset 6 to 10): the bounds are attributes, each defaulting to the float range.
  const double inf = std::numeric_limits<double>::infinity();
  {
    ir::Graph g;
    build_conv_act(g, "Clip", {}, {attr_float("min", 0), attr_float("max", 6)});
    EXPECT_EQ(run(g, 9), 1);
    EXPECT_EQ(g.node(0).attr_string("activation", ""), "Clip");
    EXPECT_EQ(params_of(g.node(0)), std::vector<double>({0, 6}));
  }
  {
    ir::Graph g;
    build_conv_act(g, "Clip", {}, {attr_float("max", 6)});
    EXPECT_EQ(run(g, 9), 1);
    EXPECT_EQ(params_of(g.node(0)), std::vector<double>({-inf, 6}));
  }
  {
    ir::Graph g;  // attributes and a bound input at once: malformed, left alone
    GraphBuilder b(g);
    b.f32("hi", {}, {6});
    build_conv_act(g, "Clip", {"", "hi"}, {attr_float("min", 0)});
    EXPECT_EQ(run(g, 9), 0);
  }
}

TEST(ActivationFusion, RefusesClipWithANonConstantBound) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("lo", DataType::kFloat32, ir::Shape::of({}));
  b.input("lo");
  b.f32("hi", {}, {6});
  build_conv_act(g, "Clip", {"lo", "hi"});
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Clip"}));
}

TEST(ActivationFusion, GeluFromTheGeluFusion) {
  ir::Graph g;
  build_conv_act(g, "Gelu", {}, {}, "ai.infer");
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(g.node(0).attr_string("activation", ""), "Gelu");

  ir::Graph h;
  build_conv_act(h, "Gelu", {}, {attr_string("approximate", "tanh")}, "ai.infer");
  EXPECT_EQ(run(h), 1);
  EXPECT_EQ(h.node(0).attr_string("activation", ""), "GeluTanh");
}

TEST(ActivationFusion, GemmKeepsItsAttributes) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("a", DataType::kFloat32, {2, 3});
  b.f32("w", {4, 3}, std::vector<float>(12, 1.0f));
  b.f32("bias", {4}, {1, 2, 3, 4});
  b.input("a");
  b.node("gemm", "Gemm", {"a", "w", "bias"}, {"g"},
         {attr_float("alpha", 0.5), attr_float("beta", 2.0), attr_int("transB", 1)});
  b.node("act", "LeakyRelu", {"g"}, {"y"}, {attr_float("alpha", 0.1)});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedGemm"}));
  const ir::Node& n = g.node(0);
  EXPECT_EQ(n.name, "gemm");
  EXPECT_EQ(n.domain, "ai.infer");
  EXPECT_EQ(n.inputs.size(), 3u);
  EXPECT_DOUBLE_EQ(n.attr_float("alpha", 0), 0.5);
  EXPECT_DOUBLE_EQ(n.attr_float("beta", 0), 2.0);
  EXPECT_EQ(n.attr_int("transB", 0), 1);
  EXPECT_EQ(n.attr_string("activation", ""), "LeakyRelu");
  EXPECT_EQ(params_of(n), std::vector<double>({0.1}));
}

TEST(ActivationFusion, MatMulAndFusedMatMulWithBias) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("a");
  b.input("w");
  b.f32("bias", {2}, {1, 2});
  b.node("mm", "MatMul", {"a", "w"}, {"m"});
  b.node("act", "Sigmoid", {"m"}, {"y"});
  b.node("fmm", "FusedMatMul", {"a", "w", "bias"}, {"f"}, {}, "ai.infer");
  b.node("act2", "Tanh", {"f"}, {"z"});
  b.output("y");
  b.output("z");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  ASSERT_EQ(op_types(g), Ops({"FusedMatMul", "FusedMatMul"}));
  EXPECT_EQ(g.node(0).inputs.size(), 2u);
  EXPECT_EQ(g.node(0).attr_string("activation", ""), "Sigmoid");
  EXPECT_EQ(g.node(1).inputs.size(), 3u);
  EXPECT_EQ(g.node(1).attr_string("activation", ""), "Tanh");
}

// x (and z) -> FusedConv(W, conv_inputs..., conv_attrs) -> c -> <act>(c) -> y.
void build_fused_conv_act(ir::Graph& g, const std::vector<std::string>& conv_inputs,
                          std::vector<ir::Attribute> conv_attrs, const std::string& act) {
  GraphBuilder b(g);
  b.f32("W", {1, 1, 1, 1}, {2});
  for (const auto& in : conv_inputs)
    if (in == "x" || in == "z") b.input(in);
  b.node("conv", "FusedConv", conv_inputs, {"c"}, std::move(conv_attrs), "ai.infer");
  b.node("act", act, {"c"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

TEST(ActivationFusion, FusedConvWithResidualTakesTheActivation) {
  ir::Graph g;
  build_fused_conv_act(g, {"x", "W", "", "z"}, {}, "Relu");
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedConv"}));
  EXPECT_EQ(g.node(0).inputs[3], id_of(g, "z"));
  EXPECT_EQ(g.node(0).attr_string("activation", ""), "Relu");
}

TEST(ActivationFusion, RefusesWhenAnActivationIsAlreadySet) {
  ir::Graph g;
  build_fused_conv_act(g, {"x", "W"}, {attr_string("activation", "Relu")}, "Sigmoid");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"FusedConv", "Sigmoid"}));
}

TEST(ActivationFusion, RefusesAConvOutputWithTwoConsumers) {
  ir::Graph g;
  build_conv_act(g, "Relu");
  add_reader(g, "c", "other", "Neg", "n");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Relu", "Neg"}));

  ir::Graph h;  // the Conv output as a graph output is a second reader too
  build_conv_act(h, "Relu");
  GraphBuilder(h).output("c");
  EXPECT_EQ(run(h), 0);
}

TEST(ActivationFusion, RefusesBelowOpset9NonFloatAndUnknownActivations) {
  ir::Graph g;
  build_conv_act(g, "Relu");
  EXPECT_EQ(run(g, 8), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Relu"}));
  ir::Graph f;  // opset 9 to 12 models fuse too
  build_conv_act(f, "Relu");
  EXPECT_EQ(run(f, 11), 1);
  EXPECT_EQ(op_types(f), Ops({"FusedConv"}));

  ir::Graph h;  // an integer MatMul
  GraphBuilder b(h);
  b.typed("a", DataType::kInt32, {2, 2});
  b.typed("m", DataType::kInt32, {2, 2});
  b.typed("y", DataType::kInt32, {2, 2});
  b.input("a");
  b.node("mm", "MatMul", {"a", "a"}, {"m"});
  b.node("act", "Relu", {"m"}, {"y"});
  b.output("y");
  h.rebuild_links();
  EXPECT_EQ(run(h), 0);

  ir::Graph k;  // Softplus is not one of the fused activations
  build_conv_act(k, "Softplus");
  EXPECT_EQ(run(k), 0);
  ir::Graph u;  // a Gelu approximation nobody defines
  build_conv_act(u, "Gelu", {}, {attr_string("approximate", "fast")}, "ai.infer");
  EXPECT_EQ(run(u), 0);
}

TEST(ActivationFusion, RegisteredAtLevel2AndDisabledByName) {
  auto names_at = [](int level, std::vector<std::string> disabled) {
    Result<Pipeline> p = make_pipeline(level, disabled);
    EXPECT_TRUE(p.is_ok()) << p.status().message();
    return p.is_ok() ? p->pass_names() : std::vector<std::string>{};
  };
  auto position = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  const std::vector<std::string> l1 = names_at(1, {});
  const std::vector<std::string> l2 = names_at(2, {});
  const std::vector<std::string> l3 = names_at(3, {});
  const std::vector<std::string> fusions = {"conv_bn_folding", "conv_add_fusion",
                                            "matmul_add_fusion", "activation_fusion"};
  for (const std::string& f : fusions) {
    EXPECT_EQ(position(l1, f), static_cast<long>(l1.size())) << f;
    EXPECT_LT(position(l2, f), static_cast<long>(l2.size())) << f;
    EXPECT_LT(position(l3, f), static_cast<long>(l3.size())) << f;
  }
  for (size_t i = 0; i + 1 < fusions.size(); ++i)
    EXPECT_LT(position(l2, fusions[i]), position(l2, fusions[i + 1]));
  const std::vector<std::string> off = names_at(2, {"activation_fusion"});
  EXPECT_EQ(position(off, "activation_fusion"), static_cast<long>(off.size()));
  EXPECT_LT(position(off, "conv_add_fusion"), static_cast<long>(off.size()));
}

}  // namespace
}  // namespace infer::optimizer
