#include "optimizer/qdq_conv_fusion.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

struct QdqOptions {
  bool relu = false;
  int32_t y_zero = 0;       // uint8
  bool per_channel = true;  // w scale [2] on axis 0, else one scale
  int64_t w_axis = 0;
  bool bias = true;         // DequantizeLinear(int32 bias)
  bool float_bias = false;  // a float32 bias constant instead
  bool x_scale_constant = true;
  bool typed = true;  // false: intermediate values untyped, as before type inference
  // A Clip instead of the Relu, with these bounds given by Constant nodes (as exporters
  // write ReLU6); NaN: the bound omitted.
  bool clip = false;
  float clip_min = 0.0f, clip_max = 6.0f;
  float y_scale = 0.75f;
};

// x_q [1,2,3,3] uint8 -> DQ -> x; w_q [2,2,1,1] int8 -> DQ -> w; b_q int32 -> DQ -> b;
// Conv(x, w, b) -> c [-> Relu -> r] -> Q -> y_q (uint8).
// x_scale 0.5, w scales {0.25, 0.125} (or 0.25), so bias scales {0.125, 0.0625}.
void build(ir::Graph& g, const QdqOptions& o) {
  GraphBuilder b(g);
  b.typed("x_q", DataType::kUInt8, {1, 2, 3, 3});
  if (o.x_scale_constant) {
    b.f32("x_scale", {}, {0.5f});
  } else {
    b.typed("x_scale", DataType::kFloat32, std::vector<int64_t>{});
    b.input("x_scale");
  }
  b.constant_of<uint8_t>("x_zero", DataType::kUInt8, {}, {128});
  b.constant_of<int8_t>("w_q", DataType::kInt8, {2, 2, 1, 1}, {1, -2, 3, 127});
  if (o.per_channel) {
    b.f32("w_scale", {2}, {0.25f, 0.125f});
    b.constant_of<int8_t>("w_zero", DataType::kInt8, {2}, {0, 0});
  } else {
    b.f32("w_scale", {}, {0.25f});
    b.constant_of<int8_t>("w_zero", DataType::kInt8, {}, {0});
  }
  b.constant_of<int32_t>("b_q", DataType::kInt32, {2}, {40, -8});
  b.f32("b_scale", {2}, {0.125f, o.per_channel ? 0.0625f : 0.125f});
  b.f32("b_float", {2}, {5.0f, -0.5f});
  b.f32("y_scale", {}, {o.y_scale});
  b.constant_of<uint8_t>("y_zero", DataType::kUInt8, {}, {static_cast<uint8_t>(o.y_zero)});
  if (o.typed) {
    b.typed("x", DataType::kFloat32, {1, 2, 3, 3});
    b.typed("w", DataType::kFloat32, {2, 2, 1, 1});
    b.typed("b", DataType::kFloat32, {2});
    b.typed("c", DataType::kFloat32, {1, 2, 3, 3});
    b.typed("r", DataType::kFloat32, {1, 2, 3, 3});
    b.typed("y_q", DataType::kUInt8, {1, 2, 3, 3});
  } else {
    for (const char* v : {"x", "w", "b", "c", "r", "y_q"})
      b.typed(v, DataType::kUndefined, ir::Shape{});
  }
  b.input("x_q");
  b.node("dqx", "DequantizeLinear", {"x_q", "x_scale", "x_zero"}, {"x"});
  b.node("dqw", "DequantizeLinear", {"w_q", "w_scale", "w_zero"}, {"w"},
         {attr_int("axis", o.w_axis)});
  std::string bias;
  if (o.bias && !o.float_bias) {
    b.node("dqb", "DequantizeLinear", {"b_q", "b_scale"}, {"b"}, {attr_int("axis", 0)});
    bias = "b";
  } else if (o.float_bias) {
    bias = "b_float";
  }
  b.node("conv", "Conv", {"x", "w", bias}, {"c"}, {attr_ints("pads", {0, 0, 0, 0})});
  if (o.relu) b.node("relu", "Relu", {"c"}, {"r"});
  if (o.clip) {
    std::vector<std::string> ins = {"c", "", ""};
    int k = 0;
    for (float bound : {o.clip_min, o.clip_max}) {
      ++k;
      if (std::isnan(bound)) continue;
      const std::string name = k == 1 ? "clip_min" : "clip_max";
      b.typed(name, DataType::kFloat32, std::vector<int64_t>{});
      b.node(name + "_node", "Constant", {}, {name}, {[&] {
               ir::Attribute a;
               a.name = "value";
               a.type = ir::AttrType::kTensor;
               a.tensors = {make_float_tensor(DataType::kFloat32, {}, {bound})};
               return a;
             }()});
      ins[static_cast<size_t>(k)] = name;
    }
    while (!ins.empty() && ins.back().empty()) ins.pop_back();
    b.node("clip", "Clip", ins, {"r"});
  }
  b.node("q", "QuantizeLinear", {o.relu || o.clip ? "r" : "c", "y_scale", "y_zero"}, {"y_q"});
  b.output("y_q");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) {
  return apply_pass<QdqConvFusion>(g, context_at(opset));
}

const ir::Node& only(const ir::Graph& g, const char* op) {
  for (ir::NodeId i = 0; i < g.node_count(); ++i)
    if (g.node(i).op_type == op) return g.node(i);
  ADD_FAILURE() << "no " << op;
  return g.node(0);
}

TEST(QdqConvFusion, ConvBetweenDequantizeAndQuantizeBecomesQLinearConv) {
  ir::Graph g;
  build(g, {});
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g),
            Ops({"DequantizeLinear", "DequantizeLinear", "DequantizeLinear", "QLinearConv"}));
  const ir::Node& c = only(g, "QLinearConv");
  EXPECT_EQ(c.name, "conv");
  EXPECT_EQ(c.domain, "");
  ASSERT_EQ(c.inputs.size(), 9u);
  const char* names[] = {"x_q",     "x_scale", "x_zero",  "w_q",
                         "w_scale", "w_zero",  "y_scale", "y_zero"};
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(g.value(c.inputs[i]).name, names[i]) << i;
  EXPECT_EQ(c.outputs[0], id_of(g, "y_q"));
  ASSERT_NE(c.attr("pads"), nullptr);
  // Bias 40 * 0.125 = 5 and -8 * 0.0625 = -0.5, requantized with x_scale * w_scale
  // = 0.125 and 0.0625: the same integers.
  const ir::TensorData* bq = constant_of(g, c.inputs[8]);
  ASSERT_NE(bq, nullptr);
  ASSERT_EQ(bq->dtype(), DataType::kInt32);
  EXPECT_EQ(bq->as<int32_t>()[0], 40);
  EXPECT_EQ(bq->as<int32_t>()[1], -8);
}

TEST(QdqConvFusion, FiresBeforeTypesAreInferred) {
  // The pass runs first in the pipeline: the Conv's output and the QuantizeLinear's have
  // no type yet; the zero points give the 8-bit types.
  ir::Graph g;
  QdqOptions o;
  o.typed = false;
  o.relu = true;
  build(g, o);
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g),
            Ops({"DequantizeLinear", "DequantizeLinear", "DequantizeLinear", "QLinearConv"}));
}

TEST(QdqConvFusion, FloatBiasIsQuantizedWithTheProductScale) {
  ir::Graph g;
  QdqOptions o;
  o.float_bias = true;
  o.per_channel = false;
  build(g, o);
  EXPECT_EQ(run(g), 1);
  const ir::TensorData* bq = constant_of(g, only(g, "QLinearConv").inputs[8]);
  ASSERT_NE(bq, nullptr);
  // 5 / (0.5 * 0.25) = 40; -0.5 / 0.125 = -4.
  EXPECT_EQ(bq->as<int32_t>()[0], 40);
  EXPECT_EQ(bq->as<int32_t>()[1], -4);
}

TEST(QdqConvFusion, NoBiasGivesEightInputs) {
  ir::Graph g;
  QdqOptions o;
  o.bias = false;
  build(g, o);
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(only(g, "QLinearConv").inputs.size(), 8u);
}

TEST(QdqConvFusion, ReluIsAbsorbedWhenTheZeroPointIsTheLowestValue) {
  ir::Graph g;
  QdqOptions o;
  o.relu = true;
  o.y_zero = 0;
  build(g, o);
  EXPECT_EQ(run(g), 1);
  EXPECT_EQ(op_types(g),
            Ops({"DequantizeLinear", "DequantizeLinear", "DequantizeLinear", "QLinearConv"}));
}

TEST(QdqConvFusion, ReluStaysWhenSaturationWouldNotApplyIt) {
  ir::Graph g;
  QdqOptions o;
  o.relu = true;
  o.y_zero = 10;  // values in [-7.5, 0) would quantize above 0: Relu is not implied
  build(g, o);
  expect_untouched_by<QdqConvFusion>(g, context_at(13));
}

TEST(QdqConvFusion, ClipIsAbsorbedWhenBothBoundsSaturate) {
  // ReLU6 with y on [0, 6] (scale 6/255, zero point 0): Q(0) = 0 and Q(6) = 255.
  for (float y_scale : {6.0f / 255, 1.0f / 255}) {  // 1/255: Q(6) saturates too
    ir::Graph g;
    QdqOptions o;
    o.clip = true;
    o.y_scale = y_scale;
    build(g, o);
    EXPECT_EQ(run(g), 1) << y_scale;
    EXPECT_EQ(count_op(g, "Clip"), 0u);
    EXPECT_EQ(count_op(g, "QLinearConv"), 1u);
  }
  {  // no max: Clip(0, +inf) is a Relu
    ir::Graph g;
    QdqOptions o;
    o.clip = true;
    o.clip_max = std::nanf("");
    build(g, o);
    EXPECT_EQ(run(g), 1);
  }
}

TEST(QdqConvFusion, ClipStaysWhenABoundIsInsideTheOutputRange) {
  {  // Clip(0, 1) with y on [0, 6]: values in (1, 6] would quantize above Q(1) = 42
    ir::Graph g;
    QdqOptions o;
    o.clip = true;
    o.clip_max = 1.0f;
    o.y_scale = 6.0f / 255;
    build(g, o);
    expect_untouched_by<QdqConvFusion>(g, context_at(13));
  }
  {  // Clip(-1, 6) with y zero point 100, scale 0.05: Q(-1) = 80, above the lowest value
    ir::Graph g;
    QdqOptions o;
    o.clip = true;
    o.clip_min = -1.0f;
    o.y_zero = 100;
    o.y_scale = 0.05f;
    build(g, o);
    expect_untouched_by<QdqConvFusion>(g, context_at(13));
  }
}

TEST(QdqConvFusion, LeavesWhatItCannotExpress) {
  {  // per-channel weight scales along axis 1 (not the output channels)
    ir::Graph g;
    QdqOptions o;
    o.w_axis = 1;
    build(g, o);
    expect_untouched_by<QdqConvFusion>(g, context_at(13));
  }
  {  // a scale computed at run time
    ir::Graph g;
    QdqOptions o;
    o.x_scale_constant = false;
    build(g, o);
    expect_untouched_by<QdqConvFusion>(g, context_at(13));
  }
  {  // before opset 13
    ir::Graph g;
    build(g, {});
    expect_untouched_by<QdqConvFusion>(g, context_at(12));
  }
}

}  // namespace
}  // namespace infer::optimizer
