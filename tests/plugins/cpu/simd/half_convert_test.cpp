// float16 <-> float32 runs (simd/half_convert.hpp) of every ISA against an independent
// definition in double arithmetic (a half is (1024 + m) * 2^(e - 25), or m * 2^-24 below
// the normals; a float rounds to the nearest multiple of its half ulp, ties to even) and
// the NaN bits the plugin's scalar conversions define: every one of the 65536 halves, a
// sweep of float bit patterns over every exponent, the rounding ties, every tail length.
#include "simd/half_convert.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

class HalfConvertTest : public ::testing::TestWithParam<Isa> {};

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
// The value of finite half bits h.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

// The half bits nearest to finite f (ties to even), infinity past the largest half.
uint16_t nearest_half(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00;  // halfway past 65504 (odd): rounds to infinity
  if (a == 0) return sign;
  const int e = std::max(static_cast<int>(std::floor(std::log2(a))), -14);
  const double ulp = std::ldexp(1.0, e - 10);
  const double q = a / ulp, r = std::floor(q), frac = q - r;
  double n = frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0) ? r + 1 : r;
  const double v = n * ulp;  // the rounded magnitude, perhaps one binade up
  if (v < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(v / std::ldexp(1.0, -24));
  const int e2 = static_cast<int>(std::floor(std::log2(v)));
  const int m = static_cast<int>(v / std::ldexp(1.0, e2 - 10)) - 1024;
  return sign | static_cast<uint16_t>(((e2 + 15) << 10) | m);
}

// The expected float of half bits h: the exact value, or for a NaN its sign, an all-ones
// exponent and its payload in the top mantissa bits, not quieted.
uint32_t want_float(uint16_t h) {
  if ((h & 0x7fff) > 0x7c00)
    return (static_cast<uint32_t>(h & 0x8000) << 16) | 0x7f800000u |
           (static_cast<uint32_t>(h & 0x3ff) << 13);
  if ((h & 0x7fff) == 0x7c00) return (static_cast<uint32_t>(h & 0x8000) << 16) | 0x7f800000u;
  return bits_of(static_cast<float>(half_value(h)));
}

// The expected half of float bits u: round to nearest even, or sign | 0x7e00 for a NaN.
uint16_t want_half(uint32_t u) {
  const float f = float_of(u);
  if (f != f) return static_cast<uint16_t>(((u >> 16) & 0x8000) | 0x7e00);
  if (std::isinf(f)) return static_cast<uint16_t>(((u >> 16) & 0x8000) | 0x7c00);
  return nearest_half(f);
}

TEST_P(HalfConvertTest, EveryHalfToFloat) {
  const Isa isa = GetParam();
  std::vector<uint16_t> x(65536);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(i);
  std::vector<float> y(x.size(), -1.0f);
  const size_t done = half_to_float_run(isa, x.data(), y.data(), x.size());
  ASSERT_EQ(done, x.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bits_of(y[i]), want_float(x[i])) << "half 0x" << std::hex << i;
}

TEST_P(HalfConvertTest, FloatsToHalfRoundToNearestEven) {
  const Isa isa = GetParam();
  std::vector<uint32_t> u;
  for (uint64_t v = 0; v <= 0xffffffffull; v += 65521)
    u.push_back(static_cast<uint32_t>(v));  // every exponent
  // Ties and edges: halfway between halves (even and odd), the largest finite half and
  // the value that rounds to infinity, the smallest subnormal and half of it, NaNs with
  // payloads, infinities, zeros, float subnormals.
  for (uint32_t s : {0u, 0x80000000u})
    for (uint32_t v :
         {0x3f801000u, 0x3f803000u, 0x3f800fffu, 0x477fe000u, 0x477ff000u, 0x477fefffu, 0x33800000u,
          0x33000000u, 0x33000001u, 0x387fc000u, 0x38800000u, 0x7f800000u, 0x7fc00000u, 0x7f800001u,
          0x7fbfffffu, 0x7fffffffu, 0x00000000u, 0x00000001u, 0x007fffffu})
      u.push_back(s | v);
  std::vector<float> x(u.size());
  for (size_t i = 0; i < u.size(); ++i) x[i] = float_of(u[i]);
  std::vector<uint16_t> y(x.size(), 0xdead);
  const size_t done = float_to_half_run(isa, x.data(), y.data(), x.size());
  ASSERT_EQ(done, x.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(y[i], want_half(u[i])) << "float bits 0x" << std::hex << u[i];
}

// Lengths 1 to 40: whole vectors and every tail; nothing past n is written.
TEST_P(HalfConvertTest, EveryTailLengthStaysInside) {
  const Isa isa = GetParam();
  for (size_t n = 1; n <= 40; ++n) {
    std::vector<float> x(n + 8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 3.0f;
    std::vector<uint16_t> h(n + 8, 0xbeef);
    ASSERT_EQ(float_to_half_run(isa, x.data(), h.data(), n), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(h[i], want_half(bits_of(x[i]))) << "n " << n << " element " << i;
    for (size_t i = n; i < h.size(); ++i)
      ASSERT_EQ(h[i], 0xbeef) << "n " << n << " wrote element " << i;
    std::vector<float> back(n + 8, 42.0f);
    ASSERT_EQ(half_to_float_run(isa, h.data(), back.data(), n), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(bits_of(back[i]), want_float(h[i])) << "n " << n << " element " << i;
    for (size_t i = n; i < back.size(); ++i)
      ASSERT_EQ(back[i], 42.0f) << "n " << n << " wrote element " << i;
  }
}

// The ISAs with conversion instructions (AVX2 with F16C, AVX-512) that this machine runs.
std::vector<Isa> converting_isas() {
  std::vector<Isa> out;
  for (Isa isa : test_isas())
    if (isa == Isa::kAvx2 || isa == Isa::kAvx512) out.push_back(isa);
  return out;
}

// The others convert nothing and say so: the Cast kernel then converts every element itself.
TEST(HalfConvert, OtherIsasLeaveTheWholeRunToTheCaller) {
  const uint16_t h[3] = {0x3c00, 0x4000, 0x4200};
  float f[3] = {0, 0, 0};
  uint16_t back[3] = {0, 0, 0};
  int checked = 0;
  for (Isa isa : test_isas()) {
    if (isa == Isa::kAvx2 || isa == Isa::kAvx512) continue;
    EXPECT_EQ(half_to_float_run(isa, h, f, 3), 0u) << isa_name(isa);
    EXPECT_EQ(float_to_half_run(isa, f, back, 3), 0u) << isa_name(isa);
    EXPECT_EQ(f[0], 0.0f);
    ++checked;
  }
  EXPECT_GE(checked, 1);  // scalar always runs
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HalfConvertTest);  // a CPU without AVX2
INSTANTIATE_TEST_SUITE_P(VectorIsas, HalfConvertTest, ::testing::ValuesIn(converting_isas()),
                         isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
