// The vectorized elementwise math (simd/vec.hpp) of every ISA this machine runs, against
// std:: evaluated in double: dense sweeps that measure each approximation's worst error
// (printed, and bounded by the figures documented in vec.hpp), special values, every
// length 1..67 plus large ones (so each tail mask is exercised), and in-place calls.
#include "simd/vec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

#include "simd_test_util.hpp"

namespace infer::cpu::simd::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

double ref_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

double reference(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::kErf: return std::erf(x);
    case UnaryOp::kGelu: return ref_gelu(x);
    case UnaryOp::kGeluTanh: return ref_gelu_tanh(x);
    case UnaryOp::kRelu: return x > 0 ? x : 0.0;
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kSquare: return x * x;
    case UnaryOp::kReciprocal: return 1.0 / x;
  }
  return 0;
}

const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp: return "exp";
    case UnaryOp::kTanh: return "tanh";
    case UnaryOp::kSigmoid: return "sigmoid";
    case UnaryOp::kErf: return "erf";
    case UnaryOp::kGelu: return "gelu";
    case UnaryOp::kGeluTanh: return "gelu_tanh";
    case UnaryOp::kRelu: return "relu";
    case UnaryOp::kAbs: return "abs";
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kSquare: return "square";
    case UnaryOp::kReciprocal: return "reciprocal";
  }
  return "?";
}

// Worst error of `op` over `count` evenly spaced points of [lo, hi]: relative where the
// exact value's magnitude is at least `abs_below`, absolute below it.
struct SweepError {
  double rel = 0, abs = 0;
};
SweepError sweep(Isa isa, UnaryOp op, double lo, double hi, size_t count, double abs_below) {
  std::vector<float> x(count), y(count);
  for (size_t i = 0; i < count; ++i)
    x[i] = static_cast<float>(lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1));
  vec_unary(isa, op, x.data(), y.data(), count);
  SweepError e;
  for (size_t i = 0; i < count; ++i) {
    const double want = reference(op, x[i]);
    const double err = std::fabs(static_cast<double>(y[i]) - want);
    if (std::isnan(y[i])) {
      ADD_FAILURE() << op_name(op) << "(" << x[i] << ") gave NaN";
      return e;
    }
    if (std::fabs(want) >= abs_below)
      e.rel = std::max(e.rel, err / std::fabs(want));
    else
      e.abs = std::max(e.abs, err);
  }
  std::printf("[ %-6s ] %-9s on [%g, %g]: max rel %.3g, max abs (|f| < %g) %.3g\n",
              isa_name(isa), op_name(op), lo, hi, e.rel, abs_below, e.abs);
  return e;
}

class VecTest : public ::testing::TestWithParam<Isa> {};

// The accuracy bounds below are the ones vec.hpp documents (measured: see the printed
// lines; every ISA runs the same polynomials).
TEST_P(VecTest, ExpAccuracy) {
  SweepError e = sweep(GetParam(), UnaryOp::kExp, -87.0, 88.5, 2000001, 0);
  EXPECT_LE(e.rel, 2.5e-7);
  // Results in the denormal range keep a fixed absolute precision.
  e = sweep(GetParam(), UnaryOp::kExp, -103.0, -87.4, 100001, 1.2e-38);
  EXPECT_LE(e.abs, 1.5e-45);
}

TEST_P(VecTest, TanhAccuracy) {
  const SweepError e = sweep(GetParam(), UnaryOp::kTanh, -10.0, 10.0, 2000001, 0);
  EXPECT_LE(e.rel, 3e-7);
}

TEST_P(VecTest, SigmoidAccuracy) {
  const SweepError e = sweep(GetParam(), UnaryOp::kSigmoid, -86.0, 30.0, 2000001, 0);
  EXPECT_LE(e.rel, 3e-7);
}

TEST_P(VecTest, ErfAccuracy) {
  SweepError e = sweep(GetParam(), UnaryOp::kErf, -6.0, 6.0, 2000001, 0.5);
  EXPECT_LE(e.rel, 2.5e-7);
  EXPECT_LE(e.abs, 1e-7);
  e = sweep(GetParam(), UnaryOp::kErf, -1e-3, 1e-3, 100001, 0);
  EXPECT_LE(e.rel, 2.5e-7);
}

TEST_P(VecTest, GeluAccuracy) {
  // Relative error for x >= 0; for x < 0 the formula's 1 + erf(x / sqrt 2) (or 1 + tanh)
  // cancels, so an ulp of erf near -1 becomes a larger relative error of the result (as
  // in the unfused decomposition): relative on [-2, 0], absolute beyond.
  SweepError e = sweep(GetParam(), UnaryOp::kGelu, 0.0, 10.0, 1000001, 1e-3);
  EXPECT_LE(e.rel, 3e-7);
  EXPECT_LE(e.abs, 1e-9);
  e = sweep(GetParam(), UnaryOp::kGelu, -2.0, 0.0, 1000001, 1e-3);
  EXPECT_LE(e.rel, 2e-6);
  e = sweep(GetParam(), UnaryOp::kGelu, -12.0, -2.0, 1000001, 1e30);
  EXPECT_LE(e.abs, 2e-7);
  e = sweep(GetParam(), UnaryOp::kGeluTanh, 0.0, 10.0, 1000001, 1e-3);
  EXPECT_LE(e.rel, 3e-7);
  e = sweep(GetParam(), UnaryOp::kGeluTanh, -2.0, 0.0, 1000001, 1e-3);
  EXPECT_LE(e.rel, 2e-6);
  e = sweep(GetParam(), UnaryOp::kGeluTanh, -12.0, -2.0, 1000001, 1e30);
  EXPECT_LE(e.abs, 5e-7);
}

TEST_P(VecTest, SpecialValues) {
  const Isa isa = GetParam();
  struct Case {
    UnaryOp op;
    float x;
    float want;  // NaN: expect NaN
  };
  const Case cases[] = {
      {UnaryOp::kExp, 0.0f, 1.0f},          {UnaryOp::kExp, -kInf, 0.0f},
      {UnaryOp::kExp, kInf, kInf},          {UnaryOp::kExp, 89.0f, kInf},
      {UnaryOp::kExp, 1000.0f, kInf},       {UnaryOp::kExp, -200.0f, 0.0f},
      {UnaryOp::kExp, kNaN, kNaN},          {UnaryOp::kTanh, 0.0f, 0.0f},
      {UnaryOp::kTanh, kInf, 1.0f},         {UnaryOp::kTanh, -kInf, -1.0f},
      {UnaryOp::kTanh, 20.0f, 1.0f},        {UnaryOp::kTanh, -1e30f, -1.0f},
      {UnaryOp::kTanh, kNaN, kNaN},         {UnaryOp::kSigmoid, 0.0f, 0.5f},
      {UnaryOp::kSigmoid, kInf, 1.0f},      {UnaryOp::kSigmoid, -kInf, 0.0f},
      {UnaryOp::kSigmoid, 200.0f, 1.0f},    {UnaryOp::kSigmoid, -200.0f, 0.0f},
      {UnaryOp::kSigmoid, kNaN, kNaN},      {UnaryOp::kErf, 0.0f, 0.0f},
      {UnaryOp::kErf, kInf, 1.0f},          {UnaryOp::kErf, -kInf, -1.0f},
      {UnaryOp::kErf, 5.0f, 1.0f},          {UnaryOp::kErf, kNaN, kNaN},
      {UnaryOp::kGelu, 0.0f, 0.0f},         {UnaryOp::kGelu, kInf, kInf},
      {UnaryOp::kGelu, 1e30f, 1e30f},       {UnaryOp::kGelu, -1e30f, 0.0f},
      {UnaryOp::kGelu, kNaN, kNaN},         {UnaryOp::kGeluTanh, 1e30f, 1e30f},
      {UnaryOp::kGeluTanh, -1e30f, 0.0f},   {UnaryOp::kGeluTanh, kNaN, kNaN},
      {UnaryOp::kRelu, -kInf, 0.0f},        {UnaryOp::kRelu, kInf, kInf},
      {UnaryOp::kRelu, kNaN, 0.0f},         {UnaryOp::kAbs, -kInf, kInf},
      {UnaryOp::kSqrt, -1.0f, kNaN},        {UnaryOp::kReciprocal, 0.0f, kInf},
  };
  for (const Case& c : cases) {
    // Each value at every lane position of a 37-element run (main body and tail).
    std::vector<float> x(37, 0.25f), y(37);
    for (size_t pos = 0; pos < x.size(); ++pos) {
      x.assign(37, 0.25f);
      x[pos] = c.x;
      vec_unary(isa, c.op, x.data(), y.data(), x.size());
      if (std::isnan(c.want))
        EXPECT_TRUE(std::isnan(y[pos])) << op_name(c.op) << "(" << c.x << ") = " << y[pos];
      else
        EXPECT_EQ(y[pos], c.want) << op_name(c.op) << "(" << c.x << ") at lane " << pos;
    }
  }
}

const UnaryOp kAllOps[] = {UnaryOp::kExp,  UnaryOp::kTanh,   UnaryOp::kSigmoid,
                           UnaryOp::kErf,  UnaryOp::kGelu,   UnaryOp::kGeluTanh,
                           UnaryOp::kRelu, UnaryOp::kAbs,    UnaryOp::kNeg,
                           UnaryOp::kSqrt, UnaryOp::kSquare, UnaryOp::kReciprocal};

TEST_P(VecTest, UnaryEveryLengthAndInPlace) {
  const Isa isa = GetParam();
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 67; ++n) lengths.push_back(n);
  lengths.push_back(255);
  lengths.push_back(4099);
  for (UnaryOp op : kAllOps) {
    const bool positive = op == UnaryOp::kSqrt;
    for (size_t n : lengths) {
      // Guard words after the run catch a tail that writes past n.
      std::vector<float> x = random_floats(n, static_cast<uint32_t>(n), positive ? 0.01f : -4.0f, 4.0f);
      std::vector<float> y(n + 16, 123.0f);
      vec_unary(isa, op, x.data(), y.data(), n);
      for (size_t i = n; i < n + 16; ++i) ASSERT_EQ(y[i], 123.0f) << op_name(op) << " n=" << n;
      y.resize(n);
      std::vector<float> want(n);
      for (size_t i = 0; i < n; ++i) want[i] = static_cast<float>(reference(op, x[i]));
      expect_close(y, want, 5e-7, 2e-7, std::string(op_name(op)) + " n=" + std::to_string(n));
      std::vector<float> inplace = x;
      vec_unary(isa, op, inplace.data(), inplace.data(), n);
      EXPECT_EQ(inplace, y) << op_name(op) << " in place, n=" << n;
    }
  }
}

double binary_ref(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMax:
      return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? b : a);
    case BinaryOp::kMin:
      return std::isnan(a) || std::isnan(b) ? a + b : (b < a ? b : a);
  }
  return 0;
}

// numpy's maximum/minimum, as the ONNX Max/Min kernels define them: a NaN in either
// operand (either position, a vector or the broadcast scalar) gives NaN, a tie gives the
// first operand (signed zeros tell which), at every position of a vector and its tail.
TEST_P(VecTest, MaxMinPropagateNanAndKeepTheFirstOfATie) {
  const Isa isa = GetParam();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t n : {size_t{5}, size_t{16}, size_t{37}}) {
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      switch (i % 5) {
        case 0:
          a[i] = nan;
          b[i] = 1.0f;
          break;
        case 1:
          a[i] = 2.0f;
          b[i] = nan;
          break;
        case 2:
          a[i] = -0.0f;
          b[i] = 0.0f;
          break;
        case 3:
          a[i] = 0.0f;
          b[i] = -0.0f;
          break;
        default:
          a[i] = -3.0f;
          b[i] = 4.0f;
          break;
      }
    }
    for (BinaryOp op : {BinaryOp::kMax, BinaryOp::kMin}) {
      std::vector<float> y(n);
      vec_binary(isa, op, a.data(), b.data(), y.data(), n);
      for (size_t i = 0; i < n; ++i) {
        const std::string what = std::string(op == BinaryOp::kMax ? "max" : "min") +
                                 " n=" + std::to_string(n) + " i=" + std::to_string(i);
        switch (i % 5) {
          case 0:
          case 1:
            EXPECT_TRUE(std::isnan(y[i])) << what;
            break;
          case 2:
          case 3:
            EXPECT_EQ(y[i], 0.0f) << what;
            EXPECT_EQ(std::signbit(y[i]), std::signbit(a[i])) << what;
            break;
          default:
            EXPECT_EQ(y[i], op == BinaryOp::kMax ? 4.0f : -3.0f) << what;
        }
      }
      vec_binary_scalar(isa, op, b.data(), nan, y.data(), n, false);
      for (size_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[i])) << "scalar NaN i=" << i;
      vec_binary_scalar(isa, op, a.data(), 1.0f, y.data(), n, true);
      for (size_t i = 0; i < n; i += 5)
        EXPECT_TRUE(std::isnan(y[i])) << "vector NaN, scalar first i=" << i;
    }
  }
}

TEST_P(VecTest, BinaryAndScalarBroadcast) {
  const Isa isa = GetParam();
  const BinaryOp ops[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul,
                          BinaryOp::kDiv, BinaryOp::kMax, BinaryOp::kMin};
  for (BinaryOp op : ops) {
    for (size_t n : {size_t{1}, size_t{3}, size_t{8}, size_t{15}, size_t{16}, size_t{17},
                     size_t{31}, size_t{33}, size_t{67}, size_t{1000}}) {
      const std::vector<float> a = random_floats(n, 1, 0.5f, 3.0f);
      const std::vector<float> b = random_floats(n, 2, -3.0f, -0.5f);
      const std::string what = "op " + std::to_string(static_cast<int>(op)) + " n=" + std::to_string(n);
      std::vector<float> y(n + 8, 7.0f), want(n);
      vec_binary(isa, op, a.data(), b.data(), y.data(), n);
      for (size_t i = n; i < n + 8; ++i) ASSERT_EQ(y[i], 7.0f) << what;
      y.resize(n);
      for (size_t i = 0; i < n; ++i) want[i] = static_cast<float>(binary_ref(op, a[i], b[i]));
      expect_close(y, want, 1e-7, 0, what);
      for (bool first : {false, true}) {
        vec_binary_scalar(isa, op, a.data(), -1.75f, y.data(), n, first);
        for (size_t i = 0; i < n; ++i)
          want[i] = static_cast<float>(first ? binary_ref(op, -1.75, a[i]) : binary_ref(op, a[i], -1.75));
        expect_close(y, want, 1e-7, 0, what + (first ? " scalar first" : " scalar second"));
      }
      // In place: y aliases a.
      std::vector<float> inplace = a;
      vec_binary(isa, op, inplace.data(), b.data(), inplace.data(), n);
      for (size_t i = 0; i < n; ++i) want[i] = static_cast<float>(binary_ref(op, a[i], b[i]));
      expect_close(inplace, want, 1e-7, 0, what + " in place");
    }
  }
}

TEST_P(VecTest, SumMaxScaleShift) {
  const Isa isa = GetParam();
  EXPECT_EQ(vec_sum(isa, nullptr, 0), 0.0f);
  EXPECT_EQ(vec_max(isa, nullptr, 0), -kInf);
  for (size_t n = 1; n <= 150; n += (n < 67 ? 1 : 41)) {
    const std::vector<float> x = random_floats(n, static_cast<uint32_t>(n + 5), -2.0f, 1.0f);
    double s = 0, m = -1e300, abs_sum = 0;
    for (float v : x) {
      s += v;
      abs_sum += std::fabs(v);
      m = std::max<double>(m, v);
    }
    EXPECT_NEAR(vec_sum(isa, x.data(), n), s, 1e-6 * abs_sum) << "n=" << n;
    EXPECT_EQ(vec_max(isa, x.data(), n), static_cast<float>(m)) << "n=" << n;
    std::vector<float> y(n), want(n);
    vec_scale_shift(isa, x.data(), 0.5f, -3.0f, y.data(), n);
    for (size_t i = 0; i < n; ++i) want[i] = static_cast<float>(x[i] * 0.5 - 3.0);
    expect_close(y, want, 1e-7, 0, "scale_shift n=" + std::to_string(n));
  }
  // The maximum in the tail, and a run of -inf.
  std::vector<float> x(19, -1.0f);
  x[18] = 4.0f;
  EXPECT_EQ(vec_max(isa, x.data(), x.size()), 4.0f);
  std::vector<float> ninf(5, -kInf);
  EXPECT_EQ(vec_max(isa, ninf.data(), ninf.size()), -kInf);
  std::vector<float> big(100003, 1.0f);
  EXPECT_EQ(vec_sum(isa, big.data(), big.size()), 100003.0f);
}

INSTANTIATE_TEST_SUITE_P(Isas, VecTest, ::testing::ValuesIn(test_isas()), isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd::testing
