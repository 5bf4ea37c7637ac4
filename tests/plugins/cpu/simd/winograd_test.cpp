// Winograd F(4x4, 3x3) of every ISA against the direct double-precision definition
// (conv_test_reference, conv_test.cpp) on many shapes: channels 1 to 64, images smaller
// than a tile and not multiples of 4, paddings 0/1/asymmetric, batches, bias, residual,
// activation, threads. The error is measured relative to the largest |y| of each output
// (Winograd's rounding error scales with the magnitudes summed, not with each element);
// the worst seen is printed, and the bound asserted is 2e-5 (measured: see
// plugins/cpu/simd/winograd.hpp and the final report).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "simd/conv.hpp"
#include "simd/winograd.hpp"
#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {

namespace {

// max |got - want| / max |want|
double scaled_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::fmax(scale, std::fabs(want[i]));
    const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
    worst = std::isnan(got[i]) ? 1e30 : std::fmax(worst, e);
  }
  return worst / scale;
}

class WinogradTest : public ::testing::TestWithParam<Isa> {};

TEST_P(WinogradTest, MatchesDirectDefinitionOnManyShapes) {
  const Isa isa = GetParam();
  uint32_t seed = 11;
  double worst = 0;
  int cases = 0;
  for (int64_t C : {1, 3, 17, 64})
    for (int64_t M : {1, 17, 32})
      for (int64_t size : {1, 4, 7, 13})
        for (int64_t pad : {0, 1, 2}) {
          const int64_t pe = pad == 2 ? 0 : pad;  // pad 2 means asymmetric (2 before, 0 after)
          const int64_t H = size + 2, W = size + 3;
          const ConvShape s = conv_test_shape(1 + (size % 2), C, M, 1, {H, W}, {3, 3}, {1, 1}, {1, 1},
                                              {pad, pad}, {pe, pe});
          ASSERT_TRUE(winograd_supports(s));
          const auto x = random_floats(static_cast<size_t>(s.batch * C * s.in_size()), seed++);
          const auto w = random_floats(static_cast<size_t>(M * C * 9), seed++);
          const auto b = random_floats(static_cast<size_t>(M), seed++);
          const auto want = conv_test_reference(s, x, w, b.data(), nullptr, Act{});
          const auto got =
              conv_test_run(isa, SerialThreads(), s, ConvAlgo::kWinograd, x, w, b.data(), nullptr, Act{});
          const double err = scaled_error(got, want);
          worst = std::fmax(worst, err);
          EXPECT_LE(err, 2e-5) << "C " << C << " M " << M << " size " << size << " pad " << pad;
          ++cases;
        }
  std::cout << "[ winograd ] " << isa_name(isa) << ": max error / max |y| over " << cases
            << " shapes: " << worst << "\n";
}

TEST_P(WinogradTest, ResNetLikeShapeWithResidualActivationAndThreads) {
  const Isa isa = GetParam();
  // Several tile-row blocks per image, so the block split and the outer parallel loop run.
  const ConvShape s = conv_test_shape(2, 64, 40, 1, {30, 29}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  const auto x = random_floats(static_cast<size_t>(s.batch * 64 * s.in_size()), 41);
  const auto w = random_floats(static_cast<size_t>(40 * 64 * 9), 42);
  const auto b = random_floats(40, 43);
  const auto z = random_floats(static_cast<size_t>(s.batch * 40 * s.out_size()), 44);
  const Act relu{ActKind::kRelu, 0, 0};
  const auto want = conv_test_reference(s, x, w, b.data(), z.data(), relu);
  const auto serial = conv_test_run(isa, SerialThreads(), s, ConvAlgo::kWinograd, x, w, b.data(), z.data(), relu);
  const double err = scaled_error(serial, want);
  EXPECT_LE(err, 2e-5);
  std::cout << "[ winograd ] " << isa_name(isa) << ": 64->40 channels 30x29, error / max |y| " << err << "\n";
  for (int workers : {1, 2, 3}) {
    const auto got = conv_test_run(isa, StdThreads(workers), s, ConvAlgo::kWinograd, x, w, b.data(), z.data(), relu);
    EXPECT_EQ(got, serial) << workers << " threads";
  }
}

TEST_P(WinogradTest, RowsOfMoreThan16TilesWithResidual) {
  const Isa isa = GetParam();
  // Output rows of 71 and 66 columns (18 and 17 tiles, the last one partial): the tile
  // gather and the output scatter take several vector steps per row, the last masked.
  for (const int64_t W : {71, 66}) {
    const ConvShape s = conv_test_shape(1, 8, 5, 1, {6, W}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
    const auto x = random_floats(static_cast<size_t>(8 * s.in_size()), 51);
    const auto w = random_floats(static_cast<size_t>(5 * 8 * 9), 52);
    const auto b = random_floats(5, 53);
    const auto z = random_floats(static_cast<size_t>(5 * s.out_size()), 54);
    const Act relu{ActKind::kRelu, 0, 0};
    const auto want = conv_test_reference(s, x, w, b.data(), z.data(), relu);
    const auto got = conv_test_run(isa, SerialThreads(), s, ConvAlgo::kWinograd, x, w, b.data(), z.data(), relu);
    EXPECT_LE(scaled_error(got, want), 2e-5) << "W " << W;
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, WinogradTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
