// Elementwise math kernels of the cpu plugin: bad input gets an error naming the problem
// (integer division by zero, shapes that do not broadcast, bad attributes, mixed dtypes),
// and hand-computed checks of behaviour the ONNX node tests do not cover: integer edge
// cases that would trap or be undefined in C++, Python-style Mod, opset-6 broadcasting,
// half-precision rounding, variadic broadcasting and the seeded random generators.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuMath : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
  }
  void TearDown() override {
    if (plugin_) {
      EXPECT_EQ(plugin_->host().live_allocations(), 0) << "leaked host memory";
    }
  }

  // Runs one node whose inputs are all graph inputs, fed with `feeds`.
  RunResult run1(const std::string& op, const std::vector<TensorSpec>& ins, const TensorSpec& out,
                 const std::vector<HostTensor>& feeds, const std::vector<AttrSpec>& attrs = {},
                 int64_t opset = 17, const std::string& name = "n") {
    GraphBuilder g;
    const infer_graph_view* graph = g.single_node_graph(op, ins, {out}, attrs, opset, name);
    return run_graph(*plugin_, graph, feeds);
  }

  // The capability reason for one node ("" when supported).
  std::string reason(const std::string& op, const std::vector<TensorSpec>& ins,
                     const TensorSpec& out, const std::vector<AttrSpec>& attrs = {},
                     int64_t opset = 17) {
    GraphBuilder g;
    g.node(op, ins, {out}, attrs, opset);
    infer_capability cap{};
    cap.struct_size = sizeof cap;
    StatusInfo st =
        take_status(plugin_->api()->query_capability(plugin_->device(), g.last_node(), &cap));
    EXPECT_TRUE(st.ok()) << st.message;
    if (cap.support != INFER_SUPPORT_NO) return "";
    return cap.reason;
  }

  std::unique_ptr<PluginHandle> plugin_;
};

TensorSpec of(const char* name, infer_dtype t, std::vector<int64_t> dims) {
  return TensorSpec::of(name, t, std::move(dims));
}

TEST_F(CpuMath, IntegerDivisionAndModuloByZeroAreErrors) {
  RunResult r = run1("Div", {of("a", INFER_DTYPE_UINT8, {2}), of("b", INFER_DTYPE_UINT8, {2})},
                     of("y", INFER_DTYPE_UINT8, {2}),
                     {HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {2}, {4, 5}),
                      HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {2}, {2, 0})},
                     {}, 14, "div8");
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message, "node 'div8' (Div): integer division by zero (divisor element 1)");

  r = run1("Mod", {of("a", INFER_DTYPE_INT32, {2}), of("b", INFER_DTYPE_INT32, {1})},
           of("y", INFER_DTYPE_INT32, {2}),
           {HostTensor::i32({2}, {4, 5}), HostTensor::i32({1}, {0})}, {}, 13, "mod");
  EXPECT_EQ(r.status.message, "node 'mod' (Mod): integer modulo by zero (divisor element 0)");
}

TEST_F(CpuMath, IntegerEdgeCasesDoNotTrap) {
  // INT_MIN / -1 and INT_MIN % -1 trap on x86; they wrap to INT_MIN and give 0.
  RunResult r = run1("Div", {of("a", INFER_DTYPE_INT32, {2}), of("b", INFER_DTYPE_INT32, {2})},
                     of("y", INFER_DTYPE_INT32, {2}),
                     {HostTensor::i32({2}, {INT_MIN, -7}), HostTensor::i32({2}, {-1, 2})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{INT_MIN, -3}));
  r = run1("Mod", {of("a", INFER_DTYPE_INT32, {1}), of("b", INFER_DTYPE_INT32, {1})},
           of("y", INFER_DTYPE_INT32, {1}),
           {HostTensor::i32({1}, {INT_MIN}), HostTensor::i32({1}, {-1})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{0}));
  // Shifts by the bit width or more give 0 instead of undefined behaviour.
  r = run1("BitShift", {of("a", INFER_DTYPE_UINT8, {3}), of("s", INFER_DTYPE_UINT8, {3})},
           of("y", INFER_DTYPE_UINT8, {3}),
           {HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {3}, {1, 3, 255}),
            HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {3}, {7, 8, 200})},
           {AttrSpec::String("direction", "LEFT")}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{128, 0, 0}));
  // Abs of the most negative value wraps, as in numpy.
  r = run1("Abs", {of("x", INFER_DTYPE_INT8, {2})}, of("y", INFER_DTYPE_INT8, {2}),
           {HostTensor::make<int8_t>(INFER_DTYPE_INT8, {2}, {-128, -5})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int8_t>(), (std::vector<int8_t>{-128, 5}));
}

TEST_F(CpuMath, ModFollowsTheDivisorSignUnlessFmod) {
  const std::vector<HostTensor> feeds = {HostTensor::i32({4}, {-7, 7, -7, 7}),
                                         HostTensor::i32({4}, {3, -3, -3, 3})};
  const std::vector<TensorSpec> ins = {of("a", INFER_DTYPE_INT32, {4}),
                                       of("b", INFER_DTYPE_INT32, {4})};
  RunResult r = run1("Mod", ins, of("y", INFER_DTYPE_INT32, {4}), feeds);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{2, -2, -1, 1}));  // Python %
  r = run1("Mod", ins, of("y", INFER_DTYPE_INT32, {4}), feeds, {AttrSpec::Int("fmod", 1)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{-1, 1, -1, 1}));  // C fmod
}

TEST_F(CpuMath, Opset6BroadcastAttribute) {
  // broadcast=1, axis=1: B [3] lines up with A's dim 1 of [2,3,2].
  RunResult r = run1("Add", {TensorSpec::f32("a", {2, 3, 2}), TensorSpec::f32("b", {3})},
                     TensorSpec::f32("y", {2, 3, 2}),
                     {HostTensor::f32({2, 3, 2}, std::vector<float>(12, 1.0f)),
                      HostTensor::f32({3}, {10, 20, 30})},
                     {AttrSpec::Int("broadcast", 1), AttrSpec::Int("axis", 1)}, 6);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(),
            (std::vector<float>{11, 11, 21, 21, 31, 31, 11, 11, 21, 21, 31, 31}));
  // Without broadcast=1 the shapes must be equal.
  r = run1("Mul", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3})},
           TensorSpec::f32("y", {2, 3}),
           {HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::f32({3}, {1, 2, 3})}, {}, 6,
           "mul6");
  EXPECT_EQ(r.status.message,
            "node 'mul6' (Mul): input shapes [2,3] and [3] differ and the broadcast attribute is 0");
}

TEST_F(CpuMath, ShapeErrors) {
  RunResult r = run1("PRelu", {TensorSpec::f32("x", {2, 3}), TensorSpec::f32("s", {2})},
                     TensorSpec::f32("y", {2, 3}),
                     {HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::f32({2}, {1, 2})},
                     {}, 16, "prelu");
  EXPECT_EQ(r.status.message, "node 'prelu' (PRelu): shape [2] does not broadcast to [2,3]");
  r = run1("Clip",
           {of("x", INFER_DTYPE_INT8, {2}), of("lo", INFER_DTYPE_INT8, {2})},
           of("y", INFER_DTYPE_INT8, {2}),
           {HostTensor::make<int8_t>(INFER_DTYPE_INT8, {2}, {1, 2}),
            HostTensor::make<int8_t>(INFER_DTYPE_INT8, {2}, {0, 0})},
           {}, 13, "clip");
  EXPECT_EQ(r.status.message, "node 'clip' (Clip): min must be a scalar, got shape [2]");
  r = run1("Sum", {TensorSpec::f32("a", {2}), TensorSpec::f32("b", {3})}, TensorSpec::f32("y", {3}),
           {HostTensor::f32({2}, {1, 2}), HostTensor::f32({3}, {1, 2, 3})}, {}, 13, "sum");
  EXPECT_EQ(r.status.message, "node 'sum' (Sum): incompatible broadcast shapes [2] and [3]");
}

TEST_F(CpuMath, UnsupportedNodesSayWhy) {
  EXPECT_EQ(reason("BitShift", {of("a", INFER_DTYPE_UINT8, {2}), of("b", INFER_DTYPE_UINT8, {2})},
                   of("y", INFER_DTYPE_UINT8, {2}), {AttrSpec::String("direction", "UP")}),
            "cpu: BitShift direction must be \"LEFT\" or \"RIGHT\", got \"UP\"");
  EXPECT_EQ(reason("Add", {TensorSpec::f32("a", {2}), TensorSpec::i64("b", {2})},
                   TensorSpec::f32("y", {2})),
            "cpu: Add inputs have different dtypes float32 and int64");
  EXPECT_EQ(reason("Sin", {TensorSpec::i64("a", {2})}, TensorSpec::i64("y", {2})),
            "cpu: Sin does not support dtype int64 (input 0 'a')");
  EXPECT_EQ(reason("Mod", {TensorSpec::f32("a", {2}), TensorSpec::f32("b", {2})},
                   TensorSpec::f32("y", {2}), {AttrSpec::Int("fmod", 2)}),
            "cpu: Mod fmod must be 0 or 1, got 2");
  EXPECT_EQ(reason("RandomUniform", {}, of("y", INFER_DTYPE_INT32, {2}),
                   {AttrSpec::Ints("shape", {2}), AttrSpec::Int("dtype", INFER_DTYPE_INT32)}),
            "cpu: RandomUniform cannot produce dtype int32");
  EXPECT_EQ(reason("Cast", {TensorSpec::f32("a", {2})}, TensorSpec::f32("y", {2}),
                   {AttrSpec::String("to", "COMPLEX64")}, 1),
            "cpu: Cast to \"COMPLEX64\" not supported");
}

TEST_F(CpuMath, HalfPrecisionRoundsOnceToNearestEven) {
  // 1 + 2^-11 + 2^-40 lies just above the float16 tie between 1 and 1 + 2^-10. Going
  // through float would drop the 2^-40 and round the tie to even (1.0); the direct
  // rounding gives 1 + 2^-10 (0x3C01). 1 + 2^-11 exactly is the tie itself: 1.0.
  const double above = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const double tie = 1.0 + std::ldexp(1.0, -11);
  RunResult r = run1("Cast", {of("x", INFER_DTYPE_FLOAT64, {2})}, of("y", INFER_DTYPE_FLOAT16, {2}),
                     {HostTensor::make<double>(INFER_DTYPE_FLOAT64, {2}, {above, tie})},
                     {AttrSpec::Int("to", INFER_DTYPE_FLOAT16)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint16_t>(), (std::vector<uint16_t>{0x3C01, 0x3C00}));
  // float -> bfloat16: 1 + 2^-8 ties to 1.0 (0x3F80), 1 + 3 * 2^-8 ties up to 0x3F82.
  r = run1("Cast", {TensorSpec::f32("x", {2})}, of("y", INFER_DTYPE_BFLOAT16, {2}),
           {HostTensor::f32({2}, {1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8)})},
           {AttrSpec::Int("to", INFER_DTYPE_BFLOAT16)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint16_t>(), (std::vector<uint16_t>{0x3F80, 0x3F82}));
  // Cast-1 names the type with a string; NaN and out-of-range floats saturate.
  r = run1("Cast", {TensorSpec::f32("x", {3})}, of("y", INFER_DTYPE_INT32, {3}),
           {HostTensor::f32({3}, {NAN, 1e10f, -2.9f})}, {AttrSpec::String("to", "INT32")}, 1);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{0, INT_MAX, -2}));
  // float16 arithmetic: 1 + 2 = 3 (0x3C00 + 0x4000 = 0x4200); Max propagates NaN.
  r = run1("Add", {of("a", INFER_DTYPE_FLOAT16, {1}), of("b", INFER_DTYPE_FLOAT16, {1})},
           of("y", INFER_DTYPE_FLOAT16, {1}),
           {HostTensor::make<uint16_t>(INFER_DTYPE_FLOAT16, {1}, {0x3C00}),
            HostTensor::make<uint16_t>(INFER_DTYPE_FLOAT16, {1}, {0x4000})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint16_t>(), (std::vector<uint16_t>{0x4200}));
  r = run1("Max", {of("a", INFER_DTYPE_BFLOAT16, {2}), of("b", INFER_DTYPE_BFLOAT16, {2})},
           of("y", INFER_DTYPE_BFLOAT16, {2}),
           {HostTensor::make<uint16_t>(INFER_DTYPE_BFLOAT16, {2}, {0x7FC0, 0x3F80}),
            HostTensor::make<uint16_t>(INFER_DTYPE_BFLOAT16, {2}, {0x3F80, 0x4000})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  const std::vector<double> m = r.outputs[0].to_doubles();
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 2.0);
}

TEST_F(CpuMath, Float32MaxMinFollowNumpyOnNanTiesAndBroadcast) {
  // numpy.maximum / numpy.minimum: NaN in either input gives NaN, a tie gives the first
  // input (max(-0, +0) is -0), on 19 elements so the vector loop and its tail both run;
  // then a broadcast scalar and a third input folded in.
  std::vector<float> a(19), b(19);
  for (int i = 0; i < 19; ++i) {
    a[i] = static_cast<float>(i % 7) - 3.0f;
    b[i] = 3.0f - static_cast<float>(i % 5);
  }
  a[2] = NAN;
  b[17] = NAN;
  a[5] = -0.0f;
  b[5] = 0.0f;
  a[6] = 0.0f;
  b[6] = -0.0f;
  for (const char* op : {"Max", "Min"}) {
    const bool is_max = std::string(op) == "Max";
    RunResult r = run1(op, {of("a", INFER_DTYPE_FLOAT32, {19}), of("b", INFER_DTYPE_FLOAT32, {19})},
                       of("y", INFER_DTYPE_FLOAT32, {19}),
                       {HostTensor::f32({19}, a), HostTensor::f32({19}, b)});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status.message;
    const std::vector<float> y = r.outputs[0].as<float>();
    for (int i = 0; i < 19; ++i) {
      if (i == 2 || i == 17) {
        EXPECT_TRUE(std::isnan(y[i])) << op << " at " << i;
      } else if (i == 5 || i == 6) {
        EXPECT_EQ(y[i], 0.0f) << op << " at " << i;
        EXPECT_EQ(std::signbit(y[i]), std::signbit(a[i]))
            << op << " keeps the first of a tie at " << i;
      } else {
        EXPECT_EQ(y[i], is_max ? std::max(a[i], b[i]) : std::min(a[i], b[i])) << op << " at " << i;
      }
    }
    // [2, 3] with a scalar NaN and a [3] row: every output NaN.
    r = run1(op,
             {of("a", INFER_DTYPE_FLOAT32, {2, 3}), of("s", INFER_DTYPE_FLOAT32, {}),
              of("c", INFER_DTYPE_FLOAT32, {3})},
             of("y", INFER_DTYPE_FLOAT32, {2, 3}),
             {HostTensor::f32({2, 3}, {1, -2, 3, -4, 5, -6}), HostTensor::f32({}, {NAN}),
              HostTensor::f32({3}, {0, 0, 0})});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status.message;
    for (float v : r.outputs[0].as<float>())
      EXPECT_TRUE(std::isnan(v)) << op << " with a NaN scalar";
    r = run1(op,
             {of("a", INFER_DTYPE_FLOAT32, {2, 3}), of("s", INFER_DTYPE_FLOAT32, {}),
              of("c", INFER_DTYPE_FLOAT32, {3})},
             of("y", INFER_DTYPE_FLOAT32, {2, 3}),
             {HostTensor::f32({2, 3}, {1, -2, 3, -4, 5, -6}), HostTensor::f32({}, {0.5f}),
              HostTensor::f32({3}, {-1, 2, -3})});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status.message;
    EXPECT_EQ(r.outputs[0].as<float>(), is_max ? (std::vector<float>{1, 2, 3, 0.5f, 5, 0.5f})
                                               : (std::vector<float>{-1, -2, -3, -4, 0.5f, -6}));
  }
}

TEST_F(CpuMath, PowMixedDtypes) {
  // int32 base, uint64 exponent: exact integer powers; negative int exponents truncate.
  RunResult r = run1("Pow", {of("a", INFER_DTYPE_INT32, {3}), of("b", INFER_DTYPE_UINT64, {3})},
                     of("y", INFER_DTYPE_INT32, {3}),
                     {HostTensor::i32({3}, {2, -3, 7}),
                      HostTensor::make<uint64_t>(INFER_DTYPE_UINT64, {3}, {3, 3, 0})},
                     {}, 15);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{8, -27, 1}));
  r = run1("Pow", {of("a", INFER_DTYPE_INT64, {3}), of("b", INFER_DTYPE_INT8, {3})},
           of("y", INFER_DTYPE_INT64, {3}),
           {HostTensor::i64({3}, {2, -1, 1}),
            HostTensor::make<int8_t>(INFER_DTYPE_INT8, {3}, {-1, -3, -5})},
           {}, 15);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{0, -1, 1}));
}

TEST_F(CpuMath, PowSquaresFloat32ByMultiplying) {
  // An exponent of one value 2 (float32 scalar, [1, 1] float64, int64) squares the base as
  // numpy does (np.square: x * x rounded once): 21 values so the vector loop and its tail
  // run, with NaN, infinities, a signed zero and values whose square rounds.
  const std::vector<float> a = {1.1f,       -3.7f, NAN,   INFINITY,   -INFINITY, -0.0f,    1e20f,
                                1.0000001f, 0.3f,  -2.5f, 7.25f,      1e-23f,    -1.5e19f, 3.0f,
                                65504.0f,   0.1f,  -0.1f, 12345.678f, 2.0f,      -1.0f,    5.5f};
  std::vector<float> want(a.size());
  for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] * a[i];
  const std::vector<HostTensor> exponents = {
      HostTensor::f32({}, {2.0f}), HostTensor::make<double>(INFER_DTYPE_FLOAT64, {1, 1}, {2.0}),
      HostTensor::i64({1}, {2})};
  for (const HostTensor& e : exponents) {
    const int64_t n = static_cast<int64_t>(a.size());
    const std::vector<int64_t> out_dims =
        e.dims.size() == 2 ? std::vector<int64_t>{1, n} : std::vector<int64_t>{n};
    RunResult r =
        run1("Pow", {of("a", INFER_DTYPE_FLOAT32, {n}), of("b", e.dtype, e.dims)},
             of("y", INFER_DTYPE_FLOAT32, out_dims), {HostTensor::f32({n}, a), e}, {}, 15);
    ASSERT_TRUE(r.ok()) << r.status.message;
    const std::vector<float> y = r.outputs[0].as<float>();
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(y[i])) << i;
      else
        EXPECT_EQ(y[i], want[i]) << "element " << i << " exponent dtype " << e.dtype;
    }
  }
}

TEST_F(CpuMath, VariadicMeanBroadcasts) {
  RunResult r =
      run1("Mean",
           {TensorSpec::f32("a", {2}), TensorSpec::f32("b", {2, 1}), TensorSpec::f32("c", {1})},
           TensorSpec::f32("y", {2, 2}),
           {HostTensor::f32({2}, {1, 2}), HostTensor::f32({2, 1}, {3, 5}), HostTensor::f32({1}, {6})},
           {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2, 2}));
  const std::vector<float> y = r.outputs[0].as<float>();
  const std::vector<float> want = {10.0f / 3, 11.0f / 3, 4.0f, 13.0f / 3};
  for (size_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

TEST_F(CpuMath, ClassifyAndShrink) {
  RunResult r = run1("IsInf", {TensorSpec::f32("x", {4})}, of("y", INFER_DTYPE_BOOL, {4}),
                     {HostTensor::f32({4}, {INFINITY, -INFINITY, NAN, 1.0f})},
                     {AttrSpec::Int("detect_positive", 0)}, 10);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 0}));
  // Shrink on uint8: 1 - bias would be negative, and saturates to 0.
  r = run1("Shrink", {of("x", INFER_DTYPE_UINT8, {3})}, of("y", INFER_DTYPE_UINT8, {3}),
           {HostTensor::make<uint8_t>(INFER_DTYPE_UINT8, {3}, {0, 2, 10})},
           {AttrSpec::Float("lambd", 1.0), AttrSpec::Float("bias", 3.0)}, 9);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 7}));
}

TEST_F(CpuMath, SeededRandomIsReproducible) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "RandomUniform", {}, {TensorSpec::f32("y", {1000})},
      {AttrSpec::Ints("shape", {1000}), AttrSpec::Float("low", -2.0), AttrSpec::Float("high", 3.0),
       AttrSpec::Float("seed", 5.0)},
      17);
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, graph, &st);
  ASSERT_TRUE(exe) << st.message;
  RunResult r1 = exe->run({});
  RunResult r2 = exe->run({});
  ASSERT_TRUE(r1.ok() && r2.ok()) << r1.status.message << r2.status.message;
  const std::vector<float> a = r1.outputs[0].as<float>();
  EXPECT_EQ(a, r2.outputs[0].as<float>());
  double mean = 0;
  for (float v : a) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
    mean += v / 1000.0;
  }
  EXPECT_NEAR(mean, 0.5, 0.25);  // uniform on [-2, 3): mean 0.5, std error ~0.05
  // Bernoulli with p = 0 and p = 1 is certain.
  RunResult b = run1("Bernoulli", {TensorSpec::f32("p", {4})}, of("y", INFER_DTYPE_INT32, {4}),
                     {HostTensor::f32({4}, {0, 1, 0, 1})},
                     {AttrSpec::Int("dtype", INFER_DTYPE_INT32)}, 15);
  ASSERT_TRUE(b.ok()) << b.status.message;
  EXPECT_EQ(b.outputs[0].as<int32_t>(), (std::vector<int32_t>{0, 1, 0, 1}));
}

}  // namespace
}  // namespace infer::test
