// A classifier layer and a batched projection in ONNX Runtime's QDQ form through a whole
// Session: with qdq_gemm_fusion they run as ai.infer MatMulIntegerToFloat on the 8-bit
// data. The test checks the results against the QDQ graph's definition computed here
// (exact int64 sums of the 8-bit grids, then double), and against the same model run
// without the fusion (float products of the dequantized values).
//   Gemm: x_q [2, 40] -> DQ; w_q [24, 40] per output channel (transB); bias int32 through
//         DQ with scale x_scale * w_scale; -> Q -> y_q (uint8)
//   MatMul: a_q [2, 3, 40] -> DQ; v_q [40, 16] per column (axis 1), uint8 with zero points;
//         -> z (float32)
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "infer_test_paths.hpp"
#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::OnnxModelWriter;
using testing::tree_options;

constexpr int64_t kB = 2, kK = 40, kN = 24, kS = 3, kV = 16;
constexpr float kXScale = 0.03f, kYScale = 0.2f, kAScale = 0.02f;
constexpr uint8_t kXZero = 100, kYZero = 128, kAZero = 140;

struct Data {
  std::vector<uint8_t> x, a, v, v_zero;
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
  std::vector<float> w_scale, v_scale;
};

Data make_data() {
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> byte(0, 255), wd(-127, 127), bd(-3000, 3000);
  std::uniform_real_distribution<float> sd(0.002f, 0.02f);
  using testing::random_values;
  Data d;
  d.x = random_values<uint8_t>(kB * kK, byte, rng);
  d.a = random_values<uint8_t>(kB * kS * kK, byte, rng);
  d.v = random_values<uint8_t>(kK * kV, byte, rng);
  d.w = random_values<int8_t>(kN * kK, wd, rng);
  d.bias = random_values<int32_t>(kN, bd, rng);
  d.w_scale = random_values<float>(kN, sd, rng);
  d.v_scale = random_values<float>(kV, sd, rng);
  d.v_zero = random_values<uint8_t>(kV, byte, rng);
  return d;
}

std::string model(const Data& d) {
  OnnxModelWriter w;
  w.typed_input("x_q", {kB, kK}, ::onnx::TensorProto::UINT8);
  w.typed_input("a_q", {kB, kS, kK}, ::onnx::TensorProto::UINT8);
  w.typed_output("y_q", {kB, kN}, ::onnx::TensorProto::UINT8);
  w.typed_output("z", {kB, kS, kV}, ::onnx::TensorProto::FLOAT);
  w.raw_initializer<float>("x_scale", ::onnx::TensorProto::FLOAT, {}, {kXScale});
  w.raw_initializer<uint8_t>("x_zero", ::onnx::TensorProto::UINT8, {}, {kXZero});
  w.raw_initializer<int8_t>("w_q", ::onnx::TensorProto::INT8, {kN, kK}, d.w);
  w.raw_initializer<float>("w_scale", ::onnx::TensorProto::FLOAT, {kN}, d.w_scale);
  w.raw_initializer<int8_t>("w_zero", ::onnx::TensorProto::INT8, {kN}, std::vector<int8_t>(kN, 0));
  std::vector<float> bscale(kN);
  for (int64_t n = 0; n < kN; ++n) bscale[n] = kXScale * d.w_scale[n];
  w.raw_initializer<int32_t>("b_q", ::onnx::TensorProto::INT32, {kN}, d.bias);
  w.raw_initializer<float>("b_scale", ::onnx::TensorProto::FLOAT, {kN}, bscale);
  w.raw_initializer<float>("y_scale", ::onnx::TensorProto::FLOAT, {}, {kYScale});
  w.raw_initializer<uint8_t>("y_zero", ::onnx::TensorProto::UINT8, {}, {kYZero});
  w.raw_initializer<float>("a_scale", ::onnx::TensorProto::FLOAT, {}, {kAScale});
  w.raw_initializer<uint8_t>("a_zero", ::onnx::TensorProto::UINT8, {}, {kAZero});
  w.raw_initializer<uint8_t>("v_q", ::onnx::TensorProto::UINT8, {kK, kV}, d.v);
  w.raw_initializer<float>("v_scale", ::onnx::TensorProto::FLOAT, {kV}, d.v_scale);
  w.raw_initializer<uint8_t>("v_zero", ::onnx::TensorProto::UINT8, {kV}, d.v_zero);
  w.node("dqx", "DequantizeLinear", {"x_q", "x_scale", "x_zero"}, {"x"});
  OnnxModelWriter::int_attr(w.node("dqw", "DequantizeLinear", {"w_q", "w_scale", "w_zero"}, {"w"}),
                            "axis", 0);
  OnnxModelWriter::int_attr(w.node("dqb", "DequantizeLinear", {"b_q", "b_scale"}, {"b"}), "axis",
                            0);
  OnnxModelWriter::int_attr(w.node("fc", "Gemm", {"x", "w", "b"}, {"y"}), "transB", 1);
  w.node("q", "QuantizeLinear", {"y", "y_scale", "y_zero"}, {"y_q"});
  w.node("dqa", "DequantizeLinear", {"a_q", "a_scale", "a_zero"}, {"a"});
  OnnxModelWriter::int_attr(w.node("dqv", "DequantizeLinear", {"v_q", "v_scale", "v_zero"}, {"v"}),
                            "axis", 1);
  w.node("proj", "MatMul", {"a", "v"}, {"z"});
  const std::string path = testing::temp_path("infer_runtime_qdq_gemm.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

struct Outputs {
  std::vector<int> y;
  std::vector<float> z;
};

// The QDQ graph's definition in integers and double (y before its rounding to the grid).
struct Reference {
  std::vector<double> y;  // in units of y_scale, plus y's zero point
  std::vector<double> z;
};
Reference reference(const Data& d) {
  Reference r;
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t n = 0; n < kN; ++n) {
      int64_t acc = d.bias[n];
      for (int64_t k = 0; k < kK; ++k)
        acc += (int64_t{d.x[b * kK + k]} - kXZero) * int64_t{d.w[n * kK + k]};
      r.y.push_back(static_cast<double>(acc) * kXScale * d.w_scale[n] / kYScale + kYZero);
    }
  for (int64_t i = 0; i < kB * kS; ++i)
    for (int64_t n = 0; n < kV; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < kK; ++k)
        acc += (int64_t{d.a[i * kK + k]} - kAZero) * (int64_t{d.v[k * kV + n]} - d.v_zero[n]);
      r.z.push_back(static_cast<double>(acc) * kAScale * d.v_scale[n]);
    }
  return r;
}

Outputs run(const std::string& path, const Data& d, bool fused, std::string* ops) {
  SessionOptions o = tree_options({"cpu"});
  if (!fused) o.disabled_passes = {"qdq_gemm_fusion"};
  auto s = Session::create(path, o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  if (!s.is_ok()) return {};
  for (const auto& n : (*s)->plan().nodes) *ops += n.op_type + " ";
  auto out = (*s)->run(
      {{"x_q", *Tensor::from_bytes(DataType::kUInt8, {kB, kK}, d.x.data(), d.x.size())},
       {"a_q", *Tensor::from_bytes(DataType::kUInt8, {kB, kS, kK}, d.a.data(), d.a.size())}});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  Outputs r;
  for (const auto& named : *out) {
    const int64_t n = named.tensor.element_count();
    for (int64_t k = 0; k < n; ++k) {
      if (named.name == "y_q")
        r.y.push_back(named.tensor.data_as<uint8_t>()[k]);
      else
        r.z.push_back(named.tensor.data_as<float>()[k]);
    }
  }
  return r;
}

TEST(QdqGemm, FusedRunMatchesTheQdqDefinitionAndTheFloatGraph) {
  const Data d = make_data();
  const std::string path = model(d);
  std::string fused_ops, float_ops;
  const Outputs fused = run(path, d, true, &fused_ops);
  const Outputs unfused = run(path, d, false, &float_ops);
  EXPECT_EQ(fused_ops.find("Gemm"), std::string::npos) << fused_ops;
  EXPECT_EQ(fused_ops.find("MatMul "), std::string::npos) << fused_ops;
  size_t fused_count = 0;
  for (size_t at = fused_ops.find("MatMulIntegerToFloat"); at != std::string::npos;
       at = fused_ops.find("MatMulIntegerToFloat", at + 1))
    ++fused_count;
  EXPECT_EQ(fused_count, 2u) << fused_ops;
  EXPECT_NE(float_ops.find("Gemm"), std::string::npos) << float_ops;

  const Reference ref = reference(d);
  ASSERT_EQ(fused.y.size(), ref.y.size());
  ASSERT_EQ(unfused.y.size(), ref.y.size());
  int saturated = 0, off = 0;
  for (size_t i = 0; i < ref.y.size(); ++i) {
    const int want = static_cast<int>(std::clamp(std::nearbyint(ref.y[i]), 0.0, 255.0));
    saturated += want == 0 || want == 255;
    // float32 scaling against double: a value within rounding of a .5 tie may go either way.
    ASSERT_LE(std::abs(fused.y[i] - want), 1) << i;
    ASSERT_LE(std::abs(unfused.y[i] - want), 1) << i;
    off += fused.y[i] != want;
  }
  EXPECT_LE(off, 1);
  EXPECT_LT(saturated, static_cast<int>(ref.y.size()) / 4) << "the case should mostly not saturate";

  ASSERT_EQ(fused.z.size(), ref.z.size());
  ASSERT_EQ(unfused.z.size(), ref.z.size());
  for (size_t i = 0; i < ref.z.size(); ++i) {
    // The fused sum is exact; its scaling rounds twice in float32 (a_scale * v_scale, then
    // the product). The float graph's sum of 40 float products rounds more.
    ASSERT_NEAR(fused.z[i], ref.z[i], 4e-7 * std::fabs(ref.z[i]) + 1e-7) << i;
    ASSERT_NEAR(unfused.z[i], ref.z[i], 1e-5 * (std::fabs(ref.z[i]) + 1)) << i;
  }
}

}  // namespace
}  // namespace infer
