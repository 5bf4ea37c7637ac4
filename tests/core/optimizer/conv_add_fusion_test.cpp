#include "optimizer/conv_add_fusion.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph_builder.hpp"
#include "optimizer/pipeline.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// x [1,2,3,3] -> Conv(W [2,2,1,1], B?) -> c [1,2,3,3] -> Add(c, k) -> y.
void build_conv_add(ir::Graph& g, std::vector<int64_t> k_dims, std::vector<float> k_values,
                    bool with_bias) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 2, 3, 3});
  b.typed("c", DataType::kFloat32, {1, 2, 3, 3});
  b.typed("y", DataType::kFloat32, {1, 2, 3, 3});
  b.f32("W", {2, 2, 1, 1}, {1, 0, 0, 1});
  if (with_bias) b.f32("B", {2}, {1, 2});
  b.f32("k", k_dims, k_values);
  b.input("x");
  b.node("conv", "Conv", {"x", "W", with_bias ? "B" : ""}, {"c"},
         {attr_ints("strides", {1, 1}), attr_ints("pads", {0, 0, 0, 0})});
  b.node("add", "Add", {"c", "k"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<ConvAddFusion>(g, context_at(opset));
}

// x [x_dims] -> Conv(W) -> c -> Add(c, k) -> y, with no attributes on the Conv.
void build_plain_conv_add(ir::Graph& g, const Ints& x_dims, const Ints& w_dims,
                          const std::vector<float>& w, const Ints& k_dims,
                          const std::vector<float>& k) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, x_dims);
  b.f32("W", w_dims, w);
  b.f32("k", k_dims, k);
  b.input("x");
  b.node("conv", "Conv", {"x", "W"}, {"c"});
  b.node("add", "Add", {"c", "k"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

TEST(ConvAddFusion, FoldsAChannelConstantIntoAMissingBias) {
  ir::Graph g;
  build_conv_add(g, {2, 1, 1}, {0.5f, -1.0f}, /*with_bias=*/false);
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Conv"}));
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.domain, "");
  EXPECT_EQ(conv.outputs[0], id_of(g, "y"));
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(values_of(g, conv.inputs[2]), std::vector<double>({0.5, -1.0}));
  EXPECT_EQ(g.value(conv.inputs[2]).shape, ir::Shape::of({2}));
}

TEST(ConvAddFusion, AddsAFourDimensionalChannelConstantToAnExistingBias) {
  ir::Graph g;
  build_conv_add(g, {1, 2, 1, 1}, {0.5f, -1.0f}, /*with_bias=*/true);
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Conv"}));
  // B {1, 2} + {0.5, -1} = {1.5, 1}; the original B constant is left alone.
  EXPECT_EQ(values_of(g, g.node(0).inputs[2]), std::vector<double>({1.5, 1.0}));
  EXPECT_EQ(values_of(g, id_of(g, "B")), std::vector<double>({1.0, 2.0}));
}

TEST(ConvAddFusion, BroadcastsAScalarConstantToEveryChannel) {
  ir::Graph g;
  build_conv_add(g, {}, {3.0f}, /*with_bias=*/true);
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(values_of(g, g.node(0).inputs[2]), std::vector<double>({4.0, 5.0}));
}

TEST(ConvAddFusion, ConstantBeforeTheConvOutputInTheAdd) {
  ir::Graph g;
  build_conv_add(g, {2, 1, 1}, {1.0f, 1.0f}, false);
  std::swap(g.node(1).inputs[0], g.node(1).inputs[1]);
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(values_of(g, g.node(0).inputs[2]), std::vector<double>({1.0, 1.0}));
}

TEST(ConvAddFusion, OneAndThreeDimensionalConvolutions) {
  {
    // 1-D: W [2,1,3], bias constant [2,1].
    ir::Graph g;
    build_plain_conv_add(g, {1, 1, 5}, {2, 1, 3}, {1, 1, 1, 1, 1, 1}, {2, 1}, {7, 8});
    EXPECT_EQ(run(g), 1);
    EXPECT_EQ(values_of(g, g.node(0).inputs[2]), std::vector<double>({7, 8}));
  }
  {
    // 3-D: W [2,1,1,1,1], bias constant [2,1,1,1].
    ir::Graph g;
    build_plain_conv_add(g, {1, 1, 2, 2, 2}, {2, 1, 1, 1, 1}, {1, 2}, {2, 1, 1, 1}, {-1, -2});
    EXPECT_EQ(run(g), 1);
    EXPECT_EQ(values_of(g, g.node(0).inputs[2]), std::vector<double>({-1, -2}));
  }
}

TEST(ConvAddFusion, Float16BiasIsWrittenAsFloat16) {
  // Half bit patterns: 1.0 = 0x3C00, 2.0 = 0x4000, 0.5 = 0x3800, 1.5 = 0x3E00, 2.5 = 0x4100.
  ir::Graph g;
  GraphBuilder b(g);
  for (const char* v : {"x", "c", "y"}) b.typed(v, DataType::kFloat16, {1, 1, 2, 2});
  b.constant_of<uint16_t>("W", DataType::kFloat16, {2, 1, 1, 1}, {0x3C00, 0x3C00});
  b.constant_of<uint16_t>("B", DataType::kFloat16, {2}, {0x3C00, 0x4000});
  b.constant_of<uint16_t>("k", DataType::kFloat16, {2, 1, 1}, {0x3800, 0x3800});
  b.input("x");
  b.node("conv", "Conv", {"x", "W", "B"}, {"c"});
  b.node("add", "Add", {"c", "k"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  const ir::TensorData* bias = g.value(g.node(0).inputs[2]).constant.get();
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(bias->dtype(), DataType::kFloat16);
  ASSERT_EQ(bias->element_count(), 2);
  EXPECT_EQ(bias->as<uint16_t>()[0], 0x3E00);
  EXPECT_EQ(bias->as<uint16_t>()[1], 0x4100);
}

TEST(ConvAddFusion, RefusesConstantsThatAreNotPerChannel) {
  // [2] aligns with the last spatial axis, [1,2,3,1] varies along H, and a rank-5
  // constant would broadcast the result to a larger rank.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> cases = {
      {{2}, {1, 2}},
      {{1, 2, 3, 1}, {1, 2, 3, 4, 5, 6}},
      {{1, 1, 2, 1, 1}, {1, 2}},
      {{3, 1, 1}, {1, 2, 3}}};
  for (const auto& [dims, values] : cases) {
    ir::Graph g;
    build_conv_add(g, dims, values, false);
    EXPECT_EQ(run(g), 0);
    EXPECT_EQ(op_types(g), Ops({"Conv", "Add"}));
  }
}

TEST(ConvAddFusion, RefusesANonConstantExistingBias) {
  ir::Graph g;
  build_conv_add(g, {2, 1, 1}, {1, 1}, true);
  make_graph_input(g, "B");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Add"}));
}

TEST(ConvAddFusion, FiresFromOpset9AndRefusesBelow) {
  ir::Graph g;
  build_conv_add(g, {2, 1, 1}, {1, 1}, false);
  EXPECT_EQ(run(g, 8), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Add"}));
  ir::Graph h;  // PaddleOCR's exports are opset 9 and 11: the constant becomes the bias
  build_conv_add(h, {2, 1, 1}, {1, 1}, false);
  EXPECT_EQ(run(h, 9), 1);
  EXPECT_EQ(op_types(h), Ops({"Conv"}));
  EXPECT_EQ(h.node(0).inputs.size(), 3u);
}

TEST(ConvAddFusion, RefusesAConvOutputWithTwoReaders) {
  ir::Graph g;
  build_conv_add(g, {2, 1, 1}, {1, 1}, false);
  add_reader(g, "c");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Add", "Relu"}));
}

// x -> Conv -> c; s is produced AFTER the Conv in node order; Add(c, s) -> y.
ir::Shape residual_shape() { return shape_of({sym("n"), dim(2), dim(3), dim(3)}); }

void build_residual(ir::Graph& g, ir::Shape s_shape) {
  GraphBuilder b(g);
  for (const char* v : {"x", "c", "y"}) b.typed(v, DataType::kFloat32, residual_shape());
  b.typed("s", DataType::kFloat32, std::move(s_shape));
  b.f32("W", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.input("x");
  b.input("t");
  b.node("conv", "Conv", {"x", "W"}, {"c"}, {attr_ints("strides", {1, 1}), attr_int("group", 1)});
  b.node("skip", "Relu", {"t"}, {"s"});
  b.node("add", "Add", {"c", "s"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

TEST(ConvAddFusion, ResidualBecomesFusedConvWithZ) {
  ir::Graph g;
  build_residual(g, residual_shape());
  EXPECT_EQ(run(g), 1);
  // The skip branch now runs first: the fused node reads its output.
  ASSERT_EQ(op_types(g), Ops({"Relu", "FusedConv"}));
  const ir::Node& fused = g.node(1);
  EXPECT_EQ(fused.name, "conv");
  EXPECT_EQ(fused.domain, "ai.infer");
  ASSERT_EQ(fused.inputs.size(), 4u);
  EXPECT_EQ(fused.inputs[0], id_of(g, "x"));
  EXPECT_EQ(fused.inputs[1], id_of(g, "W"));
  EXPECT_EQ(fused.inputs[2], ir::kNoValue);
  EXPECT_EQ(fused.inputs[3], id_of(g, "s"));
  EXPECT_EQ(fused.outputs[0], id_of(g, "y"));
  EXPECT_EQ(fused.attr("strides")->ints, std::vector<int64_t>({1, 1}));
  EXPECT_EQ(fused.attr_int("group", 0), 1);
  EXPECT_EQ(fused.attr("activation"), nullptr);
}

TEST(ConvAddFusion, ResidualRefusedWhenShapesAreNotProvablyEqual) {
  // A different symbol, a broadcast [1,2,1,1] operand (non-constant) and an unknown rank.
  ir::Shape unknown_rank;
  for (const ir::Shape& s : {shape_of({sym("m"), dim(2), dim(3), dim(3)}),
                             shape_of({dim(1), dim(2), dim(1), dim(1)}), unknown_rank}) {
    ir::Graph g;
    build_residual(g, s);
    EXPECT_EQ(run(g), 0);
    EXPECT_EQ(op_types(g), Ops({"Conv", "Relu", "Add"}));
  }
}

TEST(ConvAddFusion, ResidualRefusedWhenZIsAlreadySetOrAnActivationIsSet) {
  ir::Graph g;
  build_residual(g, residual_shape());
  ir::Node& conv = g.node(0);
  conv.op_type = "FusedConv";
  conv.domain = "ai.infer";
  conv.inputs = {id_of(g, "x"), id_of(g, "W"), ir::kNoValue, id_of(g, "x")};
  EXPECT_EQ(run(g), 0);

  ir::Graph h;
  build_residual(h, residual_shape());
  h.node(0).op_type = "FusedConv";
  h.node(0).domain = "ai.infer";
  set_attr(h.node(0), attr_string("activation", "Relu"));
  EXPECT_EQ(run(h), 0);
  EXPECT_EQ(op_types(h), Ops({"FusedConv", "Relu", "Add"}));
}

TEST(ConvAddFusion, TwoConvolutionsIntoOneAddFuseOnce) {
  // Add(conv1, conv2): one Conv becomes FusedConv with the other's output as Z.
  ir::Graph g;
  GraphBuilder b(g);
  for (const char* v : {"x", "c1", "c2", "y"}) b.typed(v, DataType::kFloat32, {1, 2, 3, 3});
  b.f32("W", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.input("x");
  b.node("conv1", "Conv", {"x", "W"}, {"c1"});
  b.node("conv2", "Conv", {"x", "W"}, {"c2"});
  b.node("add", "Add", {"c1", "c2"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"Conv", "FusedConv"}));
  EXPECT_EQ(g.node(1).name, "conv1");
  EXPECT_EQ(g.node(1).inputs[3], id_of(g, "c2"));
}

// x -> Conv(W) -> c -> BatchNormalization(bn_attrs) -> bn -> Add(bn, x) -> sum -> Relu -> y.
void build_resnet_block(ir::Graph& g, std::vector<ir::Attribute> bn_attrs) {
  GraphBuilder b(g);
  for (const char* v : {"x", "c", "bn", "sum", "y"}) b.typed(v, DataType::kFloat32, {1, 1, 2, 2});
  b.f32("W", {1, 1, 1, 1}, {2});
  b.f32("scale", {1}, {1});
  b.f32("bn_b", {1}, {3});
  b.f32("mean", {1}, {1});
  b.f32("var", {1}, {1});
  b.input("x");
  b.node("conv", "Conv", {"x", "W"}, {"c"});
  b.node("norm", "BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"bn"},
         std::move(bn_attrs));
  b.node("add", "Add", {"bn", "x"}, {"sum"});
  b.node("relu", "Relu", {"sum"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

TEST(ConvAddFusion, ResNetBlockThroughTheLevel2Pipeline) {
  // Conv -> BN -> Add(residual x) -> Relu, at level 2: one FusedConv with the folded
  // BN, Z = x and a Relu activation.
  ir::Graph g;
  build_resnet_block(g, {attr_float("epsilon", 0.0)});

  Result<Pipeline> p = make_pipeline(2, {});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_TRUE(p->run(g, context_at(13)).is_ok());
  ASSERT_EQ(op_types(g), Ops({"FusedConv"}));
  const ir::Node& fused = g.node(0);
  EXPECT_EQ(fused.name, "conv");
  EXPECT_EQ(fused.attr_string("activation", ""), "Relu");
  EXPECT_EQ(fused.inputs[3], id_of(g, "x"));
  EXPECT_EQ(fused.outputs[0], id_of(g, "y"));
  // s = 1, W' = 2, B' = (0 - 1)·1 + 3 = 2.
  EXPECT_EQ(values_of(g, fused.inputs[1]), std::vector<double>({2}));
  EXPECT_EQ(values_of(g, fused.inputs[2]), std::vector<double>({2}));

  // With the fusions disabled by name, only the BN folds.
  ir::Graph h;
  build_resnet_block(h, {});
  Result<Pipeline> q = make_pipeline(2, {"conv_add_fusion", "activation_fusion"});
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  ASSERT_TRUE(q->run(h, context_at(13)).is_ok());
  EXPECT_EQ(op_types(h), Ops({"Conv", "Add", "Relu"}));
}

}  // namespace
}  // namespace infer::optimizer
