// Layer normalization rows (simd/layernorm.hpp) of every ISA against the definition in
// double: every length 1..67 plus the transformer widths, each combination of gamma and
// beta, a large mean (the two-pass variance), constant rows, and the mean / inv_std
// outputs.
#include "simd/layernorm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

struct Ref {
  std::vector<float> y;
  double mean = 0, inv = 0;
};

Ref reference(const std::vector<float>& x, const float* g, const float* b, double eps) {
  const size_t n = x.size();
  double s = 0;
  for (float v : x) s += v;
  Ref r;
  r.mean = s / static_cast<double>(n);
  double q = 0;
  for (float v : x) q += (v - r.mean) * (v - r.mean);
  r.inv = 1.0 / std::sqrt(q / static_cast<double>(n) + eps);
  r.y.resize(n);
  for (size_t i = 0; i < n; ++i)
    r.y[i] = static_cast<float>((x[i] - r.mean) * r.inv * (g ? g[i] : 1.0) + (b ? b[i] : 0.0));
  return r;
}

class LayerNormTest : public ::testing::TestWithParam<Isa> {};

TEST_P(LayerNormTest, EveryLengthAndAffineCombination) {
  const Isa isa = GetParam();
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 67; ++n) lengths.push_back(n);
  for (size_t n : {128, 255, 768, 1024, 4097}) lengths.push_back(n);
  for (size_t n : lengths) {
    const std::vector<float> x = random_floats(n, static_cast<uint32_t>(n), -3.0f, 5.0f);
    const std::vector<float> g = random_floats(n, 100, 0.5f, 1.5f);
    const std::vector<float> b = random_floats(n, 200, -1.0f, 1.0f);
    for (int mode = 0; mode < 4; ++mode) {
      const float* gp = (mode & 1) ? g.data() : nullptr;
      const float* bp = (mode & 2) ? b.data() : nullptr;
      std::vector<float> y(n + 16, 55.0f);
      float mean = 0, inv = 0;
      layernorm_row(isa, x.data(), y.data(), n, gp, bp, 1e-5f, &mean, &inv);
      const std::string what = "n=" + std::to_string(n) + " mode=" + std::to_string(mode);
      for (size_t i = n; i < n + 16; ++i) ASSERT_EQ(y[i], 55.0f) << what;
      y.resize(n);
      const Ref r = reference(x, gp, bp, 1e-5);
      expect_close(y, r.y, 1e-5, 2e-6, what);
      EXPECT_NEAR(mean, r.mean, 1e-6 * (1 + std::fabs(r.mean))) << what;
      EXPECT_NEAR(inv, r.inv, 2e-6 * r.inv) << what;
      std::vector<float> inplace = x;
      layernorm_row(isa, inplace.data(), inplace.data(), n, gp, bp, 1e-5f);
      EXPECT_EQ(inplace, y) << what << " in place";
    }
  }
}

TEST_P(LayerNormTest, LargeMeanAndConstantRows) {
  const Isa isa = GetParam();
  // A mean of 1000 with a spread of 1: a one-pass E[x^2] - E[x]^2 would lose it all.
  std::vector<float> x = random_floats(777, 5, 999.0f, 1001.0f);
  std::vector<float> y(x.size());
  layernorm_row(isa, x.data(), y.data(), x.size(), nullptr, nullptr, 1e-5f);
  expect_close(y, reference(x, nullptr, nullptr, 1e-5).y, 2e-4, 2e-4, "mean 1000");
  // A constant row normalizes to 0 (+ beta), its inv_std is 1 / sqrt(eps).
  std::vector<float> c(45, 3.25f), beta(45, 0.5f), out(45);
  float mean = 0, inv = 0;
  layernorm_row(isa, c.data(), out.data(), c.size(), nullptr, beta.data(), 1e-2f, &mean, &inv);
  EXPECT_FLOAT_EQ(mean, 3.25f);
  EXPECT_NEAR(inv, 10.0f, 1e-5);
  for (float v : out) EXPECT_FLOAT_EQ(v, 0.5f);
}

INSTANTIATE_TEST_SUITE_P(Isas, LayerNormTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
