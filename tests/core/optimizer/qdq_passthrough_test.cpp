#include "optimizer/qdq_passthrough.hpp"

#include <gtest/gtest.h>

#include "qdq_test_graphs.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

const std::vector<int64_t> kIn = {1, 2, 4, 4}, kOut = {1, 2, 2, 2};

// x_q -> DQ -> MaxPool 2x2 stride 2 -> Q (params `out`) -> y_q.
void maxpool_graph(ir::Graph& g, float out_scale, int out_zero, bool indices = false) {
  GraphBuilder b(g);
  qparams(b, "in", 0.5f, 10);
  qparams(b, "out", out_scale, out_zero);
  b.typed("x_q", DataType::kUInt8, kIn);
  b.input("x_q");
  dequantize(b, "x_q", "in", "x", kIn);
  b.typed("p", DataType::kFloat32, kOut);
  b.node("pool", "MaxPool", {"x"},
         indices ? std::vector<std::string>{"p", "idx"} : std::vector<std::string>{"p"},
         {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})});
  quantize(b, "p", "out", "y_q", kOut);
  b.output("y_q");
  if (indices) b.output("idx");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<QdqPassthrough>(g, context_at(opset));
}

TEST(QdqPassthrough, MaxPoolWithTheSameParametersRunsOnTheQuantizedData) {
  ir::Graph g;
  maxpool_graph(g, 0.5f, 10);
  EXPECT_EQ(run(g), 1);
  // The DequantizeLinear is left for dead-code elimination.
  EXPECT_EQ(op_types(g), Ops({"DequantizeLinear", "MaxPool"}));
  const ir::Node* pool = find_op(g, "MaxPool");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->inputs[0], id_of(g, "x_q"));
  EXPECT_EQ(pool->outputs[0], id_of(g, "y_q"));
  ASSERT_NE(pool->attr("kernel_shape"), nullptr);
}

TEST(QdqPassthrough, LeavesOtherParametersIndicesAndOldOpsets) {
  {
    ir::Graph g;  // another scale: the QuantizeLinear requantizes
    maxpool_graph(g, 0.25f, 10);
    EXPECT_EQ(run(g), 0);
  }
  {
    ir::Graph g;  // another zero point
    maxpool_graph(g, 0.5f, 11);
    EXPECT_EQ(run(g), 0);
  }
  {
    ir::Graph g;  // MaxPool's Indices output is used
    maxpool_graph(g, 0.5f, 10, /*indices=*/true);
    EXPECT_EQ(run(g), 0);
  }
  {
    ir::Graph g;
    maxpool_graph(g, 0.5f, 10);
    EXPECT_EQ(run(g, 12), 0);
  }
}

TEST(QdqPassthrough, PooledValueReadElsewhereStaysFloat) {
  ir::Graph g;
  maxpool_graph(g, 0.5f, 10);
  g.outputs.push_back(id_of(g, "p"));
  EXPECT_EQ(run(g), 0);
}

// Concat of two DequantizeLinear outputs: fused only when both inputs have the output's
// parameters.
void concat_graph(ir::Graph& g, float second_scale) {
  GraphBuilder b(g);
  qparams(b, "a", 0.5f, 10);
  qparams(b, "b", second_scale, 10);
  b.typed("a_q", DataType::kUInt8, kIn);
  b.typed("b_q", DataType::kUInt8, kIn);
  b.input("a_q");
  b.input("b_q");
  dequantize(b, "a_q", "a", "a", kIn);
  dequantize(b, "b_q", "b", "b", kIn);
  b.typed("c", DataType::kFloat32, {1, 4, 4, 4});
  b.node("concat", "Concat", {"a", "b"}, {"c"}, {attr_int("axis", 1)});
  quantize(b, "c", "a", "c_q", {1, 4, 4, 4});
  b.output("c_q");
  g.rebuild_links();
}

TEST(QdqPassthrough, ConcatNeedsEveryInputWithTheOutputsParameters) {
  {
    ir::Graph g;
    concat_graph(g, 0.5f);
    EXPECT_EQ(run(g), 1);
    const ir::Node* c = find_op(g, "Concat");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->inputs[0], id_of(g, "a_q"));
    EXPECT_EQ(c->inputs[1], id_of(g, "b_q"));
    EXPECT_EQ(c->outputs[0], id_of(g, "c_q"));
    EXPECT_EQ(count_op(g, "QuantizeLinear"), 0u);
  }
  {
    ir::Graph g;
    concat_graph(g, 0.75f);
    EXPECT_EQ(run(g), 0);
  }
}

}  // namespace
}  // namespace infer::optimizer
