// Per-tensor 8-bit quantization runs (simd/quantize.hpp) of every ISA against the ops'
// definitions computed here in double (round half to even with std::nearbyint, then the
// zero point and saturation; NaN to the zero point; dequantize as one float multiply):
// ties, both saturation ends, NaN and infinities, every tail length up to two vectors,
// and the range search over runs with the extremes at every position.
#include "simd/quantize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

class QuantizeTest : public ::testing::TestWithParam<Isa> {};

template <typename Q>
Q reference(float x, float scale, int32_t zp) {
  const float q = x / scale;  // the ops divide in float32
  if (std::isnan(q)) return static_cast<Q>(zp);
  const double r = std::nearbyint(static_cast<double>(q)) + zp;
  const double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::min(hi, std::max(lo, r)));
}

std::vector<float> inputs() {
  std::vector<float> x = random_floats(997, 11, -300.0f, 300.0f);
  for (float t : {0.5f,
                  1.5f,
                  2.5f,
                  -0.5f,
                  -1.5f,
                  -2.5f,
                  127.5f,
                  128.5f,
                  -128.5f,
                  254.5f,
                  255.5f,
                  1e30f,
                  -1e30f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::nanf(""),
                  0.0f,
                  -0.0f,
                  0.49999997f,
                  8388609.0f})
    x.push_back(t);
  return x;
}

TEST_P(QuantizeTest, QuantizeMatchesTheDefinition) {
  const std::vector<float> x = inputs();
  for (float scale : {1.0f, 0.037f, 3.0f}) {
    for (int32_t zp : {0, 3, 128, 255}) {
      std::vector<uint8_t> y(x.size());
      quantize_u8(GetParam(), x.data(), x.size(), scale, zp, y.data());
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(y[i], reference<uint8_t>(x[i], scale, zp))
            << "x " << x[i] << " scale " << scale << " zp " << zp;
    }
    for (int32_t zp : {-128, -5, 0, 127}) {
      std::vector<int8_t> y(x.size());
      quantize_s8(GetParam(), x.data(), x.size(), scale, zp, y.data());
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(y[i], reference<int8_t>(x[i], scale, zp))
            << "x " << x[i] << " scale " << scale << " zp " << zp;
    }
  }
}

TEST_P(QuantizeTest, EveryTailLength) {
  const std::vector<float> x = random_floats(80, 3, -20.0f, 20.0f);
  for (size_t n = 0; n <= x.size(); ++n) {
    std::vector<uint8_t> y(n + 1, 0xAB);
    quantize_u8(GetParam(), x.data(), n, 0.1f, 100, y.data());
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], reference<uint8_t>(x[i], 0.1f, 100)) << n;
    ASSERT_EQ(y[n], 0xAB) << "wrote past the end, n " << n;
    std::vector<float> d(n + 1, -7.0f);
    dequantize_u8(GetParam(), y.data(), n, 0.1f, 100, d.data());
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], static_cast<float>(static_cast<int32_t>(y[i]) - 100) * 0.1f);
    ASSERT_EQ(d[n], -7.0f);
  }
}

TEST_P(QuantizeTest, DequantizeEveryValue) {
  std::vector<uint8_t> u(256);
  std::vector<int8_t> s(256);
  for (int i = 0; i < 256; ++i) {
    u[i] = static_cast<uint8_t>(i);
    s[i] = static_cast<int8_t>(i - 128);
  }
  std::vector<float> y(256);
  dequantize_u8(GetParam(), u.data(), 256, 0.0625f, 77, y.data());
  for (int i = 0; i < 256; ++i) ASSERT_EQ(y[i], static_cast<float>(i - 77) * 0.0625f);
  dequantize_s8(GetParam(), s.data(), 256, 1.7f, -3, y.data());
  for (int i = 0; i < 256; ++i) ASSERT_EQ(y[i], static_cast<float>(i - 128 + 3) * 1.7f);
}

TEST_P(QuantizeTest, RangeIncludesZeroAndIgnoresNaN) {
  float lo = 1, hi = -1;
  range_with_zero(GetParam(), nullptr, 0, &lo, &hi);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 0.0f);
  // The minimum, the maximum and a NaN at distinct positions, over every position of the
  // minimum, for lengths around the 16 lanes.
  for (size_t n : {size_t{3}, size_t{15}, size_t{16}, size_t{17}, size_t{33}, size_t{100}}) {
    for (size_t at = 0; at < n; ++at) {
      std::vector<float> x(n, 0.5f);
      x[at] = -3.0f;
      x[(at + n / 2 + 1) % n] = 9.0f;
      x[(at + 1) % n] = std::nanf("");
      range_with_zero(GetParam(), x.data(), n, &lo, &hi);
      ASSERT_EQ(lo, -3.0f) << n << " " << at;
      ASSERT_EQ(hi, 9.0f) << n << " " << at;
    }
  }
  std::vector<float> pos(40, 2.0f);  // all positive: the low end is 0
  lo = 1;
  range_with_zero(GetParam(), pos.data(), pos.size(), &lo, &hi);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 2.0f);
}

INSTANTIATE_TEST_SUITE_P(Isas, QuantizeTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
