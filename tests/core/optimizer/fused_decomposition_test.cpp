// The decompositions of the ai.infer fused operators into standard ONNX operators
// (sdk/FUSED_OPS.md): the right operators, wired to the fused node's inputs, writing its
// output value, valid at the model's opset. Their numerics are checked against the CPU
// plugin's fused kernels in tests/core/runtime/fused_ops_numeric_test.cpp.
#include "optimizer/fused_decomposition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// a, bm -> FusedMatMul "mm" (activation `act`) -> y.
void build_fused_matmul(ir::Graph& g, const std::string& act) {
  GraphBuilder b(g);
  b.input("a");
  b.input("bm");
  b.node("mm", "FusedMatMul", {"a", "bm"}, {"y"}, {attr_string("activation", act)}, kFusedDomain);
  b.output("y");
  g.rebuild_links();
}

TEST(FusedDecomposition, FusedConvWithResidualAndReluBecomesConvAddRelu) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.input("z");
  b.f32("w", {1, 1, 1, 1}, {2.0f});
  b.f32("bias", {1}, {0.5f});
  b.node("conv1", "FusedConv", {"x", "w", "bias", "z"}, {"y"},
         {attr_ints("strides", {1, 1}), attr_string("activation", "Relu")}, kFusedDomain);
  b.output("y");
  g.rebuild_links();
  auto made = decompose_fused_nodes(g, {0}, context_at(17));
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  EXPECT_EQ(op_types(g), Ops({"Conv", "Add", "Relu"}));
  ASSERT_EQ(made->size(), 1u);
  EXPECT_EQ((*made)[0], (std::vector<std::string>{"conv1", "conv1/Add", "conv1/Relu"}));
  const ir::Node& conv = g.node(0);
  EXPECT_EQ(conv.domain, "");
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(g.value(conv.inputs[2]).name, "bias");
  ASSERT_NE(conv.attr("strides"), nullptr);
  EXPECT_EQ(conv.attr("activation"), nullptr);
  EXPECT_EQ(g.value(g.node(1).inputs[1]).name, "z");
  EXPECT_EQ(g.value(g.node(2).outputs[0]).name, "y");
  EXPECT_TRUE(g.validate().is_ok()) << g.validate().message();
}

TEST(FusedDecomposition, WithoutActivationTheLastOperatorWritesTheOutput) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("a");
  b.f32("w", {2, 2}, {1, 2, 3, 4});
  b.f32("bias", {2}, {1, 1});
  b.node("mm", "FusedMatMul", {"a", "w", "bias"}, {"y"}, {}, kFusedDomain);
  b.output("y");
  g.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
  EXPECT_EQ(op_types(g), Ops({"MatMul", "Add"}));
  EXPECT_EQ(g.value(g.node(1).outputs[0]).name, "y");
}

TEST(FusedDecomposition, ClipBoundsThatAreInfiniteBecomeOmittedInputs) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("a");
  b.input("bm");
  b.node("gemm", "FusedGemm", {"a", "bm"}, {"y"},
         {attr_int("transB", 1), attr_string("activation", "Clip"),
          attr_floats("activation_params", {0.0, std::numeric_limits<double>::infinity()})},
         kFusedDomain);
  b.output("y");
  g.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
  EXPECT_EQ(op_types(g), Ops({"Gemm", "Clip"}));
  const ir::Node* clip = find_op(g, "Clip");
  ASSERT_EQ(clip->inputs.size(), 2u) << "max is omitted";
  EXPECT_EQ(scalar_constant(g, clip->inputs[1]), 0.0);
  EXPECT_EQ(g.node(0).attr_int("transB", 0), 1);
}

TEST(FusedDecomposition, ClipBeforeOpset11TakesItsBoundsAsAttributes) {
  // Clip-6: a finite bound is an attribute, an infinite one is left to the attribute's
  // default (the end of the float range); no bound inputs.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("a");
  b.input("bm");
  b.node("gemm", "FusedGemm", {"a", "bm"}, {"y"},
         {attr_string("activation", "Clip"),
          attr_floats("activation_params", {-std::numeric_limits<double>::infinity(), 6.0})},
         kFusedDomain);
  b.output("y");
  g.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(9)).is_ok());
  EXPECT_EQ(op_types(g), Ops({"Gemm", "Clip"}));
  const ir::Node* clip = find_op(g, "Clip");
  EXPECT_EQ(clip->inputs.size(), 1u);
  EXPECT_EQ(clip->attr("min"), nullptr);
  EXPECT_EQ(clip->attr_float("max", 0), 6.0);
  EXPECT_EQ(g.value(clip->outputs[0]).name, "y");
}

TEST(FusedDecomposition, HardSwishBeforeOpset14IsHardSigmoidTimesX) {
  ir::Graph g;
  build_fused_matmul(g, "HardSwish");
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
  EXPECT_EQ(op_types(g), Ops({"MatMul", "HardSigmoid", "Mul"}));
  EXPECT_NEAR(find_op(g, "HardSigmoid")->attr_float("alpha", 0), 1.0 / 6, 1e-12);

  ir::Graph g14;
  build_fused_matmul(g14, "HardSwish");
  ASSERT_TRUE(decompose_fused_nodes(g14, {0}, context_at(14)).is_ok());
  EXPECT_EQ(op_types(g14), Ops({"MatMul", "HardSwish"}));
}

TEST(FusedDecomposition, GeluBecomesTheErfFormula) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("gelu", "Gelu", {"x"}, {"y"}, {}, kFusedDomain);
  b.output("y");
  g.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
  EXPECT_EQ(op_types(g), Ops({"Div", "Erf", "Add", "Mul", "Mul"}));
  EXPECT_NEAR(*scalar_constant(g, find_op(g, "Div")->inputs[1]), std::sqrt(2.0), 1e-6);
}

TEST(FusedDecomposition, LayerNormalizationBeforeOpset17IsReduceMeanArithmetic) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.f32("scale", {2}, {1, 2});
  b.f32("bias", {2}, {0, 1});
  b.node("ln", "LayerNormalization", {"x", "scale", "bias"}, {"y"},
         {attr_int("axis", -1), attr_float("epsilon", 1e-5)}, kFusedDomain);
  b.output("y");
  g.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
  EXPECT_EQ(op_types(g),
            Ops({"ReduceMean", "Sub", "Mul", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"}));
  EXPECT_EQ(find_op(g, "ReduceMean")->attr("axes")->ints, (std::vector<int64_t>{-1}));

  // From opset 17 ONNX has the operator itself.
  ir::Graph g17;
  GraphBuilder b17(g17);
  b17.input("x");
  b17.f32("scale", {2}, {1, 2});
  b17.node("ln", "LayerNormalization", {"x", "scale"}, {"y"}, {attr_int("axis", -1)}, kFusedDomain);
  b17.output("y");
  g17.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g17, {0}, context_at(17)).is_ok());
  EXPECT_EQ(op_types(g17), Ops({"LayerNormalization"}));
  EXPECT_EQ(g17.node(0).domain, "");
}

TEST(FusedDecomposition, AttentionIsTheHeadSplitSoftmaxChain) {
  ir::Graph g;
  GraphBuilder b(g);
  for (const char* n : {"q", "k", "v", "mask"}) b.input(n);
  b.node("attn", "Attention", {"q", "k", "v", "mask"}, {"y"},
         {attr_int("num_heads", 4), attr_float("scale", 0.25)}, kFusedDomain);
  b.output("y");
  g.rebuild_links();
  ASSERT_TRUE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
  EXPECT_EQ(count_op(g, "Transpose"), 4u);
  EXPECT_EQ(count_op(g, "Reshape"), 4u);
  const ir::Node* reshape = find_op(g, "Reshape");
  EXPECT_EQ(int_constant(g, reshape->inputs[1]), (std::vector<int64_t>{0, 0, 4, -1}));
  EXPECT_EQ(find_op(g, "Softmax")->attr_int("axis", 0), -1);
  EXPECT_EQ(*scalar_constant(g, find_op(g, "Mul")->inputs[1]), 0.25);
  ASSERT_NE(find_op(g, "Add"), nullptr);
  EXPECT_EQ(g.value(find_op(g, "Add")->inputs[1]).name, "mask");
  EXPECT_EQ(g.value(g.nodes().back().outputs[0]).name, "y");
  EXPECT_TRUE(g.validate().is_ok()) << g.validate().message();
}

TEST(FusedDecomposition, UnknownActivationIsAnErrorNamingTheNode) {
  ir::Graph g;
  build_fused_matmul(g, "Swish");
  auto made = decompose_fused_nodes(g, {0}, context_at(13));
  ASSERT_FALSE(made.is_ok());
  EXPECT_NE(made.status().message().find("node 'mm' (ai.infer:FusedMatMul)"), std::string::npos)
      << made.status().message();
  EXPECT_NE(made.status().message().find("unknown activation 'Swish'"), std::string::npos);
}

TEST(FusedDecomposition, NonFusedNodeIsRefused) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("a");
  b.node("r", "Relu", {"a"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_FALSE(is_decomposable_fused_node(g.node(0)));
  EXPECT_FALSE(decompose_fused_nodes(g, {0}, context_at(13)).is_ok());
}

}  // namespace
}  // namespace infer::optimizer
