// Row-wise Softmax/LogSoftmax (simd/softmax.hpp) of every ISA against the definition
// evaluated in double: every length 1..67 plus long rows, rows with -inf entries, large
// offsets (the max subtraction), in place, and the threaded rows with real threads.
#include "simd/softmax.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> reference(const std::vector<float>& x, bool log) {
  double mx = -1e300;
  for (float v : x) mx = std::max<double>(mx, v);
  double sum = 0;
  for (float v : x) sum += std::exp(static_cast<double>(v) - mx);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(x[i]) - mx;
    y[i] = static_cast<float>(log ? d - std::log(sum) : std::exp(d) / sum);
  }
  return y;
}

class SoftmaxTest : public ::testing::TestWithParam<Isa> {};

TEST_P(SoftmaxTest, EveryLength) {
  const Isa isa = GetParam();
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 67; ++n) lengths.push_back(n);
  for (size_t n : {128, 255, 512, 768, 3001}) lengths.push_back(n);
  for (size_t n : lengths) {
    for (bool log : {false, true}) {
      const std::vector<float> x = random_floats(n, static_cast<uint32_t>(n), -8.0f, 8.0f);
      std::vector<float> y(n + 16, 99.0f);
      softmax_row(isa, x.data(), y.data(), n, log);
      for (size_t i = n; i < n + 16; ++i) ASSERT_EQ(y[i], 99.0f) << "wrote past n=" << n;
      y.resize(n);
      const std::string what = std::string(log ? "log_softmax" : "softmax") + " n=" + std::to_string(n);
      // Softmax: relative to each value (floor 1e-12 for the tiny ones); LogSoftmax: the
      // absolute error of a difference of O(10) numbers.
      expect_close(y, reference(x, log), log ? 1e-6 : 2e-6, log ? 4e-6 : 1e-12, what);
      std::vector<float> inplace = x;
      softmax_row(isa, inplace.data(), inplace.data(), n, log);
      EXPECT_EQ(inplace, y) << what << " in place";
    }
  }
}

TEST_P(SoftmaxTest, LargeOffsetsAndInfinities) {
  const Isa isa = GetParam();
  // Values near 1e4 would overflow exp without the max subtraction.
  std::vector<float> x = random_floats(37, 3, 9990.0f, 10000.0f);
  std::vector<float> y(x.size());
  softmax_row(isa, x.data(), y.data(), x.size());
  expect_close(y, reference(x, false), 5e-6, 1e-30, "offset 1e4");
  // -inf entries (a mask) get exactly 0 and leave the others as without them.
  std::vector<float> m = {1.0f, -kInf, 2.0f, -kInf, 0.5f, 3.0f, -kInf, -1.0f, 2.5f, -kInf,
                          0.0f, 1.5f, -kInf, 4.0f, -2.0f, -kInf, 1.0f, 0.25f, -kInf};
  std::vector<float> ym(m.size());
  softmax_row(isa, m.data(), ym.data(), m.size());
  std::vector<float> finite;
  for (float v : m)
    if (v != -kInf) finite.push_back(v);
  const std::vector<float> want_finite = reference(finite, false);
  size_t k = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == -kInf) {
      EXPECT_EQ(ym[i], 0.0f) << i;
    } else {
      EXPECT_NEAR(ym[i], want_finite[k], 2e-6 * want_finite[k]) << i;
      ++k;
    }
  }
  // One +inf: the exponentials are inf - inf = NaN, as in the reference kernel.
  std::vector<float> pinf = {1.0f, kInf, 2.0f};
  softmax_row(isa, pinf.data(), pinf.data(), pinf.size());
  EXPECT_TRUE(std::isnan(pinf[1]));
  // A single element is 1 (LogSoftmax 0).
  float one = -123.0f, out = 0;
  softmax_row(isa, &one, &out, 1);
  EXPECT_EQ(out, 1.0f);
  softmax_row(isa, &one, &out, 1, true);
  EXPECT_EQ(out, 0.0f);
}

TEST_P(SoftmaxTest, ThreadedRows) {
  const Isa isa = GetParam();
  for (size_t n : {size_t{7}, size_t{128}, size_t{512}}) {
    const size_t rows = 301;
    const std::vector<float> x = random_floats(rows * n, 11, -5.0f, 5.0f);
    std::vector<float> y(rows * n);
    softmax_rows(isa, StdThreads(3), x.data(), y.data(), rows, n);
    for (size_t r = 0; r < rows; r += 37) {
      const std::vector<float> row(x.begin() + r * n, x.begin() + (r + 1) * n);
      const std::vector<float> got(y.begin() + r * n, y.begin() + (r + 1) * n);
      expect_close(got, reference(row, false), 2e-6, 1e-12, "row " + std::to_string(r));
    }
    // The same rows one at a time give identical bits.
    std::vector<float> serial(rows * n);
    for (size_t r = 0; r < rows; ++r) softmax_row(isa, x.data() + r * n, serial.data() + r * n, n);
    EXPECT_EQ(serial, y) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, SoftmaxTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
