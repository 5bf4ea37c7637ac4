#include "optimizer/matmul_integer_to_float_fusion.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

struct Options {
  bool bias = true;
  bool swap = false;  // Mul(s, f), Mul(b_scale, a_scale) and Add(bias, y)
  bool b_constant = true;
  int64_t b_scale_count = 3;  // N = 3
  int64_t cast_to = 1;        // float32
  bool f_read_twice = false;
};

// x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zp); MatMulInteger(x_q, w_q [2, 3], x_zp,
// w_zp) -> Cast -> Mul(., x_scale * w_scale) [-> Add(., bias)] -> y.
void build(ir::Graph& g, const Options& o) {
  GraphBuilder b(g);
  b.typed("x", DataType::kFloat32, {4, 2});
  b.input("x");
  b.typed("x_q", DataType::kUInt8, {4, 2});
  b.typed("x_scale", DataType::kFloat32, std::vector<int64_t>{});
  b.typed("x_zp", DataType::kUInt8, std::vector<int64_t>{});
  b.node("dql", "DynamicQuantizeLinear", {"x"}, {"x_q", "x_scale", "x_zp"});
  if (o.b_constant) {
    b.constant_of<int8_t>("w_q", DataType::kInt8, {2, 3}, {1, 2, 3, 4, 5, 6});
  } else {
    b.typed("w_q", DataType::kInt8, {2, 3});
    b.input("w_q");
  }
  b.constant_of<int8_t>("w_zp", DataType::kInt8, {3}, {0, 0, 0});
  b.f32("w_scale", {o.b_scale_count},
        std::vector<float>(static_cast<size_t>(o.b_scale_count), 0.5f));
  b.f32("bias", {3}, {1, 2, 3});
  b.typed("acc", DataType::kInt32, {4, 3});
  b.typed("f", DataType::kFloat32, {4, 3});
  b.typed("s", DataType::kFloat32, {o.b_scale_count});
  b.typed("m", DataType::kFloat32, {4, 3});
  b.typed("y", DataType::kFloat32, {4, 3});
  b.node("mmi", "MatMulInteger", {"x_q", "w_q", "x_zp", "w_zp"}, {"acc"});
  b.node("cast", "Cast", {"acc"}, {"f"}, {attr_int("to", o.cast_to)});
  b.node("scale", "Mul",
         o.swap ? std::vector<std::string>{"w_scale", "x_scale"}
                : std::vector<std::string>{"x_scale", "w_scale"},
         {"s"});
  b.node("rescale", "Mul",
         o.swap ? std::vector<std::string>{"s", "f"} : std::vector<std::string>{"f", "s"},
         {o.bias ? "m" : "y"});
  if (o.bias)
    b.node("add_bias", "Add",
           o.swap ? std::vector<std::string>{"bias", "m"} : std::vector<std::string>{"m", "bias"},
           {"y"});
  b.output("y");
  if (o.f_read_twice) b.output("f");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<MatMulIntegerToFloatFusion>(g, context_at(opset));
}

TEST(MatMulIntegerToFloatFusion, TheFloatTailFoldsIntoOneNode) {
  for (bool swap : {false, true}) {
    ir::Graph g;
    build(g, {.swap = swap});
    EXPECT_EQ(run(g), 1) << swap;
    EXPECT_EQ(op_types(g), Ops({"DynamicQuantizeLinear", "MatMulIntegerToFloat"}));
    const ir::Node* n = find_op(g, "MatMulIntegerToFloat");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->domain, "ai.infer");
    EXPECT_EQ(n->name, "mmi");
    const char* names[] = {"x_q", "w_q", "x_scale", "w_scale", "x_zp", "w_zp", "bias"};
    ASSERT_EQ(n->inputs.size(), 7u);
    for (size_t i = 0; i < 7; ++i) EXPECT_EQ(g.value(n->inputs[i]).name, names[i]) << i;
    EXPECT_EQ(n->outputs[0], id_of(g, "y"));
  }
}

TEST(MatMulIntegerToFloatFusion, WithoutBiasTheProductEndsTheChain) {
  ir::Graph g;
  build(g, {.bias = false});
  EXPECT_EQ(run(g), 1);
  const ir::Node* n = find_op(g, "MatMulIntegerToFloat");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 6u);
  EXPECT_EQ(n->outputs[0], id_of(g, "y"));
}

TEST(MatMulIntegerToFloatFusion, LeavesWhatItCannotExpress) {
  for (Options o : {Options{.b_constant = false}, Options{.b_scale_count = 2},
                    Options{.cast_to = static_cast<int64_t>(DataType::kFloat16)},
                    Options{.f_read_twice = true}}) {
    ir::Graph g;
    build(g, o);
    expect_untouched_by<MatMulIntegerToFloatFusion>(g, context_at(13));
  }
  ir::Graph g;
  build(g, {});
  expect_untouched_by<MatMulIntegerToFloatFusion>(g, context_at(12));
}

}  // namespace
}  // namespace infer::optimizer
