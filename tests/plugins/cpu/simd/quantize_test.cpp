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
#include <type_traits>
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

// QLinearAdd / QLinearMul: DequantizeLinear of both operands, the float op and
// QuantizeLinear, written out here one float operation at a time (volatile keeps the
// compiler from contracting the scaling and the sum into one FMA).
template <typename Q>
Q binary_reference(QBinaryOp op, Q a, QParams pa, Q b, QParams pb, QParams pc) {
  volatile float fa = static_cast<float>(static_cast<int32_t>(a) - pa.zero) * pa.scale;
  volatile float fb = static_cast<float>(static_cast<int32_t>(b) - pb.zero) * pb.scale;
  volatile float s = op == QBinaryOp::kMul ? fa * fb : fa + fb;
  return reference<Q>(s, pc.scale, pc.zero);
}

template <typename Q>
void check_binary(Isa isa, QBinaryOp op, QParams pa, QParams pb, QParams pc) {
  // Every pair of values, as runs; then each operand broadcast against every value.
  std::vector<Q> a, b;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j) {
      a.push_back(static_cast<Q>(std::numeric_limits<Q>::min() + i));
      b.push_back(static_cast<Q>(std::numeric_limits<Q>::min() + j));
    }
  auto run = [&](const Q* x, size_t xs, const Q* y, size_t ys, Q* out, size_t n) {
    if constexpr (std::is_same_v<Q, uint8_t>)
      qlinear_binary_u8(isa, op, x, xs, pa, y, ys, pb, pc, out, n);
    else
      qlinear_binary_s8(isa, op, x, xs, pa, y, ys, pb, pc, out, n);
  };
  std::vector<Q> c(a.size());
  run(a.data(), 1, b.data(), 1, c.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(c[i], binary_reference(op, a[i], pa, b[i], pb, pc))
        << "a " << int(a[i]) << " b " << int(b[i]) << " at " << i;
  const Q one = static_cast<Q>(std::numeric_limits<Q>::min() + 200);
  std::vector<Q> d(256);
  run(&one, 0, b.data(), 1, d.data(), 256);
  for (size_t j = 0; j < 256; ++j)
    ASSERT_EQ(d[j], binary_reference(op, one, pa, b[j], pb, pc)) << "a broadcast, b " << int(b[j]);
  run(b.data(), 1, &one, 0, d.data(), 256);
  for (size_t j = 0; j < 256; ++j)
    ASSERT_EQ(d[j], binary_reference(op, b[j], pa, one, pb, pc)) << "b broadcast, a " << int(b[j]);
}

TEST_P(QuantizeTest, QLinearAddAndMulMatchTheUnfusedOps) {
  for (QBinaryOp op : {QBinaryOp::kAdd, QBinaryOp::kMul}) {
    check_binary<uint8_t>(GetParam(), op, {0.05f, 3}, {0.0731f, 128}, {0.09f, 60});
    check_binary<uint8_t>(GetParam(), op, {0.5f, 0}, {0.5f, 0}, {0.5f, 0});  // ties
    check_binary<int8_t>(GetParam(), op, {0.02f, -10}, {0.013f, 5}, {0.031f, -128});
    // Huge scales: infinities and inf - inf = NaN (quantized to the zero point).
    check_binary<uint8_t>(GetParam(), op, {3e38f, 100}, {3e38f, 100}, {1.0f, 17});
  }
}

TEST_P(QuantizeTest, QLinearBinaryEveryTailLength) {
  const QParams pa{0.1f, 7}, pb{0.2f, 250}, pc{0.15f, 90};
  std::vector<uint8_t> a(80), b(80);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<uint8_t>(i * 37 + 5);
    b[i] = static_cast<uint8_t>(i * 91 + 13);
  }
  for (size_t n = 0; n <= a.size(); ++n) {
    std::vector<uint8_t> y(n + 1, 0xAB);
    qlinear_binary_u8(GetParam(), QBinaryOp::kAdd, a.data(), 1, pa, b.data(), 1, pb, pc, y.data(),
                      n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], binary_reference(QBinaryOp::kAdd, a[i], pa, b[i], pb, pc)) << n;
    ASSERT_EQ(y[n], 0xAB) << "wrote past the end, n " << n;
  }
}

TEST_P(QuantizeTest, LookupEveryValueAndTail) {
  std::vector<uint8_t> table(256);
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>((i * 73 + 11) ^ 0x5A);
  std::vector<uint8_t> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 7 + 3);
  for (uint8_t flip : {uint8_t{0}, uint8_t{0x80}}) {
    for (size_t n :
         {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{256}, size_t{300}}) {
      std::vector<uint8_t> y(n + 1, 0xCD);
      lookup_8bit(GetParam(), x.data(), n, flip, table.data(), y.data());
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], table[x[i] ^ flip]) << n << " " << i;
      ASSERT_EQ(y[n], 0xCD) << "wrote past the end, n " << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, QuantizeTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
