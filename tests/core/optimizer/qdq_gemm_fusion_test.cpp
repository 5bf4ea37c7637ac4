#include "optimizer/qdq_gemm_fusion.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

struct Options {
  bool matmul = false;        // MatMul(x, w) instead of Gemm
  bool trans_b = true;        // Gemm's transB (w stored N x K)
  int64_t w_scales = 3;       // N = 3: per column; 1: per tensor
  int64_t axis = -1;          // DequantizeLinear(w)'s axis; -1: the one N is on
  bool bias = true;           // Gemm's C: DequantizeLinear of an int32 constant
  bool float_bias = false;    // Gemm's C: a float32 constant
  int64_t bias_count = 3;
  double alpha = 1.0;
  int64_t trans_a = 0;
  bool w_constant = true;
  bool x_per_axis = false;    // DequantizeLinear(x) with a scale per column: not per tensor
};

// x_q [2, 4] -> DQ -> x; w_q (N x K or K x N, int8) -> DQ -> w; [c]; Gemm or MatMul -> y.
void build(ir::Graph& g, const Options& o) {
  GraphBuilder b(g);
  b.typed("x_q", DataType::kUInt8, {2, 4});
  b.input("x_q");
  if (o.x_per_axis)
    b.f32("x_scale", {4}, {0.1f, 0.1f, 0.2f, 0.2f});
  else
    b.f32("x_scale", {}, {0.1f});
  b.constant_of<uint8_t>("x_zp", DataType::kUInt8, {}, {128});
  b.typed("x", DataType::kFloat32, {2, 4});
  b.node("dqx", "DequantizeLinear", {"x_q", "x_scale", "x_zp"}, {"x"},
         o.x_per_axis ? std::vector<ir::Attribute>{attr_int("axis", 1)}
                      : std::vector<ir::Attribute>{});
  const bool nk = !o.matmul && o.trans_b;
  const std::vector<int64_t> wdims = nk ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4, 3};
  if (o.w_constant) {
    b.constant_of<int8_t>("w_q", DataType::kInt8, wdims, {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12});
  } else {
    b.typed("w_q", DataType::kInt8, wdims);
    b.input("w_q");
  }
  b.f32("w_scale", {o.w_scales}, std::vector<float>(static_cast<size_t>(o.w_scales), 0.05f));
  b.constant_of<int8_t>("w_zp", DataType::kInt8, {o.w_scales},
                        std::vector<int8_t>(static_cast<size_t>(o.w_scales), 0));
  b.typed("w", DataType::kFloat32, wdims);
  const int64_t axis = o.axis >= 0 ? o.axis : (nk ? 0 : 1);
  b.node("dqw", "DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}, {attr_int("axis", axis)});
  b.typed("y", DataType::kFloat32, {2, 3});
  if (o.matmul) {
    b.node("mm", "MatMul", {"x", "w"}, {"y"});
  } else {
    std::vector<std::string> in = {"x", "w"};
    if (o.float_bias) {
      b.f32("c", {o.bias_count}, std::vector<float>(static_cast<size_t>(o.bias_count), 0.5f));
      in.push_back("c");
    } else if (o.bias) {
      b.constant_of<int32_t>("c_q", DataType::kInt32, {o.bias_count},
                             std::vector<int32_t>(static_cast<size_t>(o.bias_count), 100));
      b.f32("c_scale", {}, {0.005f});
      b.typed("c", DataType::kFloat32, {o.bias_count});
      b.node("dqc", "DequantizeLinear", {"c_q", "c_scale"}, {"c"});
      in.push_back("c");
    }
    b.node("mm", "Gemm", in, {"y"},
           {attr_int("transB", o.trans_b ? 1 : 0), attr_float("alpha", o.alpha),
            attr_int("transA", o.trans_a)});
  }
  b.output("y");
  g.rebuild_links();
}

int run(ir::Graph& g, int64_t opset = 13) { return apply_pass<QdqGemmFusion>(g, context_at(opset)); }

TEST(QdqGemmFusion, GemmWithTransposedWeightsAndQuantizedBias) {
  ir::Graph g;
  build(g, {});
  EXPECT_EQ(run(g), 1);
  const ir::Node* n = find_op(g, "MatMulIntegerToFloat");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain, "ai.infer");
  EXPECT_EQ(n->name, "mm");
  EXPECT_TRUE(n->attributes.empty());
  ASSERT_EQ(n->inputs.size(), 7u);
  const char* names[] = {"x_q", nullptr, "x_scale", "w_scale", "x_zp", "w_zp", "c"};
  for (size_t i = 0; i < 7; ++i)
    if (names[i] != nullptr) {
      EXPECT_EQ(g.value(n->inputs[i]).name, names[i]) << i;
    }
  EXPECT_EQ(n->outputs[0], id_of(g, "y"));
  // w_q [3, 4] (N x K) became a K x N constant: w'[k][n] = w[n][k].
  const ir::TensorData* wt = constant_of(g, n->inputs[1]);
  ASSERT_NE(wt, nullptr);
  EXPECT_EQ(wt->dtype(), DataType::kInt8);
  EXPECT_EQ(wt->dims(), (std::vector<int64_t>{4, 3}));
  const int8_t w[12] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(wt->as<int8_t>()[k * 3 + c], w[c * 4 + k]) << k << "," << c;
}

TEST(QdqGemmFusion, MatMulAndGemmWithoutTransposeKeepTheirWeights) {
  for (Options o : {Options{.matmul = true}, Options{.trans_b = false},
                    Options{.w_scales = 1, .axis = 1, .float_bias = true},
                    Options{.bias = false}}) {
    ir::Graph g;
    build(g, o);
    EXPECT_EQ(run(g), 1) << o.matmul << o.trans_b;
    const ir::Node* n = find_op(g, "MatMulIntegerToFloat");
    ASSERT_NE(n, nullptr);
    const bool nk = !o.matmul && o.trans_b;
    if (!nk) {
      EXPECT_EQ(n->inputs[1], id_of(g, "w_q"));
    }
    const bool with_bias = !o.matmul && (o.bias || o.float_bias);
    EXPECT_EQ(n->inputs.size(), with_bias ? 7u : 6u);
  }
}

TEST(QdqGemmFusion, LeavesWhatItCannotExpress) {
  for (Options o : {Options{.w_scales = 3, .axis = 1},  // scales along K
                    Options{.bias_count = 1},           // a broadcast C
                    Options{.alpha = 2.0}, Options{.trans_a = 1}, Options{.w_constant = false},
                    Options{.x_per_axis = true}}) {
    ir::Graph g;
    build(g, o);
    expect_untouched_by<QdqGemmFusion>(g, context_at(13));
  }
  ir::Graph g;
  build(g, {});
  expect_untouched_by<QdqGemmFusion>(g, context_at(12));
}

}  // namespace
}  // namespace infer::optimizer
