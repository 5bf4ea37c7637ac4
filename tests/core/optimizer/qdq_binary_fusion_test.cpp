#include "optimizer/qdq_binary_fusion.hpp"

#include <gtest/gtest.h>

#include "optimizer/rewrite.hpp"
#include "qdq_test_graphs.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

const std::vector<int64_t> kDims = {1, 2, 3, 3};

struct Options {
  std::string op = "Add";
  DataType b_dtype = DataType::kUInt8;
  bool a_zero = true;          // false: a's DequantizeLinear has no zero point
  bool sum_is_output = false;  // the float sum is also a graph output
};

// a_q, b_q -> DQ each -> op -> Q -> c_q.
void build(ir::Graph& g, const Options& o) {
  GraphBuilder b(g);
  qparams(b, "a", 0.5f, 3);
  qparams(b, "b", 0.25f, o.b_dtype == DataType::kUInt8 ? 128 : -5, o.b_dtype);
  qparams(b, "c", 0.75f, 100);
  b.typed("a_q", DataType::kUInt8, kDims);
  b.typed("b_q", o.b_dtype, kDims);
  b.input("a_q");
  b.input("b_q");
  b.typed("a", DataType::kFloat32, kDims);
  b.node("dq_a", "DequantizeLinear",
         o.a_zero ? std::vector<std::string>{"a_q", "a_scale", "a_zero"}
                  : std::vector<std::string>{"a_q", "a_scale"},
         {"a"});
  dequantize(b, "b_q", "b", "b", kDims);
  b.typed("s", DataType::kFloat32, kDims);
  b.node("residual", o.op, {"a", "b"}, {"s"});
  quantize(b, "s", "c", "c_q", kDims);
  b.output("c_q");
  if (o.sum_is_output) b.output("s");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<QdqBinaryFusion>(g, context_at(opset));
}

TEST(QdqBinaryFusion, AddBetweenDequantizeAndQuantizeBecomesQLinearAdd) {
  ir::Graph g;
  build(g, {});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g), Ops({"DequantizeLinear", "DequantizeLinear", "QLinearAdd"}));
  const ir::Node* n = find_op(g, "QLinearAdd");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain, "ai.infer");
  EXPECT_EQ(n->name, "residual");
  const char* names[] = {"a_q",     "a_scale", "a_zero",  "b_q",
                         "b_scale", "b_zero",  "c_scale", "c_zero"};
  ASSERT_EQ(n->inputs.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(g.value(n->inputs[i]).name, names[i]) << i;
  EXPECT_EQ(n->outputs[0], id_of(g, "c_q"));
}

TEST(QdqBinaryFusion, MulBecomesQLinearMul) {
  ir::Graph g;
  build(g, {.op = "Mul"});
  EXPECT_EQ(run(g), 1);
  const ir::Node* n = find_op(g, "QLinearMul");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain, "ai.infer");
}

TEST(QdqBinaryFusion, AnOmittedZeroPointBecomesAZeroConstant) {
  ir::Graph g;
  build(g, {.a_zero = false});
  EXPECT_EQ(run(g), 1);
  const ir::Node* n = find_op(g, "QLinearAdd");
  ASSERT_NE(n, nullptr);
  const ir::TensorData* z = constant_of(g, n->inputs[2]);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->dtype(), DataType::kUInt8);
  ASSERT_EQ(z->element_count(), 1);
  EXPECT_EQ(z->as<uint8_t>()[0], 0);
}

TEST(QdqBinaryFusion, LeavesMixedTypesSharedSumsOtherOpsAndOldOpsets) {
  {
    ir::Graph g;  // b int8, c uint8: the fused op has one type
    build(g, {.b_dtype = DataType::kInt8});
    EXPECT_EQ(run(g), 0);
  }
  {
    ir::Graph g;
    build(g, {.sum_is_output = true});
    EXPECT_EQ(run(g), 0);
  }
  {
    ir::Graph g;
    build(g, {.op = "Sub"});
    EXPECT_EQ(run(g), 0);
  }
  {
    ir::Graph g;
    build(g, {});
    EXPECT_EQ(run(g, 12), 0);
  }
}

}  // namespace
}  // namespace infer::optimizer
