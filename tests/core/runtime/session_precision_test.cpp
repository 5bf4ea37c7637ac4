// Float16 and bfloat16 graphs on cpu: the nodes no backend runs at their own precision
// (Conv, and FusedConv after fusion) compute in float32 with casts at their edges, and the
// plan says so. The reference is the same network computed in double from the same
// inputs and weights (all exactly representable in both formats); the tolerance allows
// the roundings to the format's precision at the edges of each node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "onnx_graph_proto.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::tree_options;
using namespace testing::proto;  // NOLINT: the model below reads better

constexpr int64_t C_IN = 2, C_MID = 3, C_OUT = 2, H = 4, W = 4;

// Exactly representable in float16 and bfloat16: multiples of 1/8 or 1/16 of magnitude
// at most 1.
std::vector<float> pattern(size_t n, int mul, int mod, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<int>((i * mul) % mod) - mod / 2) * scale;
  return v;
}
const std::vector<float> kX = pattern(C_IN * H * W, 7, 17, 1.0f / 8);
const std::vector<float> kW1 = pattern(C_MID * C_IN * 9, 5, 11, 1.0f / 16);
const std::vector<float> kB1 = {0.25f, -0.5f, 0.125f};
const std::vector<float> kW2 = pattern(C_OUT * C_MID, 3, 7, 1.0f / 8);
const std::vector<float> kB2 = {0.5f, -0.25f};

// The bits of `v` in the format: float16 (exact for these values) or bfloat16 (the top
// half of the float32).
std::vector<uint16_t> encode(const std::vector<float>& v, bool bf16) {
  std::vector<uint16_t> out;
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (bf16) {
      out.push_back(static_cast<uint16_t>(bits >> 16));
      continue;
    }
    // float32 -> float16 for normal values whose mantissa fits in 10 bits (all above).
    if (f == 0) {
      out.push_back(static_cast<uint16_t>((bits >> 16) & 0x8000));
      continue;
    }
    const uint32_t sign = (bits >> 16) & 0x8000;
    const int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
    const uint32_t mant = (bits >> 13) & 0x3ff;
    out.push_back(static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | mant));
  }
  return out;
}

// x (float32) -> Cast -> conv1 (3x3, pad 1) -> relu1 -> conv2 (1x1) -> Cast -> y (float32).
std::string write_model(bool bf16) {
  const int elem = bf16 ? ::onnx::TensorProto::BFLOAT16 : ::onnx::TensorProto::FLOAT16;
  ::onnx::GraphProto g;
  g.set_name(bf16 ? "bf16_convs" : "f16_convs");
  input(g, "x", ::onnx::TensorProto::FLOAT, {1, C_IN, H, W});
  output(g, "y", ::onnx::TensorProto::FLOAT, {1, C_OUT, H, W});
  raw_initializer(g, "W1", elem, {C_MID, C_IN, 3, 3}, encode(kW1, bf16));
  raw_initializer(g, "B1", elem, {C_MID}, encode(kB1, bf16));
  raw_initializer(g, "W2", elem, {C_OUT, C_MID, 1, 1}, encode(kW2, bf16));
  raw_initializer(g, "B2", elem, {C_OUT}, encode(kB2, bf16));
  int_attr(node(g, "to_low", "Cast", {"x"}, {"xl"}), "to", elem);
  ints_attr(node(g, "conv1", "Conv", {"xl", "W1", "B1"}, {"c1"}), "pads", {1, 1, 1, 1});
  node(g, "relu1", "Relu", {"c1"}, {"r1"});
  node(g, "conv2", "Conv", {"r1", "W2", "B2"}, {"c2"});
  int_attr(node(g, "to_f32", "Cast", {"c2"}, {"y"}), "to", ::onnx::TensorProto::FLOAT);
  return save(g, bf16 ? "precision_bf16.onnx" : "precision_f16.onnx", 13);
}

// The network in double, plus for each output the sum of the magnitudes of the terms
// that make it (the scale of its rounding error).
void reference(std::vector<double>& y, std::vector<double>& scale) {
  std::vector<double> r1(C_MID * H * W), r1_mag(C_MID * H * W);
  for (int64_t m = 0; m < C_MID; ++m)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W; ++j) {
        double acc = kB1[m], mag = std::fabs(kB1[m]);
        for (int64_t c = 0; c < C_IN; ++c)
          for (int64_t di = -1; di <= 1; ++di)
            for (int64_t dj = -1; dj <= 1; ++dj) {
              const int64_t ii = i + di, jj = j + dj;
              if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
              const double t = static_cast<double>(kX[(c * H + ii) * W + jj]) *
                               kW1[((m * C_IN + c) * 3 + di + 1) * 3 + dj + 1];
              acc += t;
              mag += std::fabs(t);
            }
        r1[(m * H + i) * W + j] = acc > 0 ? acc : 0;
        r1_mag[(m * H + i) * W + j] = mag;
      }
  y.assign(C_OUT * H * W, 0);
  scale.assign(C_OUT * H * W, 0);
  for (int64_t o = 0; o < C_OUT; ++o)
    for (int64_t p = 0; p < H * W; ++p) {
      double acc = kB2[o], mag = std::fabs(kB2[o]);
      for (int64_t m = 0; m < C_MID; ++m) {
        acc += kW2[o * C_MID + m] * r1[m * H * W + p];
        mag += std::fabs(kW2[o * C_MID + m]) * r1_mag[m * H * W + p];
      }
      y[o * H * W + p] = acc;
      scale[o * H * W + p] = mag;
    }
}

void expect_runs_in_float32(bool bf16) {
  const std::string path = write_model(bf16);
  const char* low = bf16 ? "bfloat16" : "float16";
  // Unit roundoff of the format: each output went through at most three roundings to it
  // (conv1's output, conv2's output, with relu1 exact) plus float32 accumulation.
  const double u = bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  std::vector<double> want, scale;
  reference(want, scale);
  Tensor x = *Tensor::from_bytes(DataType::kFloat32, {1, C_IN, H, W}, kX.data(),
                                 kX.size() * sizeof(float));
  for (int level : {0, 3}) {
    SCOPED_TRACE(std::string(low) + " at opt level " + std::to_string(level));
    SessionOptions o = tree_options({"cpu"});
    o.optimization_level = level;
    auto session = Session::create(path, o);
    ASSERT_TRUE(session.is_ok()) << session.status().message();
    const PlanReport& plan = (*session)->plan();
    // conv1 (FusedConv with relu1 at level 3) and conv2 compute in float32; relu1 at level
    // 0 has a float16/bfloat16 kernel and stays.
    bool conv1 = false, conv2 = false;
    for (const std::string& line : plan.precision) {
      const std::string tail = std::string(": ") + low + " -> float32 (cpu: ";
      conv1 = conv1 || (line.rfind("node 'conv1'", 0) == 0 && line.find(tail) != std::string::npos);
      conv2 = conv2 || (line.rfind("node 'conv2'", 0) == 0 && line.find(tail) != std::string::npos);
      EXPECT_EQ(line.find("relu1"), std::string::npos) << line;
    }
    EXPECT_TRUE(conv1 && conv2) << plan.to_text();
    EXPECT_NE(plan.to_text().find("precision changes"), std::string::npos) << plan.to_text();

    auto out = (*session)->run({{"x", x}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    ASSERT_EQ(out->size(), 1u);
    const Tensor& y = (*out)[0].tensor;
    ASSERT_EQ(y.dtype(), DataType::kFloat32);
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, C_OUT, H, W}));
    for (size_t i = 0; i < want.size(); ++i) {
      const double tol = 4 * u * (scale[i] + std::fabs(want[i])) + 1e-6;
      EXPECT_NEAR(y.data_as<float>()[i], want[i], tol) << "y[" << i << "]";
    }
  }
}

TEST(SessionPrecision, Float16ConvsComputeInFloat32WithCastsAtTheEdges) {
  expect_runs_in_float32(false);
}

TEST(SessionPrecision, BFloat16ConvsComputeInFloat32WithCastsAtTheEdges) {
  expect_runs_in_float32(true);
}

// A float32 model has nothing to widen: no casts, no precision lines.
TEST(SessionPrecision, Float32ModelsAreLeftAlone) {
  ::onnx::GraphProto g;
  g.set_name("f32_conv");
  input(g, "x", ::onnx::TensorProto::FLOAT, {1, C_IN, H, W});
  output(g, "y", ::onnx::TensorProto::FLOAT, {1, C_OUT, H, W});
  f32_initializer(g, "W", {C_OUT, C_IN, 1, 1}, {1, 0, 0, 1});
  node(g, "conv", "Conv", {"x", "W"}, {"y"});
  auto session = Session::create(save(g, "precision_f32.onnx", 13), tree_options({"cpu"}));
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  EXPECT_TRUE((*session)->plan().precision.empty()) << (*session)->plan().to_text();
  EXPECT_EQ((*session)->plan().to_text().find("precision changes"), std::string::npos);
}

}  // namespace
}  // namespace infer
