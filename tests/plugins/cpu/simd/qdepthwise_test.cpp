// The depthwise 8-bit convolution (simd/qdepthwise.hpp) of every ISA against its
// definition computed here: int64 sums over the taps inside the image, then qgemm's
// output stage one float operation at a time (bias added in int32, one multiply, the
// clamp to [lo - zero, hi - zero], nearbyint, the zero point). Strides 1, 2 and 3,
// dilation, asymmetric and oversized padding, every output kind.
#include "simd/qdepthwise.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

class QDepthwiseTest : public ::testing::TestWithParam<Isa> {};

QDepthwiseShape shape(int64_t H, int64_t W, int64_t K, int64_t stride, int64_t dil, int64_t pt,
                      int64_t pl, int64_t pb, int64_t pr) {
  QDepthwiseShape s;
  s.H = H, s.W = W, s.KH = K, s.KW = K, s.sh = stride, s.sw = stride, s.dh = dil, s.dw = dil;
  s.pad_top = pt, s.pad_left = pl;
  s.OH = (H + pt + pb - (K - 1) * dil - 1) / stride + 1;
  s.OW = (W + pl + pr - (K - 1) * dil - 1) / stride + 1;
  return s;
}

TEST_P(QDepthwiseTest, MatchesTheDefinition) {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127);
  const std::vector<QDepthwiseShape> shapes = {
      shape(7, 9, 3, 1, 1, 1, 1, 1, 1),   shape(56, 56, 3, 1, 1, 1, 1, 1, 1),
      shape(14, 15, 3, 2, 1, 1, 1, 1, 1), shape(13, 40, 3, 2, 1, 0, 1, 1, 0),
      shape(11, 12, 5, 3, 1, 2, 2, 2, 2), shape(10, 33, 3, 1, 2, 2, 2, 2, 2),
      shape(4, 5, 3, 1, 1, 3, 3, 3, 3),  // padding wider than the kernel reach
      shape(1, 1, 1, 1, 1, 0, 0, 0, 0)};
  for (const QDepthwiseShape& s : shapes) {
    std::vector<uint8_t> x(static_cast<size_t>(s.H * s.W));
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    std::vector<int32_t> w(static_cast<size_t>(s.KH * s.KW));
    for (auto& v : w) v = weight(rng);
    w[0] = 0;  // a zero tap is skipped
    const int32_t xz = 117;
    // The definition's accumulators.
    std::vector<int64_t> acc(static_cast<size_t>(s.OH * s.OW), 0);
    for (int64_t oh = 0; oh < s.OH; ++oh)
      for (int64_t ow = 0; ow < s.OW; ++ow)
        for (int64_t kh = 0; kh < s.KH; ++kh)
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const int64_t ih = oh * s.sh + kh * s.dh - s.pad_top;
            const int64_t iw = ow * s.sw + kw * s.dw - s.pad_left;
            if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
            acc[oh * s.OW + ow] += (x[ih * s.W + iw] - xz) * int64_t{w[kh * s.KW + kw]};
          }
    std::vector<int32_t> scratch(qdepthwise_scratch_ints(s));
    for (auto kind : {QDepthwiseOutput::Kind::kInt32, QDepthwiseOutput::Kind::kUint8,
                      QDepthwiseOutput::Kind::kInt8}) {
      QDepthwiseOutput out;
      out.kind = kind;
      out.bias = -300;
      out.scale = 0.0123f;
      out.out_zero = kind == QDepthwiseOutput::Kind::kUint8 ? 90 : -7;
      const size_t elem = kind == QDepthwiseOutput::Kind::kInt32 ? 4 : 1;
      std::vector<uint8_t> y(acc.size() * elem + 16, 0xEE);
      qdepthwise_plane(GetParam(), s, x.data(), xz, w.data(), out, y.data(), scratch.data());
      for (size_t i = 0; i < acc.size(); ++i) {
        int64_t want;
        int64_t got;
        if (kind == QDepthwiseOutput::Kind::kInt32) {
          want = acc[i];
          int32_t g;
          std::memcpy(&g, y.data() + 4 * i, 4);
          got = g;
        } else {
          const int64_t lo = kind == QDepthwiseOutput::Kind::kUint8 ? 0 : -128;
          const int64_t hi = kind == QDepthwiseOutput::Kind::kUint8 ? 255 : 127;
          volatile float v =
              static_cast<float>(static_cast<int32_t>(acc[i]) + out.bias) * out.scale;
          const float c =
              std::min(std::max(static_cast<float>(v), static_cast<float>(lo - out.out_zero)),
                       static_cast<float>(hi - out.out_zero));
          want = static_cast<int64_t>(std::nearbyint(c)) + out.out_zero;
          got = kind == QDepthwiseOutput::Kind::kUint8 ? int64_t{y[i]}
                                                       : int64_t{static_cast<int8_t>(y[i])};
        }
        ASSERT_EQ(got, want) << "shape " << s.H << "x" << s.W << " k" << s.KH << " s" << s.sh
                             << " d" << s.dh << " kind " << static_cast<int>(kind) << " at " << i;
      }
      for (size_t i = acc.size() * elem; i < y.size(); ++i)
        ASSERT_EQ(y[i], 0xEE) << "wrote past the plane";
    }
  }
}

// A 17x17 kernel (289 taps: more than one group of exact float sums) at the extremes of
// the terms: x - x_zero = -255 and w = 255 everywhere, so a single float sum of all taps
// would pass 2^24 and round.
TEST_P(QDepthwiseTest, ExtremeTermsOverMoreThanOneGroupStayExact) {
  const QDepthwiseShape s = shape(20, 21, 17, 1, 1, 8, 8, 8, 8);
  const std::vector<uint8_t> x(static_cast<size_t>(s.H * s.W), 0);
  const std::vector<int32_t> w(static_cast<size_t>(s.KH * s.KW), 255);
  std::vector<int32_t> scratch(qdepthwise_scratch_ints(s));
  QDepthwiseOutput out;
  out.kind = QDepthwiseOutput::Kind::kInt32;
  std::vector<int32_t> y(static_cast<size_t>(s.OH * s.OW));
  qdepthwise_plane(GetParam(), s, x.data(), 255, w.data(), out, y.data(), scratch.data());
  for (int64_t oh = 0; oh < s.OH; ++oh)
    for (int64_t ow = 0; ow < s.OW; ++ow) {
      // Taps inside the image: rows and columns of the window that are not padding.
      const int64_t rows =
          std::min(s.H, oh - s.pad_top + s.KH) - std::max<int64_t>(0, oh - s.pad_top);
      const int64_t cols =
          std::min(s.W, ow - s.pad_left + s.KW) - std::max<int64_t>(0, ow - s.pad_left);
      ASSERT_EQ(y[static_cast<size_t>(oh * s.OW + ow)], -255 * 255 * rows * cols)
          << oh << "," << ow;
    }
}

INSTANTIATE_TEST_SUITE_P(Isas, QDepthwiseTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
