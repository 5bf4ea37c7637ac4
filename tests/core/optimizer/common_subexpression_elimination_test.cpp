#include "optimizer/common_subexpression_elimination.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "optimizer/pass_registry.hpp"
#include "optimizer/pipeline.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g) { return apply_pass<CommonSubexpressionElimination>(g, context_at(17)); }

TEST(CommonSubexpressionElimination, MergesIdenticalNodes) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("r1", "Relu", {"x"}, {"a1"});
  b.node("r2", "Relu", {"x"}, {"a2"});
  b.node("sum", "Add", {"a1", "a2"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"r1", "sum"}));
  EXPECT_EQ(node_named(g, "sum").inputs,
            std::vector<ir::ValueId>({id_of(g, "a1"), id_of(g, "a1")}));
  EXPECT_EQ(run(g), 0);
}

TEST(CommonSubexpressionElimination, ChainsMergeInOneApplication) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("r1", "Relu", {"x"}, {"a1"});
  b.node("n1", "Neg", {"a1"}, {"b1"});
  b.node("r2", "Relu", {"x"}, {"a2"});
  b.node("n2", "Neg", {"a2"}, {"b2"});
  b.node("sum", "Add", {"b1", "b2"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(node_names(g), Names({"r1", "n1", "sum"}));
  EXPECT_EQ(node_named(g, "sum").inputs,
            std::vector<ir::ValueId>({id_of(g, "b1"), id_of(g, "b1")}));
}

TEST(CommonSubexpressionElimination, AttributesCompareByValueInAnyOrder) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("s1", "Softmax", {"x"}, {"a"}, {attr_int("axis", -1), attr_string("tag", "t")});
  b.node("s2", "Softmax", {"x"}, {"b"}, {attr_string("tag", "t"), attr_int("axis", -1)});
  b.node("s3", "Softmax", {"x"}, {"c"}, {attr_int("axis", 0), attr_string("tag", "t")});
  b.node("s4", "Softmax", {"x"}, {"d"}, {attr_int("axis", -1)});  // one attribute fewer
  b.node("sum", "Sum", {"a", "b", "c", "d"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"s1", "s3", "s4", "sum"}));
}

TEST(CommonSubexpressionElimination, FloatAttributesCompareExactly) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("l1", "LeakyRelu", {"x"}, {"a"}, {attr_float("alpha", 0.0)});
  b.node("l2", "LeakyRelu", {"x"}, {"b"}, {attr_float("alpha", -0.0)});
  b.node("l3", "LeakyRelu", {"x"}, {"c"}, {attr_float("alpha", 0.1)});
  b.node("l4", "LeakyRelu", {"x"}, {"d"}, {attr_float("alpha", 0.1)});
  b.node("sum", "Sum", {"a", "b", "c", "d"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"l1", "l2", "l3", "sum"}));
}

TEST(CommonSubexpressionElimination, DifferentInputsOrDomainsStay) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.input("z");
  b.node("a1", "Sub", {"x", "z"}, {"a"});
  b.node("a2", "Sub", {"z", "x"}, {"b"});
  b.node("g1", "Gelu", {"x"}, {"c"}, {}, "ai.infer");
  b.node("g2", "Gelu", {"x"}, {"d"});
  b.node("sum", "Sum", {"a", "b", "c", "d"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(g.node_count(), 5u);
}

TEST(CommonSubexpressionElimination, DuplicatedConstantsMergeAndExposeDuplicateNodes) {
  // Two Adds of x and a scalar 1 held in two initializers: after the constants merge,
  // the Adds are the same node.
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.f32("one_a", {}, {1.0f});
  b.f32("one_b", {}, {1.0f});
  b.f32("two", {}, {2.0f});
  b.node("add1", "Add", {"x", "one_a"}, {"a"});
  b.node("add2", "Add", {"x", "one_b"}, {"b"});
  b.node("add3", "Add", {"x", "two"}, {"c"});
  b.node("sum", "Sum", {"a", "b", "c"}, {"y"});
  b.output("y");
  g.rebuild_links();
  // One constant use redirected, one node merged.
  EXPECT_EQ(run(g), 2);
  EXPECT_EQ(node_names(g), Names({"add1", "add3", "sum"}));
  EXPECT_EQ(node_named(g, "sum").inputs,
            std::vector<ir::ValueId>({id_of(g, "a"), id_of(g, "a"), id_of(g, "c")}));
  EXPECT_EQ(run(g), 0);
}

TEST(CommonSubexpressionElimination, ConstantsOfOtherDtypeOrShapeStayApart) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.f32("f", {1}, {1.0f});
  b.f32("f_scalar", {}, {1.0f});                                     // other dims
  b.constant_of<int32_t>("i", DataType::kInt32, {1}, {1065353216});  // 1.0f's bits as int32
  b.node("add1", "Add", {"x", "f"}, {"a"});
  b.node("add2", "Add", {"x", "f_scalar"}, {"b"});
  b.node("add3", "Add", {"x", "i"}, {"c"});
  b.node("sum", "Sum", {"a", "b", "c"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(g.node_count(), 4u);
}

TEST(CommonSubexpressionElimination, LargeConstantsAreNotCompared) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  const std::vector<float> big(2000, 3.0f);  // 8000 bytes > 4 KiB
  b.f32("w1", {2000}, big);
  b.f32("w2", {2000}, big);
  b.node("m1", "Mul", {"x", "w1"}, {"a"});
  b.node("m2", "Mul", {"x", "w2"}, {"b"});
  b.node("sum", "Add", {"a", "b"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
}

TEST(CommonSubexpressionElimination, LaterGraphOutputNameMovesToTheEarlierNode) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("r1", "Relu", {"x"}, {"a"});
  b.node("use", "Neg", {"a"}, {"z"});
  b.node("r2", "Relu", {"x"}, {"y"});
  b.output("z");
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(node_names(g), Names({"r1", "use"}));
  EXPECT_EQ(g.node(0).outputs[0], id_of(g, "y"));
  EXPECT_EQ(g.node(1).inputs[0], id_of(g, "y"));
}

TEST(CommonSubexpressionElimination, TwoGraphOutputsCannotShareANode) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("r1", "Relu", {"x"}, {"y1"});
  b.node("r2", "Relu", {"x"}, {"y2"});
  b.output("y1");
  b.output("y2");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(g.node_count(), 2u);
}

TEST(CommonSubexpressionElimination, RandomOpsNodesWithoutInputsAndSubgraphsStay) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("rand1", "RandomUniformLike", {"x"}, {"a"});
  b.node("rand2", "RandomUniformLike", {"x"}, {"b"});
  b.node("drop1", "Dropout", {"x"}, {"c"});
  b.node("drop2", "Dropout", {"x"}, {"d"});
  b.node("gen1", "RandomNormal", {}, {"e"}, {attr_ints("shape", {2})});
  b.node("gen2", "RandomNormal", {}, {"f"}, {attr_ints("shape", {2})});
  b.node("k1", "MyConstant", {}, {"k"}, {}, "ai.infer");
  b.node("k2", "MyConstant", {}, {"l"}, {}, "ai.infer");
  const std::vector<ir::Attribute> branches = if_branches_reading("x", "Neg");
  b.typed("cond", DataType::kBool, ir::Shape::of({}));
  b.input("cond");
  b.node("if1", "If", {"cond"}, {"i1"}, branches);
  b.node("if2", "If", {"cond"}, {"i2"}, branches);
  b.node("sum", "Sum", {"a", "b", "c", "d", "e", "f", "k", "l", "i1", "i2"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(g.node_count(), 11u);
}

TEST(CommonSubexpressionElimination, EarlierNodeMissingAnOutputTheLaterUses) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("s1", "Split", {"x"}, {"p", ""}, {attr_int("axis", 0)});
  b.node("s2", "Split", {"x"}, {"q", "r"}, {attr_int("axis", 0)});
  b.node("sum", "Sum", {"p", "q", "r"}, {"y"});
  b.output("y");
  g.rebuild_links();
  EXPECT_EQ(run(g), 0);

  // The other way round the later node's missing output is no obstacle.
  ir::Graph h;
  GraphBuilder c(h);
  c.input("x");
  c.node("s1", "Split", {"x"}, {"p", "o"}, {attr_int("axis", 0)});
  c.node("s2", "Split", {"x"}, {"q", ""}, {attr_int("axis", 0)});
  c.node("sum", "Sum", {"p", "o", "q"}, {"y"});
  c.output("y");
  h.rebuild_links();
  EXPECT_EQ(run(h), 1);
  EXPECT_EQ(node_named(h, "sum").inputs,
            std::vector<ir::ValueId>({id_of(h, "p"), id_of(h, "o"), id_of(h, "p")}));
}

// ---- Registration and the basic pipeline ------------------------------------------

TEST(BasicPasses, RegisteredInOrderAtLevelOneBeforeDeadCodeElimination) {
  const Names expected = {"constant_folding",
                          "shape_folding",
                          "noop_elimination",
                          "reshape_transpose_merging",
                          "common_subexpression_elimination",
                          "dead_code_elimination"};
  for (int level = 1; level <= 3; ++level) {
    Result<Pipeline> p = make_pipeline(level, {});
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    Names names = p->pass_names();
    // From level 2 the QDQ passes run first (before constant folding dequantizes weights).
    if (level >= 2) {
      const Names qdq = {"qdq_conv_fusion", "qdq_gemm_fusion", "qdq_binary_fusion", "qdq_lookup_fusion",
                         "qdq_passthrough", "matmul_integer_to_float_fusion"};
      ASSERT_GE(names.size(), qdq.size());
      EXPECT_EQ(Names(names.begin(), names.begin() + static_cast<long>(qdq.size())), qdq);
      names.erase(names.begin(), names.begin() + static_cast<long>(qdq.size()));
    }
    ASSERT_GE(names.size(), expected.size());
    EXPECT_EQ(Names(names.begin(), names.begin() + static_cast<long>(expected.size())), expected)
        << "level " << level;
  }
  for (const PassEntry& e : pass_registry()) {
    if (std::find(expected.begin(), expected.end(), e.name) != expected.end()) {
      EXPECT_EQ(e.min_level, kLevelBasic) << e.name;
    }
  }
}

TEST(BasicPasses, EachCanBeDisabledByName) {
  for (const char* name : {"constant_folding", "shape_folding", "noop_elimination",
                           "reshape_transpose_merging", "common_subexpression_elimination"}) {
    Result<Pipeline> p = make_pipeline(1, {name});
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    const Names names = p->pass_names();
    EXPECT_EQ(std::find(names.begin(), names.end(), name), names.end()) << name;
    EXPECT_EQ(names.size(), 5u) << name;
  }
}

TEST(BasicPasses, PipelineCleansAnExportedAttentionReshape) {
  // Identity, duplicated Shape chains and a dynamic head-split Reshape: after level 1
  // only the Add and a Reshape with a constant [0,0,4,16] shape remain.
  ir::Graph g;
  GraphBuilder b(g);
  const ir::Shape hidden = shape_of({sym("batch"), sym("seq"), dim(64)});
  b.typed("h", DataType::kFloat32, hidden);
  b.input("h");
  b.typed("h2", DataType::kFloat32, hidden);
  b.typed("q", DataType::kFloat32, hidden);
  b.f32("bias", {64}, std::vector<float>(64, 0.25f));
  b.i64("i0", {}, {0});
  b.i64("i1", {}, {1});
  b.i64("axes_a", {1}, {0});
  b.i64("axes_b", {1}, {0});
  b.i64("heads", {1}, {4});
  b.i64("size", {1}, {16});
  for (const char* n : {"s0", "s1"}) b.typed(n, DataType::kInt64, {3});
  for (const char* n : {"g0", "g1"}) b.typed(n, DataType::kInt64, ir::Shape::of({}));
  b.node("id", "Identity", {"h"}, {"h2"});
  b.node("q_add", "Add", {"h2", "bias"}, {"q"});
  b.node("shape0", "Shape", {"q"}, {"s0"});
  b.node("gather0", "Gather", {"s0", "i0"}, {"g0"});
  b.node("shape1", "Shape", {"q"}, {"s1"});
  b.node("gather1", "Gather", {"s1", "i1"}, {"g1"});
  b.node("unsq0", "Unsqueeze", {"g0", "axes_a"}, {"u0"});
  b.node("unsq1", "Unsqueeze", {"g1", "axes_b"}, {"u1"});
  b.node("concat", "Concat", {"u0", "u1", "heads", "size"}, {"c"}, {attr_int("axis", 0)});
  b.node("split", "Reshape", {"q", "c"}, {"r"});
  b.output("r");
  g.rebuild_links();

  Result<Pipeline> p = make_pipeline(1, {});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_TRUE(p->run(g, context_at(17)).is_ok());
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().message();
  EXPECT_EQ(op_types(g), Names({"Add", "Reshape"}));
  EXPECT_EQ(g.node(0).inputs[0], id_of(g, "h"));
  EXPECT_EQ(int_constant(g, g.node(1).inputs[1]), std::vector<int64_t>({0, 0, 4, 16}));
}

}  // namespace
}  // namespace infer::optimizer
