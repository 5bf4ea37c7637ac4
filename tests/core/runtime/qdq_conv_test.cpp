// A convolution in ONNX Runtime's QDQ form through a whole Session: with the optimizer's
// qdq_conv_fusion it runs as a QLinearConv on 8-bit data; the test checks the result
// against its own integer reference (the definition of the QDQ graph: an exact int64
// convolution of the dequantized grid, then y = saturate(round(acc * x_scale * w_scale /
// y_scale) + y_zero)), and against the same model run without the fusion (the float
// Conv of the dequantized values).
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

constexpr int64_t kC = 8, kM = 6, kH = 9, kW = 7;
constexpr float kXScale = 0.02f, kYScale = 0.05f;
constexpr uint8_t kXZero = 120;
const float kWScale[kM] = {0.01f, 0.02f, 0.015f, 0.03f, 0.005f, 0.025f};

struct Data {
  std::vector<uint8_t> x;
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
};

Data make_data() {
  std::mt19937 rng(7);
  Data d;
  std::uniform_int_distribution<int> xd(0, 255), wd(-127, 127), bd(-2000, 2000);
  d.x.resize(kC * kH * kW);
  for (auto& v : d.x) v = static_cast<uint8_t>(xd(rng));
  d.w.resize(kM * kC * 3 * 3);
  for (auto& v : d.w) v = static_cast<int8_t>(wd(rng));
  d.bias.resize(kM);
  for (auto& v : d.bias) v = bd(rng);
  return d;
}

// x_q -> DQ -> Conv 3x3 pad 1 (DQ(w_q) per channel, DQ(bias int32)) -> Relu -> Q -> y_q.
std::string qdq_model(const Data& d) {
  OnnxModelWriter w;
  w.typed_input("x_q", {1, kC, kH, kW}, ::onnx::TensorProto::UINT8);
  w.typed_output("y_q", {1, kM, kH, kW}, ::onnx::TensorProto::UINT8);
  w.raw_initializer<float>("x_scale", ::onnx::TensorProto::FLOAT, {}, {kXScale});
  w.raw_initializer<uint8_t>("x_zero", ::onnx::TensorProto::UINT8, {}, {kXZero});
  w.raw_initializer<int8_t>("w_q", ::onnx::TensorProto::INT8, {kM, kC, 3, 3}, d.w);
  w.raw_initializer<float>("w_scale", ::onnx::TensorProto::FLOAT, {kM},
                           std::vector<float>(kWScale, kWScale + kM));
  w.raw_initializer<int8_t>("w_zero", ::onnx::TensorProto::INT8, {kM}, std::vector<int8_t>(kM, 0));
  std::vector<float> bscale(kM);
  for (int64_t m = 0; m < kM; ++m) bscale[m] = kXScale * kWScale[m];
  w.raw_initializer<int32_t>("b_q", ::onnx::TensorProto::INT32, {kM}, d.bias);
  w.raw_initializer<float>("b_scale", ::onnx::TensorProto::FLOAT, {kM}, bscale);
  w.raw_initializer<float>("y_scale", ::onnx::TensorProto::FLOAT, {}, {kYScale});
  w.raw_initializer<uint8_t>("y_zero", ::onnx::TensorProto::UINT8, {}, {0});
  w.node("dqx", "DequantizeLinear", {"x_q", "x_scale", "x_zero"}, {"x"});
  OnnxModelWriter::int_attr(w.node("dqw", "DequantizeLinear", {"w_q", "w_scale", "w_zero"}, {"w"}),
                            "axis", 0);
  OnnxModelWriter::int_attr(w.node("dqb", "DequantizeLinear", {"b_q", "b_scale"}, {"b"}), "axis",
                            0);
  auto* conv = w.node("conv", "Conv", {"x", "w", "b"}, {"c"});
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(::onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  w.node("relu", "Relu", {"c"}, {"r"});
  w.node("q", "QuantizeLinear", {"r", "y_scale", "y_zero"}, {"y_q"});
  const std::string path = testing::temp_path("infer_runtime_qdq_conv.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// The QDQ graph's definition, in integers and double.
std::vector<int> reference(const Data& d) {
  std::vector<int> y(kM * kH * kW);
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t oh = 0; oh < kH; ++oh)
      for (int64_t ow = 0; ow < kW; ++ow) {
        int64_t acc = d.bias[m];
        for (int64_t c = 0; c < kC; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
              acc += (int64_t{d.x[(c * kH + ih) * kW + iw]} - kXZero) *
                     int64_t{d.w[((m * kC + c) * 3 + kh) * 3 + kw]};
            }
        const double v = std::max(0.0, static_cast<double>(acc) * kXScale * kWScale[m]);
        y[(m * kH + oh) * kW + ow] = static_cast<int>(std::min(255.0, std::nearbyint(v / kYScale)));
      }
  return y;
}

std::vector<int> run(const std::string& model, const Data& d, bool fused, std::string* ops) {
  SessionOptions o = tree_options({"cpu"});
  if (!fused) o.disabled_passes = {"qdq_conv_fusion"};
  auto s = Session::create(model, o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  if (!s.is_ok()) return {};
  for (const auto& n : (*s)->plan().nodes) *ops += n.op_type + " ";
  auto out = (*s)->run(
      {{"x_q", *Tensor::from_bytes(DataType::kUInt8, {1, kC, kH, kW}, d.x.data(), d.x.size())}});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  const uint8_t* y = (*out)[0].tensor.data_as<uint8_t>();
  return std::vector<int>(y, y + kM * kH * kW);
}

TEST(QdqConv, FusedRunMatchesTheQdqDefinitionAndTheFloatGraph) {
  const Data d = make_data();
  const std::string model = qdq_model(d);
  std::string fused_ops, float_ops;
  const std::vector<int> fused = run(model, d, true, &fused_ops);
  const std::vector<int> unfused = run(model, d, false, &float_ops);
  EXPECT_EQ(fused_ops, "QLinearConv ");
  EXPECT_NE(float_ops.find("Conv "), std::string::npos) << float_ops;
  const std::vector<int> ref = reference(d);
  ASSERT_EQ(fused.size(), ref.size());
  ASSERT_EQ(unfused.size(), ref.size());
  // The kernel multiplies in float32 where the reference uses double: a value within
  // float rounding of a .5 tie may round the other way. Nothing else may differ.
  int off_by_one = 0, zeros = 0, saturated = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_LE(std::abs(fused[i] - ref[i]), 1) << "element " << i;
    ASSERT_LE(std::abs(unfused[i] - ref[i]), 1) << "element " << i;
    off_by_one += fused[i] != ref[i];
    zeros += ref[i] == 0;
    saturated += ref[i] == 255;
  }
  EXPECT_LE(off_by_one, 2) << "of " << ref.size();
  // The case exercises the absorbed Relu (zeros) and the upper saturation.
  EXPECT_GT(zeros, 20);
  EXPECT_GT(saturated, 0);
}

}  // namespace
}  // namespace infer
