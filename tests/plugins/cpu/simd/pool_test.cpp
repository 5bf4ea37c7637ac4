// pool2d on every ISA against a naive pool written here from the ONNX definitions.
// MaxPool: the max over the window taps inside the plane (the padding never wins, as
// -inf), seeded by the first such tap in row-major order and replaced only by strictly
// greater values (so a NaN survives only as that first tap), and the lowest float for a
// window with no tap inside the plane. AveragePool: the sum of the taps inside the plane
// (in double here) over their count, or with count_include_pad over the taps inside the
// padded plane [-pad_begin, in + pad_end). Output sizes follow the ONNX formula with
// ceil_mode (a last window starting in the end padding is dropped).
#include "simd/pool.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd {
namespace {

using testing::isa_param_name;
using testing::random_floats;
using testing::StdThreads;
using testing::test_isas;

// One spatial dim of a case: input, kernel, stride, dilation, pads.
struct Dim {
  int64_t in, k, s = 1, d = 1, pb = 0, pe = 0;
};

int64_t out_dim(const Dim& a, bool ceil_mode) {
  const int64_t span = a.in + a.pb + a.pe - ((a.k - 1) * a.d + 1);
  int64_t o = (ceil_mode ? (span + a.s - 1) / a.s : span / a.s) + 1;
  if (ceil_mode && (o - 1) * a.s >= a.in + a.pb) --o;
  return o;
}

Pool2dShape make_shape(PoolKind kind, const Dim& h, const Dim& w, bool ceil_mode, bool include_pad) {
  Pool2dShape s;
  s.kind = kind;
  s.in_h = h.in;
  s.in_w = w.in;
  s.k_h = h.k;
  s.k_w = w.k;
  s.s_h = h.s;
  s.s_w = w.s;
  s.d_h = h.d;
  s.d_w = w.d;
  s.pad_top = h.pb;
  s.pad_bottom = h.pe;
  s.pad_left = w.pb;
  s.pad_right = w.pe;
  s.out_h = out_dim(h, ceil_mode);
  s.out_w = out_dim(w, ceil_mode);
  s.count_include_pad = include_pad;
  return s;
}

std::vector<double> naive(const std::vector<float>& x, int64_t planes, const Pool2dShape& s) {
  std::vector<double> y(static_cast<size_t>(planes * s.out_h * s.out_w));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        float best = std::numeric_limits<float>::lowest();
        bool first = true;
        double sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t a = 0; a < s.k_h; ++a)
          for (int64_t b = 0; b < s.k_w; ++b) {
            const int64_t r = oh * s.s_h - s.pad_top + a * s.d_h;
            const int64_t c = ow * s.s_w - s.pad_left + b * s.d_w;
            const bool in_padded = r >= -s.pad_top && r < s.in_h + s.pad_bottom &&
                                   c >= -s.pad_left && c < s.in_w + s.pad_right;
            padded += in_padded ? 1 : 0;
            if (r < 0 || r >= s.in_h || c < 0 || c >= s.in_w) continue;
            const float v = x[static_cast<size_t>((p * s.in_h + r) * s.in_w + c)];
            if (first || v > best) best = v;
            first = false;
            sum += v;
            ++inside;
          }
        const size_t at = static_cast<size_t>((p * s.out_h + oh) * s.out_w + ow);
        if (s.kind == PoolKind::kMax) {
          y[at] = best;
        } else {
          const int64_t count = s.count_include_pad ? padded : inside;
          y[at] = count == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(count);
        }
      }
  return y;
}

std::string describe(Isa isa, const Pool2dShape& s) {
  auto d = [](int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); };
  return std::string(isa_name(isa)) + (s.kind == PoolKind::kMax ? " max" : " avg") + " in " +
         d(s.in_h, s.in_w) + " k " + d(s.k_h, s.k_w) + " s " + d(s.s_h, s.s_w) + " d " +
         d(s.d_h, s.d_w) + " pads " + std::to_string(s.pad_top) + "," + std::to_string(s.pad_left) +
         "," + std::to_string(s.pad_bottom) + "," + std::to_string(s.pad_right) + " out " +
         d(s.out_h, s.out_w) + (s.count_include_pad ? " include_pad" : "");
}

std::vector<float> run_pool(Isa isa, const Pool2dShape& s, const std::vector<float>& x, int64_t planes) {
  EXPECT_TRUE(pool2d_supports(s));
  std::vector<float> y(static_cast<size_t>(planes * s.out_h * s.out_w), 12345.0f);
  StdThreads threads(3);
  pool2d(isa, threads, s, x.data(), y.data(), static_cast<size_t>(planes));
  return y;
}

// Bitwise for max (it selects an input), NaN matching NaN; relative for average.
void expect_matches(const std::vector<float>& got, const std::vector<double>& want,
                    const Pool2dShape& s, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << ": element " << i << " is " << got[i] << ", expected NaN";
    } else if (s.kind == PoolKind::kMax) {
      const float w = static_cast<float>(want[i]);
      ASSERT_TRUE(std::memcmp(&got[i], &w, sizeof(float)) == 0)
          << what << ": element " << i << " is " << got[i] << ", expected " << w;
    } else if (std::isinf(want[i])) {
      ASSERT_EQ(got[i], want[i]) << what << ": element " << i;
    } else {
      // A float sum of n = k_h * k_w taps of magnitude <= 4 is off by at most about
      // n * 4 * n float ulps of 1 (2^-24 each), and the average by no more than that.
      const double n = static_cast<double>(s.k_h * s.k_w);
      const double tol = n * n * 4.0 * 6e-8 + 1e-6 * std::fabs(want[i]);
      ASSERT_NEAR(got[i], want[i], tol) << what << ": element " << i;
    }
  }
}

class Pool2dTest : public ::testing::TestWithParam<Isa> {
 protected:
  // Runs the case on GetParam() against the naive pool, and against the scalar variant
  // bit for bit (pool.hpp promises the same operations in the same order).
  void check(PoolKind kind, const Dim& h, const Dim& w, bool ceil_mode = false,
             bool include_pad = false, int64_t planes = 2, const std::vector<float>* input = nullptr) {
    const Pool2dShape s = make_shape(kind, h, w, ceil_mode, include_pad);
    ASSERT_GT(s.out_h, 0);
    ASSERT_GT(s.out_w, 0);
    const std::vector<float> x =
        input != nullptr ? *input : random_floats(static_cast<size_t>(planes * h.in * w.in), seed_++, -4, 4);
    const std::string what = describe(GetParam(), s);
    const std::vector<float> got = run_pool(GetParam(), s, x, planes);
    expect_matches(got, naive(x, planes, s), s, what);
    if (GetParam() != Isa::kScalar) {
      // NaN payloads may differ with the order the compiler gives an add's operands.
      const std::vector<float> ref = run_pool(Isa::kScalar, s, x, planes);
      for (size_t i = 0; i < got.size(); ++i) {
        const bool same = std::isnan(ref[i]) ? std::isnan(got[i])
                                             : std::memcmp(&got[i], &ref[i], sizeof(float)) == 0;
        ASSERT_TRUE(same) << what << ": element " << i << " is " << got[i]
                          << ", the scalar variant gives " << ref[i];
      }
    }
  }
  uint32_t seed_ = 1;
};

TEST_P(Pool2dTest, ResNetStemMaxPool) {
  check(PoolKind::kMax, {112, 3, 2, 1, 1, 1}, {112, 3, 2, 1, 1, 1}, false, false, 5);
}

TEST_P(Pool2dTest, OddSizesKernelsAndStrides) {
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage})
    for (int64_t k : {1, 2, 3, 5})
      for (int64_t st : {1, 2, 3})
        for (int64_t w : {int64_t{1}, int64_t{7}, int64_t{17}, int64_t{40}, int64_t{113}}) {
          if (w < k) continue;
          check(kind, {9, k, st}, {w, k, st});
          check(kind, {1, 1, 1}, {w, k, st}, false, false, 3);
        }
}

// Calls f(kind, include_pad, stride, width) for both pools, count_include_pad off and
// on, strides 1 to 3 and the given input widths.
template <typename F>
void sweep(std::initializer_list<int64_t> widths, F&& f) {
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage})
    for (bool include_pad : {false, true})
      for (int64_t st : {1, 2, 3})
        for (int64_t w : widths) f(kind, include_pad, st, w);
}

TEST_P(Pool2dTest, PadsSymmetricAsymmetricAndRectangular) {
  sweep({5, 17, 67}, [&](PoolKind kind, bool include_pad, int64_t st, int64_t w) {
    check(kind, {11, 3, st, 1, 1, 1}, {w, 3, st, 1, 1, 1}, false, include_pad);
    check(kind, {10, 2, st, 1, 0, 1}, {w, 4, st, 1, 3, 0}, false, include_pad);
    check(kind, {7, 5, st, 1, 2, 0}, {w, 2, st, 1, 0, 1}, false, include_pad);
  });
}

TEST_P(Pool2dTest, Dilations) {
  sweep({7, 33, 113}, [&](PoolKind kind, bool include_pad, int64_t st, int64_t w) {
    check(kind, {13, 3, st, 2, 1, 1}, {w, 3, st, 2, 2, 2}, false, include_pad);
    check(kind, {12, 2, st, 3, 0, 0}, {w, 2, st, 3, 1, 1}, false, include_pad);
  });
}

TEST_P(Pool2dTest, CeilMode) {
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage})
    for (bool include_pad : {false, true})
      for (int64_t w : {int64_t{6}, int64_t{16}, int64_t{33}, int64_t{50}}) {
        check(kind, {13, 3, 2, 1, 1, 1}, {w, 3, 2, 1, 1, 1}, true, include_pad);
        check(kind, {8, 2, 2}, {w, 2, 2}, true, include_pad);
        check(kind, {15, 3, 3, 1, 0, 1}, {w, 3, 3, 1, 0, 1}, true, include_pad);
        check(kind, {14, 3, 2, 2, 1, 0}, {w, 2, 3, 1, 0, 0}, true, include_pad);
      }
}

TEST_P(Pool2dTest, WideRowsAllBlockWidths) {
  // Every interior width from 1 to 70 columns, so each ISA's full blocks, masked tails
  // and the "full loads would pass the row end" fallback all run, at strides 1, 2, 3.
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage})
    for (int64_t st : {1, 2, 3})
      for (int64_t ow = 1; ow <= 70; ++ow) check(kind, {4, 3, 2}, {(ow - 1) * st + 3, 3, st}, false, false, 1);
}

TEST_P(Pool2dTest, WindowsEntirelyInPadding) {
  // Pads as large as the kernel leave windows with no input tap: max gives the lowest
  // float, average 0 with count_include_pad and NaN (nothing to count) without.
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage})
    for (bool include_pad : {false, true}) {
      check(kind, {4, 3, 1, 1, 3, 3}, {4, 3, 1, 1, 3, 3}, false, include_pad);
      check(kind, {11, 3, 1, 1, 1, 1}, {1, 3, 1, 1, 1, 1}, false, include_pad);
      // A dilated window that straddles a 1-wide input.
      check(kind, {3, 2, 1, 3, 2, 2}, {1, 2, 1, 3, 2, 2}, false, include_pad);
    }
}

TEST_P(Pool2dTest, MaxPaddingActsAsMinusInfinity) {
  // All-negative inputs with wide pads: a zero-padded pool would return 0 at the border.
  const Dim h{9, 5, 2, 1, 2, 2}, w{37, 5, 2, 1, 2, 2};
  std::vector<float> x = random_floats(static_cast<size_t>(2 * 9 * 37), 7, -9, -1);
  check(PoolKind::kMax, h, w, false, false, 2, &x);
  const Pool2dShape s = make_shape(PoolKind::kMax, h, w, false, false);
  for (float v : run_pool(GetParam(), s, x, 2)) ASSERT_LT(v, -1.0f + 1e-6f);
  // A plane of -inf pools to -inf everywhere (not the lowest float, not 0).
  const float ninf = -std::numeric_limits<float>::infinity();
  std::fill(x.begin(), x.end(), ninf);
  for (float v : run_pool(GetParam(), s, x, 2)) ASSERT_EQ(v, ninf);
}

TEST_P(Pool2dTest, NanAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage})
    for (int64_t st : {1, 2, 3}) {
      for (int64_t w : {int64_t{71}, int64_t{36}}) {
        std::vector<float> x = random_floats(static_cast<size_t>(3 * 20 * w), 300 + static_cast<uint32_t>(st), -4, 4);
        for (size_t i = 0; i < x.size(); i += 7) x[i] = -inf;
        for (size_t i = 3; i < x.size(); i += 11) x[i] = nan;
        for (size_t i = 5; i < x.size(); i += 13) x[i] = inf;
        check(kind, {20, 3, st, 1, 1, 1}, {w, 3, st, 1, 1, 1}, false, false, 3, &x);
        check(kind, {20, 2, st}, {w, 2, st}, false, false, 3, &x);
      }
    }
}

TEST_P(Pool2dTest, LargeKernelAndCountIncludePadDivisors) {
  // More kernel rows than pool.cpp keeps on its stack, and the AveragePool divisor on
  // every border (corners, edges) with and without the pads counted.
  check(PoolKind::kMax, {40, 20, 1, 1, 3, 3}, {21, 5, 2, 1, 2, 2}, false, false, 2);
  check(PoolKind::kAverage, {40, 20, 1, 1, 3, 3}, {21, 5, 2, 1, 2, 2}, false, true, 2);
  for (bool include_pad : {false, true}) {
    std::vector<float> ones(static_cast<size_t>(2 * 6 * 19), 1.0f);
    check(PoolKind::kAverage, {6, 3, 1, 1, 1, 2}, {19, 3, 1, 1, 2, 1}, false, include_pad, 2, &ones);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Pool2dTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd
