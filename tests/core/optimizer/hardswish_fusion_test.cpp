#include "optimizer/hardswish_fusion.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g, int64_t opset) { return apply_pass<HardSwishFusion>(g, context_at(opset)); }

// How the chain after x is written.
struct Chain {
  float three = 3.0f;
  float six = 6.0f;
  bool clip_attributes = false;  // Clip-6 form (opset < 11)
  bool scale_first = false;      // Mul(x, Div(c, 6)) instead of Div(Mul(x, c), 6)
  bool sixth_as_mul = false;     // Mul by 1/6 instead of Div by 6
  bool swapped = false;          // constants and x as the first operands
};

// x [1,2,2,2] (from a Conv when `conv`, else a graph input) -> the PaddlePaddle HardSwish
// chain -> y.
void build(ir::Graph& g, const Chain& c, bool conv) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {1, 2, 2, 2});
  b.typed("y", DataType::kFloat32, {1, 2, 2, 2});
  b.f32("three", {1}, {c.three});
  b.f32("zero", {}, {0.0f});
  b.f32("six_bound", {}, {6.0f});
  b.f32("six", {1}, {c.sixth_as_mul ? 1.0f / c.six : c.six});
  if (conv) {
    b.typed("in", DataType::kFloat32, {1, 2, 2, 2});
    b.f32("W", {2, 2, 1, 1}, {1, 0, 0, 1});
    b.input("in");
    b.node("conv", "Conv", {"in", "W"}, {"x"}, {attr_ints("kernel_shape", {1, 1})});
  } else {
    b.input("x");
  }
  auto pair = [&](const std::string& a, const std::string& k) {
    return c.swapped ? std::vector<std::string>{k, a} : std::vector<std::string>{a, k};
  };
  b.node("add", "Add", pair("x", "three"), {"a"});
  if (c.clip_attributes)
    b.node("clip", "Clip", {"a"}, {"g"}, {attr_float("min", 0.0), attr_float("max", 6.0)});
  else
    b.node("clip", "Clip", {"a", "zero", "six_bound"}, {"g"});
  const char* scale_op = c.sixth_as_mul ? "Mul" : "Div";
  if (c.scale_first) {
    b.node("scale", scale_op, {"g", "six"}, {"d"});
    b.node("mul", "Mul", pair("d", "x"), {"y"});
  } else {
    b.node("mul", "Mul", pair("x", "g"), {"m"});
    b.node("scale", scale_op, {"m", "six"}, {"y"});
  }
  b.output("y");
  g.rebuild_links();
}

TEST(HardSwishFusion, BelowOpset14TheChainBecomesTheConvsActivation) {
  ir::Graph g;
  build(g, Chain{}, true);
  ASSERT_EQ(run(g, 11), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedConv"}));
  const ir::Node& n = g.node(0);
  EXPECT_EQ(n.name, "conv");
  EXPECT_EQ(n.domain, "ai.infer");
  EXPECT_EQ(n.attr_string("activation", ""), "HardSwish");
  EXPECT_EQ(n.outputs[0], id_of(g, "y"));
  EXPECT_TRUE(g.validate().is_ok());
}

TEST(HardSwishFusion, EveryGroupingAndOperandOrder) {
  for (int variant = 0; variant < 8; ++variant) {
    Chain c;
    c.scale_first = (variant & 1) != 0;
    c.sixth_as_mul = (variant & 2) != 0;
    c.swapped = (variant & 4) != 0;
    ir::Graph g;
    build(g, c, true);
    EXPECT_EQ(run(g, 12), 1) << "variant " << variant;
    EXPECT_EQ(op_types(g), Ops({"FusedConv"})) << "variant " << variant;
  }
}

TEST(HardSwishFusion, ClipAttributeFormAtOpset9) {
  Chain c;
  c.clip_attributes = true;
  ir::Graph g;
  build(g, c, true);
  ASSERT_EQ(run(g, 9), 1);
  EXPECT_EQ(g.node(0).attr_string("activation", ""), "HardSwish");
}

TEST(HardSwishFusion, FromOpset14AStandaloneHardSwishNode) {
  ir::Graph g;
  build(g, Chain{}, false);  // x is a graph input: no producer to fold into
  ASSERT_EQ(run(g, 14), 1);
  ASSERT_EQ(op_types(g), Ops({"HardSwish"}));
  const ir::Node& n = g.node(0);
  EXPECT_EQ(n.inputs, std::vector<ir::ValueId>({id_of(g, "x")}));
  EXPECT_EQ(n.outputs[0], id_of(g, "y"));
  EXPECT_TRUE(n.domain.empty());
}

TEST(HardSwishFusion, TorchHardSigmoidForm) {
  ir::Graph g;
  GraphBuilder b(g);
  b.typed("in", DataType::kFloat32, {1, 2, 2, 2});
  b.typed("x", DataType::kFloat32, {1, 2, 2, 2});
  b.typed("y", DataType::kFloat32, {1, 2, 2, 2});
  b.f32("W", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.input("in");
  b.node("conv", "Conv", {"in", "W"}, {"x"}, {attr_ints("kernel_shape", {1, 1})});
  b.node("hs", "HardSigmoid", {"x"}, {"h"},
         {attr_float("alpha", 1.0 / 6), attr_float("beta", 0.5)});
  b.node("mul", "Mul", {"h", "x"}, {"y"});
  b.output("y");
  g.rebuild_links();
  ASSERT_EQ(run(g, 13), 1);
  ASSERT_EQ(op_types(g), Ops({"FusedConv"}));
  EXPECT_EQ(g.node(0).attr_string("activation", ""), "HardSwish");
}

TEST(HardSwishFusion, LeavesOtherChainsAlone) {
  {
    Chain c;
    c.three = 2.0f;  // Clip(x + 2, 0, 6): not HardSwish
    ir::Graph g;
    build(g, c, true);
    EXPECT_EQ(run(g, 13), 0);
    EXPECT_EQ(op_types(g), Ops({"Conv", "Add", "Clip", "Mul", "Div"}));
  }
  {
    Chain c;
    c.six = 5.0f;
    ir::Graph g;
    build(g, c, true);
    EXPECT_EQ(run(g, 14), 0);
  }
  {
    ir::Graph g;  // below opset 14 with nothing to fold into: left as it is
    build(g, Chain{}, false);
    EXPECT_EQ(run(g, 13), 0);
  }
  {
    ir::Graph g;  // x read by a third node: the Conv cannot take the activation
    build(g, Chain{}, true);
    GraphBuilder(g).output("x");
    g.rebuild_links();
    EXPECT_EQ(run(g, 13), 0);
  }
  {
    ir::Graph g;  // below kMinFusionOpset
    build(g, Chain{}, true);
    EXPECT_EQ(run(g, 8), 0);
  }
}

}  // namespace
}  // namespace infer::optimizer
