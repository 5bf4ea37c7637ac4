#include "optimizer/conv_bn_folding.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g, int64_t opset) { return apply_pass<ConvBnFolding>(g, context_at(opset)); }

// x [1,1,2,2] -> Conv(W=[[[[2]]]], B=[1]) -> c -> BN(scale 3, B 0.5, mean 2, var 3, eps 1)
// -> y. s = 3 / sqrt(3 + 1) = 1.5, so W' = 2·1.5 = 3 and B' = (1 - 2)·1.5 + 0.5 = -1.
void build_one_channel(ir::Graph& g, bool with_bias = true) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 1, 2, 2});
  b.typed("c", DataType::kFloat32, {1, 1, 2, 2});
  b.typed("y", DataType::kFloat32, {1, 1, 2, 2});
  b.f32("W", {1, 1, 1, 1}, {2.0f});
  if (with_bias) b.f32("B", {1}, {1.0f});
  b.f32("scale", {1}, {3.0f});
  b.f32("bn_b", {1}, {0.5f});
  b.f32("mean", {1}, {2.0f});
  b.f32("var", {1}, {3.0f});
  b.input("x");
  b.node("conv", "Conv", {"x", "W", with_bias ? "B" : ""}, {"c"},
         {attr_ints("kernel_shape", {1, 1})});
  b.node("bn", "BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"y"},
         {attr_float("epsilon", 1.0)});
  b.output("y");
  g.rebuild_links();
}

TEST(ConvBnFolding, FoldsOneChannelIntoWeightAndBias) {
  ir::Graph g;
  build_one_channel(g);
  ASSERT_EQ(run(g, 13), 1);
  ASSERT_EQ(op_types(g), Ops({"Conv"}));
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.outputs[0], id_of(g, "y"));  // the BN's output name survives
  EXPECT_EQ(conv.inputs[0], id_of(g, "x"));
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(values_of(g, conv.inputs[1]), std::vector<double>({3.0}));
  EXPECT_EQ(values_of(g, conv.inputs[2]), std::vector<double>({-1.0}));
  EXPECT_EQ(g.value(conv.inputs[1]).shape, ir::Shape::of({1, 1, 1, 1}));
  EXPECT_EQ(g.value(conv.inputs[2]).shape, ir::Shape::of({1}));
  // The original weight is untouched: another node may share it.
  EXPECT_EQ(values_of(g, id_of(g, "W")), std::vector<double>({2.0}));
  EXPECT_EQ(conv.attr("kernel_shape")->ints, std::vector<int64_t>({1, 1}));
  EXPECT_TRUE(g.validate().is_ok());
}

TEST(ConvBnFolding, TwoChannelsWithoutBias) {
  // W [2,1,1,2] = {1,2 | 3,4}; scale {1,2}, B {0,1}, mean {1,0}, var {4,1}, eps 0:
  // s = {1/2, 2/1} -> W' = {0.5,1 | 6,8}; B' = {(0-1)·0.5+0, (0-0)·2+1} = {-0.5, 1}.
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 1, 3, 3});
  b.f32("W", {2, 1, 1, 2}, {1, 2, 3, 4});
  b.f32("scale", {2}, {1, 2});
  b.f32("bn_b", {2}, {0, 1});
  b.f32("mean", {2}, {1, 0});
  b.f32("var", {2}, {4, 1});
  b.input("x");
  b.node("conv", "Conv", {"x", "W"}, {"c"});
  b.node("bn", "BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"y"},
         {attr_float("epsilon", 0.0)});
  b.node("after", "Relu", {"y"}, {"z"});
  b.output("z");
  g.rebuild_links();

  ASSERT_EQ(run(g, 15), 1);
  ASSERT_EQ(op_types(g), Ops({"Conv", "Relu"}));
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(values_of(g, conv.inputs[1]), std::vector<double>({0.5, 1, 6, 8}));
  EXPECT_EQ(values_of(g, conv.inputs[2]), std::vector<double>({-0.5, 1}));
  EXPECT_EQ(conv.outputs[0], id_of(g, "y"));
  EXPECT_EQ(g.node(1).inputs[0], id_of(g, "y"));
}

TEST(ConvBnFolding, KeepsTheWeightDtype) {
  // float64 throughout; default epsilon 1e-5 with var = 1 - 1e-5 gives s = scale exactly.
  ir::Graph g;
  GraphBuilder b(g);
  auto f64 = [&](const std::string& n, std::vector<int64_t> dims, std::vector<double> v) {
    b.constant_of<double>(n, DataType::kFloat64, dims, v);
  };
  b.typed("x", DataType::kFloat64, {1, 1, 2, 2});
  b.typed("c", DataType::kFloat64, {1, 1, 2, 2});
  b.typed("y", DataType::kFloat64, {1, 1, 2, 2});
  f64("W", {1, 1, 1, 1}, {4});
  f64("scale", {1}, {0.25});
  f64("bn_b", {1}, {10});
  f64("mean", {1}, {8});
  f64("var", {1}, {1 - 1e-5});
  b.input("x");
  b.node("conv", "Conv", {"x", "W"}, {"c"});
  b.node("bn", "BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"y"});
  b.output("y");
  g.rebuild_links();
  ASSERT_EQ(run(g, 13), 1);
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(g.value(conv.inputs[1]).dtype, DataType::kFloat64);
  EXPECT_EQ(g.value(conv.inputs[2]).dtype, DataType::kFloat64);
  // W' = 4·0.25 = 1; B' = (0 - 8)·0.25 + 10 = 8.
  EXPECT_NEAR(values_of(g, conv.inputs[1])[0], 1.0, 1e-12);
  EXPECT_NEAR(values_of(g, conv.inputs[2])[0], 8.0, 1e-12);
}

// Every refusal below must leave the graph exactly as it was.
void expect_unchanged(ir::Graph& g, int64_t opset, const Ops& ops) {
  EXPECT_EQ(run(g, opset), 0);
  EXPECT_EQ(op_types(g), ops);
}

TEST(ConvBnFolding, RefusesWhenTheConvOutputHasASecondReader) {
  ir::Graph g;
  build_one_channel(g);
  add_reader(g, "c");
  expect_unchanged(g, 13, {"Conv", "BatchNormalization", "Relu"});
}

TEST(ConvBnFolding, RefusesWhenTheConvOutputIsAGraphOutput) {
  ir::Graph g;
  build_one_channel(g);
  GraphBuilder(g).output("c");
  expect_unchanged(g, 13, {"Conv", "BatchNormalization"});
}

TEST(ConvBnFolding, RefusesANonConstantBatchNormParameter) {
  ir::Graph g;
  build_one_channel(g);
  // The mean becomes a graph input: its value is only known at run time.
  make_graph_input(g, "mean");
  expect_unchanged(g, 13, {"Conv", "BatchNormalization"});
}

TEST(ConvBnFolding, RefusesANonConstantWeightOrBias) {
  for (const char* name : {"W", "B"}) {
    ir::Graph g;
    build_one_channel(g);
    make_graph_input(g, name);
    expect_unchanged(g, 13, {"Conv", "BatchNormalization"});
  }
}

TEST(ConvBnFolding, FiresFromOpset9AndRefusesBelow) {
  ir::Graph g;
  build_one_channel(g);
  expect_unchanged(g, 8, {"Conv", "BatchNormalization"});
  ir::Graph h;
  build_one_channel(h);
  EXPECT_EQ(run(h, 9), 1);
  EXPECT_EQ(op_types(h), Ops({"Conv"}));
}

TEST(ConvBnFolding, RefusesTrainingMode) {
  ir::Graph g;
  build_one_channel(g);
  set_attr(g.node(1), attr_int("training_mode", 1));
  expect_unchanged(g, 14, {"Conv", "BatchNormalization"});
}

// Appends the named training-mode outputs to the BatchNormalization node.
void add_bn_outputs(ir::Graph& g, const std::vector<std::string>& names) {
  GraphBuilder b(g);
  for (const auto& n : names) g.node(1).outputs.push_back(b.value(n));
  g.rebuild_links();
}

TEST(ConvBnFolding, RefusesWhenARunningStatisticOutputIsUsed) {
  ir::Graph g;
  build_one_channel(g);
  add_bn_outputs(g, {"running_mean"});
  GraphBuilder(g).output("running_mean");
  expect_unchanged(g, 13, {"Conv", "BatchNormalization"});
}

TEST(ConvBnFolding, FoldsWhenTrainingOutputsAreDeclaredButUnused) {
  ir::Graph g;
  build_one_channel(g);
  add_bn_outputs(g, {"running_mean", "running_var"});
  ASSERT_EQ(run(g, 13), 1);
  EXPECT_EQ(op_types(g), Ops({"Conv"}));
}

TEST(ConvBnFolding, RefusesParametersOfTheWrongLength) {
  ir::Graph g;
  build_one_channel(g);
  GraphBuilder b(g);
  b.f32("scale2", {2}, {1, 1});
  g.node(1).inputs[1] = b.value("scale2");
  g.rebuild_links();
  expect_unchanged(g, 13, {"Conv", "BatchNormalization"});
}

// x [1,2,2,2] -> Conv(W {1,2 | 3,4} [2,2,1,1], B? {1,-1}) -> c -> Mul(c, k) -> y.
void build_conv_mul(ir::Graph& g, std::vector<int64_t> k_dims, std::vector<float> k_values,
                    bool with_bias, bool constant_first = false) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 2, 2, 2});
  b.typed("c", DataType::kFloat32, {1, 2, 2, 2});
  b.typed("y", DataType::kFloat32, {1, 2, 2, 2});
  b.f32("W", {2, 2, 1, 1}, {1, 2, 3, 4});
  if (with_bias) b.f32("B", {2}, {1, -1});
  b.f32("k", k_dims, k_values);
  b.input("x");
  b.node("conv", "Conv", {"x", "W", with_bias ? "B" : ""}, {"c"},
         {attr_ints("kernel_shape", {1, 1})});
  b.node("mul", "Mul",
         constant_first ? std::vector<std::string>{"k", "c"} : std::vector<std::string>{"c", "k"},
         {"y"});
  b.output("y");
  g.rebuild_links();
}

TEST(ConvBnFolding, FoldsAPerChannelMulIntoWeightAndBias) {
  // k [2,1,1] = {2, -0.5}: W' = {2,4 | -1.5,-2}, B' = {2, 0.5}.
  ir::Graph g;
  build_conv_mul(g, {2, 1, 1}, {2.0f, -0.5f}, true);
  ASSERT_EQ(run(g, 11), 1);
  ASSERT_EQ(op_types(g), Ops({"Conv"}));
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(conv.outputs[0], id_of(g, "y"));
  EXPECT_EQ(values_of(g, conv.inputs[1]), std::vector<double>({2, 4, -1.5, -2}));
  EXPECT_EQ(values_of(g, conv.inputs[2]), std::vector<double>({2, 0.5}));
  EXPECT_EQ(values_of(g, id_of(g, "W")), std::vector<double>({1, 2, 3, 4}));
  EXPECT_TRUE(g.validate().is_ok());
}

TEST(ConvBnFolding, FoldsAScalarMulWrittenConstantFirstWithoutBias) {
  // MobileOne's branch scale: Mul(k, conv) with k [1] = {3}; no bias stays no bias.
  ir::Graph g;
  build_conv_mul(g, {1}, {3.0f}, false, true);
  ASSERT_EQ(run(g, 9), 1);
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(values_of(g, conv.inputs[1]), std::vector<double>({3, 6, 9, 12}));
  EXPECT_TRUE(conv.inputs.size() < 3 || conv.inputs[2] == ir::kNoValue);
}

TEST(ConvBnFolding, RefusesAMulThatIsNotPerChannel) {
  ir::Graph g;  // varies along the width: not a per-channel scale
  build_conv_mul(g, {1, 2}, {1.0f, 2.0f}, true);
  EXPECT_EQ(run(g, 13), 0);
  EXPECT_EQ(op_types(g), Ops({"Conv", "Mul"}));
  ir::Graph h;  // the conv output read twice
  build_conv_mul(h, {1}, {3.0f}, true);
  GraphBuilder(h).output("c");
  h.rebuild_links();
  EXPECT_EQ(run(h, 13), 0);
}

}  // namespace
}  // namespace infer::optimizer
