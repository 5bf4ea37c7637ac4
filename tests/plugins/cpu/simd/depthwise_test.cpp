// The depthwise kernel (group == C == M) of every ISA against the direct double-precision
// definition (conv_test_reference, conv_test.cpp): kernels 1x1 to 7x7 (square and not),
// strides 1 to 3, dilations 1 and 2, asymmetric paddings, widths that exercise the
// vector main loop and every tail length, bias, residual and activation, threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simd/conv.hpp"
#include "simd/depthwise.hpp"
#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {

namespace {

class DepthwiseTest : public ::testing::TestWithParam<Isa> {};

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
    const auto x = random_floats(static_cast<size_t>(s.batch * s.in_channels * s.in_size()), seed++);
    const auto w = random_floats(static_cast<size_t>(s.out_channels * s.kernel_size()), seed++);
    const auto b = random_floats(static_cast<size_t>(s.out_channels), seed++);
    const auto z = random_floats(static_cast<size_t>(s.batch * s.out_channels * s.out_size()), seed++);
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

INSTANTIATE_TEST_SUITE_P(AllIsas, DepthwiseTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
