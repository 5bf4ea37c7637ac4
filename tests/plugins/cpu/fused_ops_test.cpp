// The fused operators of the ai.infer domain (sdk/FUSED_OPS.md) in the cpu plugin (the
// generated cases of data/fused_cases.txt run in op_cases_test.cpp with the others):
//   - hand-computed checks of the threaded paths (products larger than one tile, many
//     attention heads);
//   - bad attributes and shapes get an error naming the node and the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

// ---------------------------------------------------------------------------------------
// Hand-computed checks and errors.

class CpuFused : public ::testing::Test {
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

  // Runs one ai.infer node (named "n") whose non-constant inputs are fed with `feeds`.
  RunResult run(const std::string& op, const std::vector<TensorSpec>& ins,
                const std::vector<TensorSpec>& outs, const std::vector<HostTensor>& feeds,
                const std::vector<AttrSpec>& attrs = {}) {
    GraphBuilder g;
    g.node(op, ins, outs, attrs, 1, "n", "ai.infer");
    std::vector<std::string> in_names, out_names;
    for (const TensorSpec& t : ins)
      if (!t.name.empty() && !t.is_const) in_names.push_back(t.name);
    for (const TensorSpec& t : outs)
      if (!t.name.empty()) out_names.push_back(t.name);
    return run_graph(*plugin_, g.graph(in_names, out_names), feeds);
  }

  // The capability reason for one ai.infer node named "n" ("" when supported).
  std::string reason(const std::string& op, const std::vector<TensorSpec>& ins,
                     const std::vector<TensorSpec>& outs, const std::vector<AttrSpec>& attrs = {}) {
    GraphBuilder g;
    g.node(op, ins, outs, attrs, 1, "n", "ai.infer");
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
HostTensor filled(std::vector<int64_t> dims, float v) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return HostTensor::f32(std::move(dims), std::vector<float>(static_cast<size_t>(n), v));
}

TEST_F(CpuFused, LargeGemmThreadedWithEpilogue) {
  // A [70, 40] of 0.5 times B [40, 300] of 0.5 gives 10 everywhere (more than one tile in
  // M and N, and over a MFLOP, so sgemm threads); C[j] = j / 100 - 11 then Relu gives
  // max(0, j / 100 - 1): 0 up to column 100, then (j - 100) / 100.
  std::vector<float> c(300);
  for (size_t j = 0; j < c.size(); ++j) c[j] = static_cast<float>(j) / 100.0f - 11.0f;
  RunResult r = run("FusedGemm", {f32("a", {70, 40}), f32("b", {40, 300}), f32("c", {300})},
                    {f32("y", {70, 300})},
                    {filled({70, 40}, 0.5f), filled({40, 300}, 0.5f), HostTensor::f32({300}, c)},
                    {AttrSpec::String("activation", "Relu")});
  ASSERT_TRUE(r.ok()) << r.status.message;
  const std::vector<float> y = r.outputs[0].as<float>();
  ASSERT_EQ(y.size(), 70u * 300u);
  for (size_t i = 0; i < 70; ++i)
    for (size_t j = 0; j < 300; ++j)
      ASSERT_NEAR(y[i * 300 + j], std::max(0.0f, static_cast<float>(j) / 100.0f - 1.0f), 1e-4f)
          << i << "," << j;
}

TEST_F(CpuFused, AttentionUniformScoresAverageV) {
  // Q = 0 makes every score equal, so each head's output row is the mean of its V rows;
  // V[b, s, c] = s + 10·c gives mean (Sk - 1) / 2 + 10·c. 3 batches x 8 heads run as
  // parallel tasks; a -inf mask entry on the last key drops it from the mean.
  const int64_t B = 3, H = 8, Sq = 4, Sk = 5, D = 2;
  std::vector<float> v(static_cast<size_t>(B * Sk * H * D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < Sk; ++s)
      for (int64_t c = 0; c < H * D; ++c)
        v[static_cast<size_t>((b * Sk + s) * H * D + c)] = static_cast<float>(s + 10 * c);
  std::vector<float> mask(static_cast<size_t>(Sk), 0.0f);
  mask.back() = -std::numeric_limits<float>::infinity();
  RunResult r = run("Attention",
                    {f32("q", {B, Sq, H * D}), f32("k", {B, Sk, H * D}), f32("v", {B, Sk, H * D}),
                     f32("m", {Sk})},
                    {f32("y", {B, Sq, H * D})},
                    {filled({B, Sq, H * D}, 0.0f), filled({B, Sk, H * D}, 1.0f),
                     HostTensor::f32({B, Sk, H * D}, v), HostTensor::f32({Sk}, mask)},
                    {AttrSpec::Int("num_heads", H), AttrSpec::Float("scale", 0.5)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  const std::vector<float> y = r.outputs[0].as<float>();
  ASSERT_EQ(y.size(), static_cast<size_t>(B * Sq * H * D));
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t c = static_cast<int64_t>(i) % (H * D);
    // Mean of keys 0..3 (key 4 masked out): 1.5.
    ASSERT_NEAR(y[i], 1.5f + 10.0f * static_cast<float>(c), 1e-3f) << "element " << i;
  }
}

TEST_F(CpuFused, UnknownActivationIsRefused) {
  const std::vector<TensorSpec> ins = {f32("a", {2, 2}), f32("b", {2, 2})};
  const std::vector<TensorSpec> outs = {f32("y", {2, 2})};
  const std::string expected =
      "cpu: FusedGemm node 'n': attribute 'activation' is 'Swish', expected one of \"\" (none), "
      "Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid, HardSwish, Gelu, GeluTanh";
  EXPECT_EQ(reason("FusedGemm", ins, outs, {AttrSpec::String("activation", "Swish")}), expected);
  // Compiling the node fails with the same reason, behind the executable's node prefix.
  RunResult r = run("FusedGemm", ins, outs, {filled({2, 2}, 1), filled({2, 2}, 1)},
                    {AttrSpec::String("activation", "Swish")});
  EXPECT_EQ(r.status.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(r.status.message, "node 'n' (FusedGemm): " + expected);
  EXPECT_EQ(reason("FusedMatMul", ins, outs, {AttrSpec::Int("activation", 1)}),
            "cpu: FusedMatMul node 'n': attribute 'activation' must be a string");
}

TEST_F(CpuFused, WrongActivationParamCountIsRefused) {
  EXPECT_EQ(reason("FusedMatMul", {f32("a", {2, 2}), f32("b", {2, 2})}, {f32("y", {2, 2})},
                   {AttrSpec::String("activation", "LeakyRelu"),
                    AttrSpec::Floats("activation_params", {0.1, 0.2})}),
            "cpu: FusedMatMul node 'n': attribute 'activation_params' has 2 values, activation "
            "'LeakyRelu' takes 1 ([alpha])");
  EXPECT_EQ(
      reason("FusedConv", {f32("x", {1, 1, 3, 3}), f32("w", {1, 1, 2, 2})},
             {f32("y", {1, 1, 2, 2})},
             {AttrSpec::String("activation", "Clip"), AttrSpec::Floats("activation_params", {0})}),
      "cpu: FusedConv node 'n': attribute 'activation_params' has 1 value, activation 'Clip' "
      "takes 2 ([min, max])");
  EXPECT_EQ(reason("FusedGemm", {f32("a", {2, 2}), f32("b", {2, 2})}, {f32("y", {2, 2})},
                   {AttrSpec::String("activation", "Relu"),
                    AttrSpec::Floats("activation_params", {1.0})}),
            "cpu: FusedGemm node 'n': attribute 'activation_params' has 1 value, activation "
            "'Relu' takes 0 ([])");
  EXPECT_EQ(reason("FusedGemm", {f32("a", {2, 2}), f32("b", {2, 2})}, {f32("y", {2, 2})},
                   {AttrSpec::String("activation", "HardSigmoid")}),
            "cpu: FusedGemm node 'n': attribute 'activation_params' has 0 values, activation "
            "'HardSigmoid' takes 2 ([alpha, beta])");
}

TEST_F(CpuFused, ConvResidualOfWrongShape) {
  // The conv output is [1, 1, 2, 2]; Z [1, 1, 3, 3] is refused when the run finds out.
  RunResult r = run("FusedConv",
                    {f32("x", {1, 1, 3, 3}), f32("w", {1, 1, 2, 2}), TensorSpec::omitted(),
                     f32("z", {1, 1, 3, 3})},
                    {f32("y", {-1, -1, -1, -1})},
                    {filled({1, 1, 3, 3}, 1), filled({1, 1, 2, 2}, 1), filled({1, 1, 3, 3}, 1)});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (FusedConv): residual Z has shape [1,1,3,3], expected the convolution's "
            "output shape [1,1,2,2]");
  // With the right Z: 4 ones summed + 1 = 5 everywhere.
  r = run("FusedConv",
          {f32("x", {1, 1, 3, 3}), f32("w", {1, 1, 2, 2}), TensorSpec::omitted(),
           f32("z", {1, 1, 2, 2})},
          {f32("y", {1, 1, 2, 2})},
          {filled({1, 1, 3, 3}, 1), filled({1, 1, 2, 2}, 1), filled({1, 1, 2, 2}, 1)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{5, 5, 5, 5}));
}

TEST_F(CpuFused, AttentionMaskOfWrongShape) {
  const HostTensor q = filled({2, 3, 4}, 0.1f), k = filled({2, 5, 4}, 0.2f);
  RunResult r =
      run("Attention",
          {f32("q", {2, 3, 4}), f32("k", {2, 5, 4}), f32("v", {2, 5, 4}), f32("m", {2, 1, 3, 4})},
          {f32("y", {2, 3, 4})}, {q, k, k, filled({2, 1, 3, 4}, 0)},
          {AttrSpec::Int("num_heads", 2), AttrSpec::Float("scale", 0.5)});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (Attention): mask has shape [2,1,3,4], which does not broadcast to the "
            "scores [B,H,Sq,Sk] = [2,2,3,5]: mask dim 3 is 4, expected 1 or 5");
  r = run("Attention",
          {f32("q", {2, 3, 4}), f32("k", {2, 5, 4}), f32("v", {2, 5, 4}), f32("m", {3, 1, 1, 5})},
          {f32("y", {2, 3, 4})}, {q, k, k, filled({3, 1, 1, 5}, 0)},
          {AttrSpec::Int("num_heads", 2), AttrSpec::Float("scale", 0.5)});
  EXPECT_EQ(r.status.message,
            "node 'n' (Attention): mask has shape [3,1,1,5], which does not broadcast to the "
            "scores [B,H,Sq,Sk] = [2,2,3,5]: mask dim 0 is 3, expected 1 or 2");
  EXPECT_EQ(
      reason("Attention",
             {f32("q", {2, 3, 4}), f32("k", {2, 5, 4}), f32("v", {2, 5, 4}),
              f32("m", {1, 2, 1, 3, 5})},
             {f32("y", {2, 3, 4})}, {AttrSpec::Int("num_heads", 2), AttrSpec::Float("scale", 0.5)}),
      "cpu: Attention node 'n': mask must have rank 4 or less, got 5");
}

TEST_F(CpuFused, AttentionHeadsMustDivide) {
  // Static shapes: refused by the capability check.
  EXPECT_EQ(
      reason("Attention", {f32("q", {1, 2, 6}), f32("k", {1, 2, 6}), f32("v", {1, 2, 6})},
             {f32("y", {1, 2, 6})}, {AttrSpec::Int("num_heads", 4), AttrSpec::Float("scale", 1)}),
      "cpu: Attention node 'n': num_heads 4 does not divide the last dim 6 of Q");
  // Dynamic shapes: refused when the run sees them.
  RunResult r = run("Attention", {f32("q", {1, 2, -1}), f32("k", {1, 2, -1}), f32("v", {1, 2, -1})},
                    {f32("y", {-1, -1, -1})},
                    {filled({1, 2, 6}, 0), filled({1, 2, 6}, 0), filled({1, 2, 6}, 0)},
                    {AttrSpec::Int("num_heads", 4), AttrSpec::Float("scale", 1)});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (Attention): num_heads 4 does not divide the last dim of Q [1,2,6]");
  EXPECT_EQ(
      reason("Attention", {f32("q", {1, 2, 6}), f32("k", {1, 2, 6}), f32("v", {1, 2, 6})},
             {f32("y", {1, 2, 6})}, {AttrSpec::Int("num_heads", 0), AttrSpec::Float("scale", 1)}),
      "cpu: Attention node 'n': attribute 'num_heads' is 0, expected 1 or more");
  EXPECT_EQ(reason("Attention", {f32("q", {1, 2, 6}), f32("k", {1, 2, 6}), f32("v", {1, 2, 6})},
                   {f32("y", {1, 2, 6})}, {AttrSpec::Int("num_heads", 2)}),
            "cpu: Attention node 'n': attribute 'scale' (float) is required");
}

TEST_F(CpuFused, GeluApproximateMustBeKnown) {
  EXPECT_EQ(
      reason("Gelu", {f32("x", {2})}, {f32("y", {2})}, {AttrSpec::String("approximate", "fast")}),
      "cpu: Gelu node 'n': attribute 'approximate' is 'fast', expected 'none' or 'tanh'");
  EXPECT_EQ(
      reason("Gelu", {f32("x", {2})}, {f32("y", {2})}, {AttrSpec::String("approximate", "tanh")}),
      "");
}

TEST_F(CpuFused, MatMulBiasMustMatchLastDim) {
  RunResult r = run("FusedMatMul", {f32("a", {2, 3}), f32("b", {3, 4}), f32("bias", {3})},
                    {f32("y", {2, 4})}, {filled({2, 3}, 1), filled({3, 4}, 1), filled({3}, 1)});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (FusedMatMul): bias has shape [3], expected [4] (the last dim of the "
            "product [2,4])");
}

// QLinearAdd's 8 inputs: a and b fed, their per-tensor parameters constants.
std::vector<TensorSpec> qadd_inputs(infer_dtype b_dtype, float c_scale) {
  const auto u8 = [](const char* n, std::vector<uint8_t> v) {
    return TensorSpec::constant(n, INFER_DTYPE_UINT8, {}, v);
  };
  const auto scale = [](const char* n, float v) {
    return TensorSpec::constant(n, INFER_DTYPE_FLOAT32, {}, std::vector<float>{v});
  };
  return {TensorSpec::of("a", INFER_DTYPE_UINT8, {4}),
          scale("as", 0.5f),
          u8("az", {1}),
          TensorSpec::of("b", b_dtype, {4}),
          scale("bs", 0.25f),
          u8("bz", {2}),
          scale("cs", c_scale),
          u8("cz", {3})};
}

TEST_F(CpuFused, QLinearAddChecksItsOperandsAndScales) {
  const HostTensor a = HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {4}, {1, 2, 3, 4});
  // A zero output scale: the op divides by it.
  RunResult r = run("QLinearAdd", qadd_inputs(INFER_DTYPE_UINT8, 0.0f),
                    {TensorSpec::of("c", INFER_DTYPE_UINT8, {4})}, {a, a});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (QLinearAdd): C_scale is 0: a scale must be positive and finite (the op "
            "divides by it)");
  // b of another 8-bit type than a.
  const HostTensor b = HostTensor::make<int8_t>(INFER_DTYPE_INT8, {4}, {1, 2, 3, 4});
  r = run("QLinearAdd", qadd_inputs(INFER_DTYPE_INT8, 1.0f),
          {TensorSpec::of("c", INFER_DTYPE_UINT8, {4})}, {a, b});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (QLinearAdd): A is uint8 but B is int8: they must be the same type");
  // Float operands are not this op's.
  std::vector<TensorSpec> ins = qadd_inputs(INFER_DTYPE_UINT8, 1.0f);
  ins[0] = f32("a", {4});
  EXPECT_EQ(reason("QLinearAdd", ins, {TensorSpec::of("c", INFER_DTYPE_UINT8, {4})}),
            "cpu: QLinearAdd does not support dtype float32 (input 0 'a')");
}

TEST_F(CpuFused, QLinearLookupNeedsA256EntryTable) {
  const HostTensor x = HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {3}, {0, 1, 255});
  RunResult r =
      run("QLinearLookup",
          {TensorSpec::of("x", INFER_DTYPE_UINT8, {3}),
           TensorSpec::constant("table", INFER_DTYPE_UINT8, {255}, std::vector<uint8_t>(255, 7))},
          {TensorSpec::of("y", INFER_DTYPE_UINT8, {3})}, {x});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (QLinearLookup): table must hold 256 uint8 or int8 values, got uint8 [255]");
}

TEST_F(CpuFused, DtypesOutsideTheTableFallBack) {
  // FusedConv runs the float32-only Conv: a float64 node is left to the decomposition.
  const TensorSpec x = TensorSpec::of("x", INFER_DTYPE_FLOAT64, {1, 1, 3, 3});
  const TensorSpec w = TensorSpec::of("w", INFER_DTYPE_FLOAT64, {1, 1, 2, 2});
  EXPECT_EQ(reason("FusedConv", {x, w}, {TensorSpec::of("y", INFER_DTYPE_FLOAT64, {1, 1, 2, 2})}),
            "cpu: FusedConv does not support dtype float64 (input 0 'x')");
  const TensorSpec a = TensorSpec::of("a", INFER_DTYPE_INT32, {2, 2});
  EXPECT_EQ(reason("FusedMatMul", {a, a}, {TensorSpec::of("y", INFER_DTYPE_INT32, {2, 2})}),
            "cpu: FusedMatMul does not support dtype int32 (input 0 'a')");
  // The ai.infer ops exist at opset 1 only.
  GraphBuilder g;
  g.node("Gelu", {f32("x", {2})}, {f32("y", {2})}, {}, 2, "n", "ai.infer");
  infer_capability cap{};
  cap.struct_size = sizeof cap;
  ASSERT_TRUE(
      take_status(plugin_->api()->query_capability(plugin_->device(), g.last_node(), &cap)).ok());
  EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
}

}  // namespace
}  // namespace infer::test
