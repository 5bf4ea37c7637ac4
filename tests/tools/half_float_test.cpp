// float16 / bfloat16 conversions against encodings worked out by hand from IEEE 754.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "half_float.hpp"

namespace infer::cli {
namespace {

TEST(HalfFloat, EncodesExactValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
}

TEST(HalfFloat, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // halfway, even stays
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // halfway, odd rounds up
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);                           // below the overflow midpoint
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                           // rounds to infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);              // half the smallest subnormal: even is 0
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -26)), 0x0001);              // 0.75 of it rounds up
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);              // 1.5 subnormals: tie to even 2
  EXPECT_EQ(float_to_half(1e-10f), 0x0000);
}

TEST(HalfFloat, NanStaysNan) {
  const uint16_t bits = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(bits & 0x7C00, 0x7C00);
  EXPECT_NE(bits & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
}

TEST(HalfFloat, Decodes) {
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(HalfFloat, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float value = half_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    ASSERT_EQ(float_to_half(value), bits) << std::hex << bits;
  }
}

TEST(BFloat16, EncodesAndDecodes) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bfloat16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // halfway, even stays
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // halfway, odd rounds up
  EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bfloat16_to_float(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace infer::cli
