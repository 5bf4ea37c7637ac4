// The depthwise kernel (group == C == M) of every ISA against the direct double-precision
// definition (conv_test_reference, conv_test.cpp): kernels 1x1 to 7x7 (square and not),
// strides 1 to 3, dilations 1 and 2, asymmetric paddings, widths that exercise the
// vector main loop and every tail length, bias, residual and activation, threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "simd/conv.hpp"
#include "simd/depthwise.hpp"
#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {

namespace {

class DepthwiseTest : public ::testing::TestWithParam<Isa> {};

// Random input, weights, bias and residual for `s`.
struct Operands {
  std::vector<float> x, w, b, z;
};
Operands random_operands(const ConvShape& s, uint32_t& seed) {
  Operands o;
  o.x = random_floats(static_cast<size_t>(s.batch * s.in_channels * s.in_size()), seed++);
  o.w = random_floats(static_cast<size_t>(s.out_channels * s.kernel_size()), seed++);
  o.b = random_floats(static_cast<size_t>(s.out_channels), seed++);
  o.z = random_floats(static_cast<size_t>(s.batch * s.out_channels * s.out_size()), seed++);
  return o;
}

TEST_P(DepthwiseTest, MatchesDirectDefinition) {
  const Isa isa = GetParam();
  uint32_t seed = 7;
  int cases = 0;
  for (int64_t C : {1, 3, 17})
    for (int64_t k : {1, 3, 5, 7})
      for (int64_t stride : {1, 2, 3})
        for (int64_t dil : {1, 2})
          for (int64_t width : {1, 7, 17, 40, 113}) {
            const int64_t span = dil * (k - 1) + 1;
            const int64_t pb = k / 2, pe = (k - 1) / 2 + (width % 2);
            if (width + pb + pe < span) continue;
            const ConvShape s = conv_test_shape(1, C, C, C, {5 + k, width}, {k, k}, {stride, stride},
                                                {dil, dil}, {pb, pe}, {pe, pb});
            if (s.out[0] <= 0 || s.out[1] <= 0) continue;
            ASSERT_TRUE(depthwise_supports(s));
            const auto x = random_floats(static_cast<size_t>(C * s.in_size()), seed++);
            const auto w = random_floats(static_cast<size_t>(C * k * k), seed++);
            const auto b = random_floats(static_cast<size_t>(C), seed++);
            const auto want = conv_test_reference(s, x, w, b.data(), nullptr, Act{});
            const auto got = conv_test_run(isa, SerialThreads(), s, ConvAlgo::kDepthwise, x, w, b.data(),
                                           nullptr, Act{});
            expect_close(got, want, 1e-5, 1e-5,
                         "C " + std::to_string(C) + " k " + std::to_string(k) + " stride " +
                             std::to_string(stride) + " dilation " + std::to_string(dil) + " width " +
                             std::to_string(width));
            ++cases;
          }
  EXPECT_GT(cases, 300);
}

// Every plane height from 1 to 10 rows for the unrolled 3x3 and 5x5 kernels at vertical
// stride 1 and 2: whole blocks of rows (4, or 2 for 5x5) and every number of rows left
// after them, with residual and Clip in the epilogue.
TEST_P(DepthwiseTest, EveryPlaneHeightOfTheUnrolledKernels) {
  const Isa isa = GetParam();
  uint32_t seed = 101;
  for (int64_t k : {3, 5})
    for (int64_t stride : {1, 2})
      for (int64_t out_h = 1; out_h <= 10; ++out_h) {
        const int64_t pad = k / 2, in_h = (out_h - 1) * stride + 1;  // "same" rows
        const ConvShape s = conv_test_shape(1, 5, 5, 5, {in_h, 9}, {k, k}, {stride, 1}, {1, 1},
                                            {pad, pad}, {pad, pad});
        ASSERT_EQ(s.out[0], out_h);
        const Operands o = random_operands(s, seed);
        const Act clip{ActKind::kClip, -0.3f, 0.4f};
        const auto want = conv_test_reference(s, o.x, o.w, o.b.data(), o.z.data(), clip);
        const auto got = conv_test_run(isa, SerialThreads(), s, ConvAlgo::kDepthwise, o.x, o.w,
                                       o.b.data(), o.z.data(), clip);
        expect_close(got, want, 1e-5, 1e-5,
                     "k " + std::to_string(k) + " stride " + std::to_string(stride) +
                         " output rows " + std::to_string(out_h));
      }
}

TEST_P(DepthwiseTest, NonSquareKernelsResidualActivationAndThreads) {
  const Isa isa = GetParam();
  const std::vector<ConvShape> shapes = {
      conv_test_shape(2, 64, 64, 64, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
      conv_test_shape(1, 32, 32, 32, {28, 33}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      conv_test_shape(1, 3, 3, 3, {9, 35}, {2, 5}, {1, 3}, {2, 1}, {0, 3}, {1, 0}),
      conv_test_shape(1, 5, 5, 5, {11, 7}, {7, 1}, {2, 1}, {1, 1}, {3, 0}, {2, 0}),
  };
  const Act act{ActKind::kClip, 0.0f, 0.6f};
  uint32_t seed = 300;
  for (const ConvShape& s : shapes) {
    const auto [x, w, b, z] = random_operands(s, seed);
    const auto want = conv_test_reference(s, x, w, b.data(), z.data(), act);
    const auto serial =
        conv_test_run(isa, SerialThreads(), s, ConvAlgo::kDepthwise, x, w, b.data(), z.data(), act);
    expect_close(serial, want, 1e-5, 1e-5, "depthwise with residual and clip");
    for (int workers : {2, 3}) {
      const auto got =
          conv_test_run(isa, StdThreads(workers), s, ConvAlgo::kDepthwise, x, w, b.data(), z.data(), act);
      EXPECT_EQ(got, serial) << workers << " threads";
    }
  }
}

// Relu and Clip run in registers, the other activations over the finished plane; an
// in-place residual (y == residual, as the planner may give FusedConv) is read before
// each store. Shapes: the MobileNetV2 ones (every row in the 4-row blocks and the rest),
// 5x5 stride 2 and a 7-tall plane.
TEST_P(DepthwiseTest, ActivationsAndInPlaceResidual) {
  const Isa isa = GetParam();
  const std::vector<ConvShape> shapes = {
      conv_test_shape(1, 8, 8, 8, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
      conv_test_shape(1, 6, 6, 6, {28, 28}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      conv_test_shape(1, 4, 4, 4, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
      conv_test_shape(2, 3, 3, 3, {19, 37}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}),
  };
  const std::vector<Act> acts = {Act{ActKind::kRelu}, Act{ActKind::kClip, -0.2f, 0.3f},
                                 Act{ActKind::kSigmoid}, Act{ActKind::kHardSwish}};
  uint32_t seed = 900;
  for (const ConvShape& s : shapes) {
    ASSERT_TRUE(depthwise_supports(s));
    const auto [x, w, b, z] = random_operands(s, seed);
    for (const Act& act : acts) {
      const auto want = conv_test_reference(s, x, w, b.data(), z.data(), act);
      std::vector<float> y = z;  // the residual, overwritten in place
      depthwise_conv2d(isa, StdThreads(2), s, w.data(), x.data(), b.data(), y.data(), act, y.data());
      expect_close(y, want, 1e-5, 1e-5,
                   "in-place residual, activation " + std::to_string(static_cast<int>(act.kind)) +
                       ", out " + std::to_string(s.out[0]) + "x" + std::to_string(s.out[1]));
    }
  }
}

// NaN inputs follow the unfused kernels: Relu maps NaN to 0, Clip passes it through.
TEST_P(DepthwiseTest, NanThroughReluAndClip) {
  const Isa isa = GetParam();
  const ConvShape s = conv_test_shape(1, 1, 1, 1, {3, 20}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0});
  std::vector<float> x(60, 1.0f);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[33] = -4.0f;
  const std::vector<float> w = {2.0f};
  std::vector<float> y(60);
  depthwise_conv2d(isa, SerialThreads(), s, w.data(), x.data(), nullptr, nullptr, Act{ActKind::kRelu}, y.data());
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_EQ(y[33], 0.0f);
  EXPECT_EQ(y[0], 2.0f);
  depthwise_conv2d(isa, SerialThreads(), s, w.data(), x.data(), nullptr, nullptr,
                   Act{ActKind::kClip, -1.0f, 1.5f}, y.data());
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[33], -1.0f);
  EXPECT_EQ(y[0], 1.5f);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, DepthwiseTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
