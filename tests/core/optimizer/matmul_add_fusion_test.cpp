#include "optimizer/matmul_add_fusion.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// a [a_dims] x w [3,4] -> m -> Add(m, bias) -> y.
void build(ir::Graph& g, std::vector<int64_t> a_dims, std::vector<int64_t> bias_dims,
           std::vector<float> bias, DataType dt = DataType::kFloat32) {
  GraphBuilder b(g);
  b.typed("a", dt, a_dims);
  b.typed("w", dt, {3, 4});
  b.typed("m", dt, ir::Shape{});
  b.typed("y", dt, ir::Shape{});
  if (dt == DataType::kFloat32)
    b.f32("bias", bias_dims, bias);
  else
    b.constant_of<int32_t>("bias", dt, bias_dims, std::vector<int32_t>(bias.begin(), bias.end()));
  b.input("a");
  b.input("w");
  b.node("mm", "MatMul", {"a", "w"}, {"m"});
  b.node("add", "Add", {"m", "bias"}, {"y"});
  b.output("y");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<MatMulAddFusion>(g, context_at(opset));
}

TEST(MatMulAddFusion, FusesARowBias) {
  ir::Graph g;
  build(g, {2, 3}, {4}, {1, 2, 3, 4});
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedMatMul"}));
  const ir::Node& n = g.node(0);
  EXPECT_EQ(n.name, "mm");
  EXPECT_EQ(n.domain, "ai.infer");
  EXPECT_EQ(n.inputs, std::vector<ir::ValueId>({id_of(g, "a"), id_of(g, "w"), id_of(g, "bias")}));
  EXPECT_EQ(n.outputs[0], id_of(g, "y"));
  EXPECT_TRUE(n.attributes.empty());
}

TEST(MatMulAddFusion, BiasFirstAndBatchedProductWithAReshapedBias) {
  ir::Graph g;
  build(g, {5, 2, 3}, {1, 1, 4}, {4, 3, 2, 1});
  std::swap(g.node(1).inputs[0], g.node(1).inputs[1]);
  EXPECT_EQ(run(g), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedMatMul"}));
  const ir::ValueId bias = g.node(0).inputs[2];
  EXPECT_EQ(g.value(bias).shape, ir::Shape::of({4}));
  EXPECT_EQ(values_of(g, bias), std::vector<double>({4, 3, 2, 1}));
}

TEST(MatMulAddFusion, VectorTimesMatrix) {
  ir::Graph g;
  build(g, {3}, {4}, {1, 1, 1, 1});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g), Ops({"FusedMatMul"}));
}

TEST(MatMulAddFusion, RefusesWhatIsNotARowBias) {
  // A [2,4] bias repeats per row, [3] does not match N = 4, and [1,1,4] would broadcast
  // the rank-2 product to rank 3.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> cases = {
      {{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}}, {{3}, {1, 2, 3}}, {{1, 1, 4}, {1, 2, 3, 4}}};
  for (const auto& [dims, values] : cases) {
    ir::Graph g;
    build(g, {2, 3}, dims, values);
    EXPECT_EQ(run(g), 0);
    EXPECT_EQ(op_types(g), Ops({"MatMul", "Add"}));
  }
}

TEST(MatMulAddFusion, RefusesANonConstantBias) {
  ir::Graph g;
  build(g, {2, 3}, {4}, {1, 2, 3, 4});
  make_graph_input(g, "bias");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"MatMul", "Add"}));
}

TEST(MatMulAddFusion, RefusesAProductWithASecondReader) {
  ir::Graph g;
  build(g, {2, 3}, {4}, {1, 2, 3, 4});
  GraphBuilder(g).output("m");
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(op_types(g), Ops({"MatMul", "Add"}));
}

TEST(MatMulAddFusion, RefusesBelowOpset9AndIntegerTypes) {
  ir::Graph g;
  build(g, {2, 3}, {4}, {1, 2, 3, 4});
  EXPECT_EQ(run(g, 8), 0);
  EXPECT_EQ(op_types(g), Ops({"MatMul", "Add"}));
  ir::Graph f;
  build(f, {2, 3}, {4}, {1, 2, 3, 4});
  EXPECT_EQ(run(f, 9), 1);
  EXPECT_EQ(op_types(f), Ops({"FusedMatMul"}));

  ir::Graph h;
  build(h, {2, 3}, {4}, {1, 2, 3, 4}, DataType::kInt32);
  EXPECT_EQ(run(h), 0);
  EXPECT_EQ(op_types(h), Ops({"MatMul", "Add"}));
}

TEST(MatMulAddFusion, RefusesAFusedMatMulThatAlreadyHasAnActivation) {
  ir::Graph g;
  build(g, {2, 3}, {4}, {1, 2, 3, 4});
  g.node(0).op_type = "FusedMatMul";
  g.node(0).domain = "ai.infer";
  set_attr(g.node(0), attr_string("activation", "Relu"));
  EXPECT_EQ(run(g), 0);
  // Without the activation the same FusedMatMul takes the bias.
  remove_attr(g.node(0), "activation");
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g), Ops({"FusedMatMul"}));
}

}  // namespace
}  // namespace infer::optimizer
