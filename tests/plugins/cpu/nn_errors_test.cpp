// The nn kernels of the cpu plugin (matrix products, normalizations, softmax family,
// reductions, ArgMax/TopK/CumSum, Einsum, Det, losses, optimizers): bad input gets an
// error naming the problem (axes out of range, inconsistent shapes, targets out of
// range, k larger than the axis), and hand-computed checks of behaviour the ONNX node
// tests do not cover (ties, opset-dependent axis semantics, training statistics,
// overflow-free LogSumExp, ellipsis and diagonals in Einsum).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuNn : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
  }
  void TearDown() override {
    if (plugin_) {
      EXPECT_EQ(plugin_->host().live_allocations(), 0) << "leaked host memory";
    }
  }

  // Runs one node (named "n") whose non-constant inputs are fed with `feeds`.
  RunResult run(const std::string& op, const std::vector<TensorSpec>& ins,
                const std::vector<TensorSpec>& outs, const std::vector<HostTensor>& feeds,
                const std::vector<AttrSpec>& attrs = {}, int64_t opset = 17,
                const std::string& domain = "") {
    GraphBuilder g;
    g.node(op, ins, outs, attrs, opset, "n", domain);
    std::vector<std::string> in_names, out_names;
    for (const TensorSpec& t : ins)
      if (!t.name.empty() && !t.is_const) in_names.push_back(t.name);
    for (const TensorSpec& t : outs)
      if (!t.name.empty()) out_names.push_back(t.name);
    return run_graph(*plugin_, g.graph(in_names, out_names), feeds);
  }

  // The capability reason for one node ("" when supported).
  std::string reason(const std::string& op, const std::vector<TensorSpec>& ins,
                     const std::vector<TensorSpec>& outs, const std::vector<AttrSpec>& attrs = {},
                     int64_t opset = 17) {
    GraphBuilder g;
    g.node(op, ins, outs, attrs, opset);
    infer_capability cap{};
    cap.struct_size = sizeof cap;
    StatusInfo st =
        take_status(plugin_->api()->query_capability(plugin_->device(), g.last_node(), &cap));
    EXPECT_TRUE(st.ok()) << st.message;
    if (cap.support != INFER_SUPPORT_NO) return "";
    return cap.reason[0] ? std::string(cap.reason) : "(no reason)";
  }

  std::unique_ptr<PluginHandle> plugin_;
};

TensorSpec f32(const char* name, std::vector<int64_t> dims) {
  return TensorSpec::f32(name, std::move(dims));
}
TensorSpec i64(const char* name, std::vector<int64_t> dims) {
  return TensorSpec::i64(name, std::move(dims));
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST_F(CpuNn, ReduceAxesOutOfRange) {
  // ReduceSum 13 takes axes as an input; the others take the attribute until 18.
  RunResult r = run("ReduceSum", {f32("x", {2, 2}), i64("axes", {1})}, {f32("y", {-1})},
                    {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({1}, {2})}, {}, 13);
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message, "node 'n' (ReduceSum): axes value 2 is out of range for rank 2");
  r = run("ReduceL2", {f32("x", {2, 2})}, {f32("y", {-1})}, {HostTensor::f32({2, 2}, {1, 2, 3, 4})},
          {AttrSpec::Ints("axes", {-3})}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (ReduceL2): axes value -3 is out of range for rank 2");
}

TEST_F(CpuNn, ReductionsByHand) {
  // LogSumExp must not overflow: log(e^1000 + e^1000) = 1000 + log 2.
  RunResult r = run("ReduceLogSumExp", {f32("x", {2})}, {f32("y", {1})},
                    {HostTensor::f32({2}, {1000, 1000})}, {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {1000.0f + std::log(2.0f)}, 1e-3f);
  // Integer L1 and SumSquare, keepdims=0 over axis 1: |-3| + 4 = 7, 9 + 16 = 25.
  r = run("ReduceL1", {TensorSpec::of("x", INFER_DTYPE_INT32, {1, 2})},
          {TensorSpec::of("y", INFER_DTYPE_INT32, {1})}, {HostTensor::i32({1, 2}, {-3, 4})},
          {AttrSpec::Ints("axes", {1}), AttrSpec::Int("keepdims", 0)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{7}));
  r = run("ReduceSumSquare", {TensorSpec::of("x", INFER_DTYPE_INT32, {1, 2})},
          {TensorSpec::of("y", INFER_DTYPE_INT32, {1, 1})}, {HostTensor::i32({1, 2}, {-3, 4})}, {},
          13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{25}));
}

TEST_F(CpuNn, MatrixProductShapeErrors) {
  RunResult r = run("Gemm", {f32("a", {2, 3}), f32("b", {4, 2})}, {f32("y", {-1, -1})},
                    {HostTensor::f32({2, 3}, std::vector<float>(6)),
                     HostTensor::f32({4, 2}, std::vector<float>(8))},
                    {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (Gemm): inner dims differ: A [2,3] and B [4,2] give K = 3 and 4");
  r = run("MatMul", {f32("a", {2, 3}), f32("b", {2, 3})}, {f32("y", {-1, -1})},
          {HostTensor::f32({2, 3}, std::vector<float>(6)),
           HostTensor::f32({2, 3}, std::vector<float>(6))},
          {}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (MatMul): inner dims differ: A [2,3] and B [2,3]");
}

TEST_F(CpuNn, IntegerMatMulAndGemm) {
  RunResult r = run(
      "MatMul",
      {TensorSpec::of("a", INFER_DTYPE_INT64, {2, 2}), TensorSpec::of("b", INFER_DTYPE_INT64, {2})},
      {TensorSpec::of("y", INFER_DTYPE_INT64, {2})},
      {HostTensor::i64({2, 2}, {1, 2, 3, 4}), HostTensor::i64({2}, {10, -1})}, {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{8, 26}));
  // Gemm with transA and a broadcast C: A^T = [[1, 3], [2, 4]], B = I, C = [100, 200].
  r = run(
      "Gemm",
      {TensorSpec::of("a", INFER_DTYPE_INT32, {2, 2}),
       TensorSpec::of("b", INFER_DTYPE_INT32, {2, 2}), TensorSpec::of("c", INFER_DTYPE_INT32, {2})},
      {TensorSpec::of("y", INFER_DTYPE_INT32, {2, 2})},
      {HostTensor::i32({2, 2}, {1, 2, 3, 4}), HostTensor::i32({2, 2}, {1, 0, 0, 1}),
       HostTensor::i32({2}, {100, 200})},
      {AttrSpec::Int("transA", 1)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{101, 203, 102, 204}));
}

TEST_F(CpuNn, NllLossTargetChecks) {
  const HostTensor scores = HostTensor::f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  RunResult r = run("NegativeLogLikelihoodLoss", {f32("x", {2, 3}), i64("t", {2})}, {f32("l", {})},
                    {scores, HostTensor::i64({2}, {1, 3})}, {}, 13);
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (NegativeLogLikelihoodLoss): target value 3 at flat index 1 is out of range "
            "[0, 3)");
  r = run("NegativeLogLikelihoodLoss", {f32("x", {2, 3}), i64("t", {3})}, {f32("l", {})},
          {scores, HostTensor::i64({3}, {0, 1, 2})}, {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (NegativeLogLikelihoodLoss): target has shape [3], expected [2] for scores "
            "[2,3]");
  // An ignored target may lie outside [0, C) and leaves the mean's denominator: -(-2) / 1.
  r = run("NegativeLogLikelihoodLoss", {f32("x", {2, 3}), i64("t", {2})}, {f32("l", {})},
          {scores, HostTensor::i64({2}, {1, -7})}, {AttrSpec::Int("ignore_index", -7)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {2.0f});
  // Weighted sum: -(w[0] * -1) - (w[2] * -6) with w = [2, 1, 0.5] gives 2 + 3.
  r = run("NegativeLogLikelihoodLoss", {f32("x", {2, 3}), i64("t", {2}), f32("w", {3})},
          {f32("l", {})},
          {scores, HostTensor::i64({2}, {0, 2}), HostTensor::f32({3}, {2, 1, 0.5f})},
          {AttrSpec::String("reduction", "sum")}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {5.0f});
  EXPECT_EQ(reason("SoftmaxCrossEntropyLoss", {f32("x", {2, 3}), i64("t", {2})}, {f32("l", {})},
                   {AttrSpec::String("reduction", "avg")}, 13),
            "cpu: SoftmaxCrossEntropyLoss reduction 'avg' is not one of none, sum, mean");
}

TEST_F(CpuNn, TopKChecksAndTies) {
  RunResult r =
      run("TopK", {f32("x", {2, 4}), i64("k", {1})}, {f32("v", {-1, -1}), i64("i", {-1, -1})},
          {HostTensor::f32({2, 4}, std::vector<float>(8)), HostTensor::i64({1}, {5})}, {}, 11);
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message, "node 'n' (TopK): k = 5 is larger than axis 1 of size 4 in [2,4]");
  // Equal values come out lower index first, for the largest and the smallest.
  const HostTensor x = HostTensor::f32({1, 5}, {3, 1, 3, 2, 3});
  r = run("TopK", {f32("x", {1, 5}), i64("k", {1})}, {f32("v", {1, 3}), i64("i", {1, 3})},
          {x, HostTensor::i64({1}, {3})}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(r.outputs[1].as<int64_t>(), (std::vector<int64_t>{0, 2, 4}));
  r = run("TopK", {f32("x", {1, 5}), i64("k", {1})}, {f32("v", {1, 3}), i64("i", {1, 3})},
          {x, HostTensor::i64({1}, {3})}, {AttrSpec::Int("largest", 0)}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(r.outputs[1].as<int64_t>(), (std::vector<int64_t>{1, 3, 0}));
}

TEST_F(CpuNn, ArgMaxCumSumDet) {
  RunResult r = run("ArgMax", {f32("x", {4})}, {i64("y", {})}, {HostTensor::f32({4}, {1, 3, 3, 2})},
                    {AttrSpec::Int("keepdims", 0), AttrSpec::Int("select_last_index", 1)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{}));
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{2}));
  r = run("ArgMin", {f32("x", {4})}, {i64("y", {1})}, {HostTensor::f32({4}, {2, 1, 1, 2})}, {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1}));
  // Reverse exclusive running sums of [1, 2, 3]: [2 + 3, 3, 0].
  r = run("CumSum",
          {TensorSpec::of("x", INFER_DTYPE_INT32, {3}), TensorSpec::of("a", INFER_DTYPE_INT32, {})},
          {TensorSpec::of("y", INFER_DTYPE_INT32, {3})},
          {HostTensor::i32({3}, {1, 2, 3}), HostTensor::i32({}, {0})},
          {AttrSpec::Int("exclusive", 1), AttrSpec::Int("reverse", 1)}, 14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{5, 3, 0}));
  // det [[2, 0, 1], [1, 3, 2], [1, 1, 2]] = 2 * (6 - 2) + 1 * (1 - 3) = 6 (needs a pivot).
  r = run("Det", {f32("x", {2, 3, 3})}, {f32("y", {2})},
          {HostTensor::f32({2, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2, 0, 1, 0, 1, 0, 0, 0, 0, 1})}, {},
          11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {6.0f, -1.0f});
  r = run("Det", {f32("x", {2, 3})}, {f32("y", {})},
          {HostTensor::f32({2, 3}, std::vector<float>(6))}, {}, 11);
  EXPECT_EQ(r.status.message,
            "node 'n' (Det): input must be [*, M, M] (square matrices), got [2,3]");
}

TEST_F(CpuNn, EinsumByHandAndErrors) {
  // Implicit output of "ii" is the trace.
  RunResult r =
      run("Einsum", {f32("x", {2, 2})}, {f32("y", {})}, {HostTensor::f32({2, 2}, {1, 2, 3, 4})},
          {AttrSpec::String("equation", "ii")}, 12);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {5.0f});
  // Ellipsis dims broadcast ([1] against [3]): y[e, j, i] = a[0, i, j] * b[e, j].
  r = run(
      "Einsum", {f32("a", {1, 2, 2}), f32("b", {3, 2})}, {f32("y", {-1, -1, -1})},
      {HostTensor::f32({1, 2, 2}, {1, 2, 3, 4}), HostTensor::f32({3, 2}, {1, 1, 10, 10, 100, 100})},
      {AttrSpec::String("equation", "...ij,...j->...ji")}, 12);
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs[0].dims, (std::vector<int64_t>{3, 2, 2}));
  expect_near(r.outputs[0].as<float>(), {1, 3, 2, 4, 10, 30, 20, 40, 100, 300, 200, 400});
  r = run("Einsum", {f32("a", {2, 3}), f32("b", {4, 2})}, {f32("y", {-1, -1})},
          {HostTensor::f32({2, 3}, std::vector<float>(6)),
           HostTensor::f32({4, 2}, std::vector<float>(8))},
          {AttrSpec::String("equation", "ij,jk->ik")}, 12);
  EXPECT_EQ(r.status.message,
            "node 'n' (Einsum): dim 0 of input 1 [4,2] has size 4 but its label has size 3 "
            "elsewhere");
  EXPECT_EQ(
      reason("Einsum", {f32("x", {2})}, {f32("y", {})}, {AttrSpec::String("equation", "i#")}, 12),
      "cpu: Einsum: unexpected character '#' in equation 'i#'");
}

TEST_F(CpuNn, SoftmaxFamilyOpsetSemantics) {
  // Before 13, Hardmax flattens to 2-D at axis 1: [2, 4] rows, the first maximum wins.
  const HostTensor x = HostTensor::f32({2, 2, 2}, {1, 5, 3, 5, 0, 0, 0, 0});
  RunResult r = run("Hardmax", {f32("x", {2, 2, 2})}, {f32("y", {2, 2, 2})}, {x},
                    {AttrSpec::Int("axis", 1)}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0}));
  // From 13 it works along dim 1 alone.
  r = run("Hardmax", {f32("x", {2, 2, 2})}, {f32("y", {2, 2, 2})}, {x}, {AttrSpec::Int("axis", 1)},
          13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 1, 1, 0, 1, 1, 0, 0}));
  // Softmax before 13 normalizes over the flattened block: four equal values -> 1/4 each.
  r = run("Softmax", {f32("x", {1, 2, 2})}, {f32("y", {1, 2, 2})},
          {HostTensor::f32({1, 2, 2}, {7, 7, 7, 7})}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {0.25f, 0.25f, 0.25f, 0.25f});
}

TEST_F(CpuNn, NormalizationChecksAndTraining) {
  RunResult r =
      run("LayerNormalization", {f32("x", {2, 3}), f32("s", {2})}, {f32("y", {2, 3})},
          {HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::f32({2}, {1, 1})}, {}, 17);
  EXPECT_EQ(r.status.message,
            "node 'n' (LayerNormalization): Scale of shape [2] does not broadcast to [3]");
  // BatchNormalization training mode: X [N=2, C=1, 2] = 1..4 has mean 2.5 and variance
  // 1.25; running stats with momentum 0.9 from mean 0, var 1: 0.25 and 1.025.
  r = run("BatchNormalization",
          {f32("x", {2, 1, 2}), f32("s", {1}), f32("b", {1}), f32("m", {1}), f32("v", {1})},
          {f32("y", {2, 1, 2}), f32("rm", {1}), f32("rv", {1})},
          {HostTensor::f32({2, 1, 2}, {1, 2, 3, 4}), HostTensor::f32({1}, {2}),
           HostTensor::f32({1}, {1}), HostTensor::f32({1}, {0}), HostTensor::f32({1}, {1})},
          {AttrSpec::Int("training_mode", 1), AttrSpec::Float("epsilon", 0)}, 15);
  ASSERT_TRUE(r.ok()) << r.status.message;
  const float inv = 1.0f / std::sqrt(1.25f);
  expect_near(r.outputs[0].as<float>(), {1 - 3 * inv, 1 - inv, 1 + inv, 1 + 3 * inv});
  expect_near(r.outputs[1].as<float>(), {0.25f});
  expect_near(r.outputs[2].as<float>(), {1.025f});
}

TEST_F(CpuNn, OptimizerShapesAndNesterov) {
  const std::string domain = "ai.onnx.preview.training";
  const std::vector<AttrSpec> attrs = {AttrSpec::Float("alpha", 0.5), AttrSpec::Float("beta", 0.25),
                                       AttrSpec::Float("norm_coefficient", 0),
                                       AttrSpec::String("mode", "nesterov")};
  RunResult r =
      run("Momentum", {f32("r", {}), i64("t", {}), f32("x", {2}), f32("g", {3}), f32("v", {2})},
          {f32("xn", {2}), f32("vn", {2})},
          {HostTensor::f32({}, {0.1f}), HostTensor::i64({}, {1}), HostTensor::f32({2}, {1, 2}),
           HostTensor::f32({3}, {1, 1, 1}), HostTensor::f32({2}, {0, 0})},
          attrs, 1, domain);
  EXPECT_EQ(r.status.message,
            "node 'n' (Momentum): input 3 is float32[3], expected float32[2] like input 2");
  // T > 0: V' = 0.5 * V + 0.25 * G; X' = X - R * (G + 0.5 * V').
  // x = 1, g = 2, v = 4: V' = 2.5, X' = 1 - 0.1 * (2 + 1.25) = 0.675.
  r = run("Momentum", {f32("r", {}), i64("t", {}), f32("x", {1}), f32("g", {1}), f32("v", {1})},
          {f32("xn", {1}), f32("vn", {1})},
          {HostTensor::f32({}, {0.1f}), HostTensor::i64({}, {1}), HostTensor::f32({1}, {1}),
           HostTensor::f32({1}, {2}), HostTensor::f32({1}, {4})},
          attrs, 1, domain);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {0.675f});
  expect_near(r.outputs[1].as<float>(), {2.5f});
}

}  // namespace
}  // namespace infer::test
