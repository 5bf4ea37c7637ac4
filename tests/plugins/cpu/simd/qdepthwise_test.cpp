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
#include <limits>
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

// The definition's int64 sums of one plane.
std::vector<int64_t> reference_sums(const QDepthwiseShape& s, const uint8_t* x, int32_t xz,
                                    const int32_t* w) {
  std::vector<int64_t> acc(static_cast<size_t>(s.OH * s.OW), 0);
  for (int64_t oh = 0; oh < s.OH; ++oh)
    for (int64_t ow = 0; ow < s.OW; ++ow)
      for (int64_t kh = 0; kh < s.KH; ++kh)
        for (int64_t kw = 0; kw < s.KW; ++kw) {
          const int64_t ih = oh * s.sh + kh * s.dh - s.pad_top;
          const int64_t iw = ow * s.sw + kw * s.dw - s.pad_left;
          if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
          acc[static_cast<size_t>(oh * s.OW + ow)] +=
              (x[ih * s.W + iw] - xz) * int64_t{w[kh * s.KW + kw]};
        }
  return acc;
}

// qgemm's output stage of one sum, one float operation at a time.
int64_t reference_quantized(int64_t acc, int32_t bias, float scale, int32_t out_zero,
                            QDepthwiseOutput::Kind kind) {
  const int64_t lo = kind == QDepthwiseOutput::Kind::kUint8 ? 0 : -128;
  const int64_t hi = kind == QDepthwiseOutput::Kind::kUint8 ? 255 : 127;
  volatile float v = static_cast<float>(static_cast<int32_t>(acc) + bias) * scale;
  const float c = std::min(std::max(static_cast<float>(v), static_cast<float>(lo - out_zero)),
                           static_cast<float>(hi - out_zero));
  return static_cast<int64_t>(std::nearbyint(c)) + out_zero;
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
    const std::vector<int64_t> acc = reference_sums(s, x.data(), xz, w.data());
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
          want = reference_quantized(acc[i], out.bias, out.scale, out.out_zero, kind);
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

// The channel-blocked kernel: blocks of 1..16 channels with their own weights, bias and
// scale, the output rows in the kernel's bands and in bands of one and three rows, every
// output kind. It exists on AVX-512 only; elsewhere it says so.
TEST_P(QDepthwiseTest, ChannelBlocksMatchTheDefinition) {
  const Isa isa = GetParam();
  const QDepthwiseShape probe = shape(7, 7, 3, 1, 1, 1, 1, 1, 1);
  if (isa != Isa::kAvx512) {
    EXPECT_FALSE(qdepthwise_block_supported(isa, probe)) << isa_name(isa);
    return;
  }
  ASSERT_TRUE(qdepthwise_block_supported(isa, probe));
  EXPECT_FALSE(qdepthwise_block_supported(isa, shape(20, 20, 7, 1, 1, 3, 3, 3, 3)))
      << "49 taps are more than a block's exact sums allow";
  std::mt19937 rng(47);
  std::uniform_int_distribution<int> byte(0, 255), weight(-255, 255), bias_d(-2000, 2000);
  std::uniform_real_distribution<float> scale_d(0.001f, 0.05f);
  const std::vector<QDepthwiseShape> shapes = {
      shape(7, 7, 3, 1, 1, 1, 1, 1, 1),    shape(14, 14, 3, 2, 1, 1, 1, 1, 1),
      shape(112, 112, 3, 1, 1, 1, 1, 1, 1), shape(13, 40, 3, 2, 1, 0, 1, 1, 0),
      shape(11, 12, 5, 3, 1, 2, 2, 2, 2),   shape(10, 33, 3, 1, 2, 2, 2, 2, 2),
      shape(4, 5, 3, 1, 1, 3, 3, 3, 3),     shape(1, 1, 1, 1, 1, 0, 0, 0, 0),
      shape(9, 21, 5, 1, 1, 2, 2, 2, 2),    shape(15, 17, 5, 2, 1, 2, 2, 2, 2)};
  for (const QDepthwiseShape& s : shapes)
    for (int count : {16, 5, 1}) {
      const int64_t plane = s.H * s.W, oplane = s.OH * s.OW, taps = s.KH * s.KW;
      std::vector<uint8_t> x(static_cast<size_t>(count * plane));
      for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
      std::vector<int32_t> w(static_cast<size_t>(count * taps)), bias(static_cast<size_t>(count));
      std::vector<float> scale(static_cast<size_t>(count));
      for (auto& v : w) v = weight(rng);
      for (auto& v : bias) v = bias_d(rng);
      for (auto& v : scale) v = scale_d(rng);
      const int32_t xz = 131;
      std::vector<std::vector<int64_t>> acc;
      for (int c = 0; c < count; ++c)
        acc.push_back(reference_sums(s, x.data() + c * plane, xz, w.data() + c * taps));
      std::vector<float> scratch(qdepthwise_block_scratch_floats(s) + 16);
      float* aligned = reinterpret_cast<float*>(
          (reinterpret_cast<uintptr_t>(scratch.data()) + 63) / 64 * 64);
      const int64_t kernel_band = qdepthwise_block_band_rows(s);
      for (auto kind : {QDepthwiseOutput::Kind::kInt32, QDepthwiseOutput::Kind::kUint8,
                        QDepthwiseOutput::Kind::kInt8})
        for (int64_t band : {kernel_band, int64_t{1}, std::min<int64_t>(3, kernel_band)}) {
          QDepthwiseOutput out;
          out.kind = kind;
          out.out_zero = kind == QDepthwiseOutput::Kind::kUint8 ? 77 : -9;
          const size_t elem = kind == QDepthwiseOutput::Kind::kInt32 ? 4 : 1;
          std::vector<uint8_t> y(static_cast<size_t>(count * oplane) * elem + 16, 0xEE);
          QDepthwiseBlock b;
          b.x = x.data();
          b.count = count;
          b.w = w.data();
          b.bias = bias.data();
          b.scale = scale.data();
          b.y = y.data();
          // Garbage in the scratch (NaN): the kernel must write every element it reads.
          std::fill(scratch.begin(), scratch.end(), std::numeric_limits<float>::quiet_NaN());
          for (int64_t oh0 = 0; oh0 < s.OH; oh0 += band)
            qdepthwise_block(isa, s, xz, out, b, oh0, std::min(s.OH, oh0 + band), aligned);
          for (int c = 0; c < count; ++c)
            for (int64_t i = 0; i < oplane; ++i) {
              const size_t at = static_cast<size_t>(c * oplane + i);
              int64_t got, want;
              if (kind == QDepthwiseOutput::Kind::kInt32) {
                int32_t g;
                std::memcpy(&g, y.data() + 4 * at, 4);
                got = g;
                want = acc[static_cast<size_t>(c)][static_cast<size_t>(i)];
              } else {
                got = kind == QDepthwiseOutput::Kind::kUint8 ? int64_t{y[at]}
                                                             : int64_t{static_cast<int8_t>(y[at])};
                want = reference_quantized(acc[static_cast<size_t>(c)][static_cast<size_t>(i)],
                                           bias[static_cast<size_t>(c)],
                                           scale[static_cast<size_t>(c)], out.out_zero, kind);
              }
              ASSERT_EQ(got, want) << "shape " << s.H << "x" << s.W << " k" << s.KH << " s"
                                   << s.sh << " d" << s.dh << " channels " << count << " band "
                                   << band << " kind " << static_cast<int>(kind) << " channel "
                                   << c << " at " << i;
            }
          for (size_t i = static_cast<size_t>(count * oplane) * elem; i < y.size(); ++i)
            ASSERT_EQ(y[i], 0xEE) << "wrote past the block";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Isas, QDepthwiseTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
