// apply_activation (simd/activation.hpp), the epilogue of the GEMM and convolution
// kernels, for every ActKind and ISA against the ONNX formulas evaluated in double, on
// every length 1..67 plus long runs (tails), with the NaN conventions of the unfused
// kernels.
#include "simd/activation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

double reference(const Act& a, double x) {
  switch (a.kind) {
    case ActKind::kNone: return x;
    case ActKind::kRelu: return x > 0 ? x : 0;
    case ActKind::kTanh: return std::tanh(x);
    case ActKind::kSigmoid: return 1 / (1 + std::exp(-x));
    case ActKind::kLeakyRelu: return x < 0 ? a.p0 * x : x;
    case ActKind::kClip: return std::min<double>(std::max<double>(x, a.p0), a.p1);
    case ActKind::kHardSigmoid: return std::max(0.0, std::min(1.0, a.p0 * x + a.p1));
    case ActKind::kHardSwish: return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
    case ActKind::kGelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ActKind::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  }
  return 0;
}

const Act kActs[] = {
    {ActKind::kNone, 0, 0},          {ActKind::kRelu, 0, 0},
    {ActKind::kTanh, 0, 0},          {ActKind::kSigmoid, 0, 0},
    {ActKind::kLeakyRelu, 0.1f, 0},  {ActKind::kClip, -0.5f, 1.25f},
    {ActKind::kHardSigmoid, 0.2f, 0.5f}, {ActKind::kHardSwish, 0, 0},
    {ActKind::kGelu, 0, 0},          {ActKind::kGeluTanh, 0, 0},
};

class ActivationTest : public ::testing::TestWithParam<Isa> {};

TEST_P(ActivationTest, EveryKindAndLength) {
  const Isa isa = GetParam();
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 67; ++n) lengths.push_back(n);
  lengths.push_back(1000);
  lengths.push_back(4111);
  for (const Act& act : kActs) {
    for (size_t n : lengths) {
      const std::vector<float> x = random_floats(n, static_cast<uint32_t>(n * 3 + 1), -6.0f, 6.0f);
      std::vector<float> y = x;
      y.resize(n + 16, 77.0f);
      apply_activation(isa, act, y.data(), n);
      const std::string what = "kind " + std::to_string(static_cast<int>(act.kind)) + " n=" + std::to_string(n);
      for (size_t i = n; i < n + 16; ++i) ASSERT_EQ(y[i], 77.0f) << what;
      y.resize(n);
      std::vector<float> want(n);
      for (size_t i = 0; i < n; ++i) want[i] = static_cast<float>(reference(act, x[i]));
      // Gelu for x < 0 inherits erf's ulp near -1 as an absolute error (see vec.hpp).
      expect_close(y, want, 5e-7, 2e-7, what);
    }
  }
}

TEST_P(ActivationTest, SpecialValues) {
  const Isa isa = GetParam();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto run = [&](const Act& a, float v) {
    std::vector<float> x(21, 0.0f);
    x[19] = v;  // in the tail of every vector width
    apply_activation(isa, a, x.data(), x.size());
    return x[19];
  };
  EXPECT_EQ(run({ActKind::kRelu, 0, 0}, -inf), 0.0f);
  EXPECT_EQ(run({ActKind::kRelu, 0, 0}, nan), 0.0f);  // as the Relu kernel's x > 0 ? x : 0
  EXPECT_EQ(run({ActKind::kTanh, 0, 0}, -inf), -1.0f);
  EXPECT_EQ(run({ActKind::kSigmoid, 0, 0}, inf), 1.0f);
  EXPECT_EQ(run({ActKind::kSigmoid, 0, 0}, -inf), 0.0f);
  EXPECT_TRUE(std::isnan(run({ActKind::kClip, 0, 6}, nan)));  // Clip passes NaN through
  EXPECT_EQ(run({ActKind::kClip, 0, 6}, inf), 6.0f);
  EXPECT_EQ(run({ActKind::kClip, 2, 1}, 0.5f), 1.0f);  // min > max gives max
  EXPECT_EQ(run({ActKind::kHardSigmoid, 0.2f, 0.5f}, inf), 1.0f);
  EXPECT_EQ(run({ActKind::kHardSigmoid, 0.2f, 0.5f}, -inf), 0.0f);
  EXPECT_EQ(run({ActKind::kHardSwish, 0, 0}, 10.0f), 10.0f);
  EXPECT_EQ(run({ActKind::kHardSwish, 0, 0}, -10.0f), 0.0f);
  EXPECT_EQ(run({ActKind::kLeakyRelu, 0.5f, 0}, -inf), -inf);
  EXPECT_EQ(run({ActKind::kGelu, 0, 0}, inf), inf);
  EXPECT_TRUE(std::isnan(run({ActKind::kGelu, 0, 0}, nan)));
}

INSTANTIATE_TEST_SUITE_P(Isas, ActivationTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
