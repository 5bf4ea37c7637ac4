// ONNX Runtime's QOperator format through a whole Session: the com.microsoft contrib ops
// its static quantizer writes (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool, QGemm, QLinearSoftmax)
// load as the QDQ graphs they stand for (core/onnx/contrib_quant.hpp). The test checks the
// outputs at optimization levels 0 (DequantizeLinear / float op / QuantizeLinear) and 3
// (re-fused into 8-bit kernels) against a reference written here from the ops'
// definitions, one float32 operation at a time; and that a layout or form the expansion
// cannot express is refused with the node's name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "infer_test_paths.hpp"
#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::OnnxModelWriter;
using testing::tree_options;

constexpr int64_t kC = 4, kH = 4, kW = 4, kN = kC * kH * kW, kOut = 5, kK = 2 * kC;
constexpr const char* kMs = "com.microsoft";

struct Q {
  float scale;
  int zero;
};
constexpr Q kX{0.04f, 120}, kR{0.03f, 100}, kA{0.06f, 110}, kM{0.05f, 90}, kS{1.0f / 256, 0},
    kL{0.05f, 128}, kCat{0.05f, 100}, kP{0.04f, 100}, kG{0.03f, 100}, kY{0.05f, 128},
    kSm{1.0f / 256, 0};
constexpr float kAlpha = 0.5f, kLeak = 0.2f;

struct Data {
  std::vector<uint8_t> x, r;
  std::vector<int8_t> w;  // [kOut, kK] (QGemm with transB)
  std::vector<float> w_scale;
  std::vector<int32_t> bias;
};

Data make_data() {
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> byte(0, 255), wd(-127, 127), bd(-400, 400);
  std::uniform_real_distribution<float> sd(0.01f, 0.04f);
  using testing::random_values;
  Data d;
  d.x = random_values<uint8_t>(kN, byte, rng);
  d.r = random_values<uint8_t>(kN, byte, rng);
  d.w = random_values<int8_t>(kOut * kK, wd, rng);
  d.w_scale = random_values<float>(kOut, sd, rng);
  d.bias = random_values<int32_t>(kOut, bd, rng);
  return d;
}

void params(OnnxModelWriter& w, const std::string& p, Q q) {
  w.raw_initializer<float>(p + "_s", ::onnx::TensorProto::FLOAT, {}, {q.scale});
  w.raw_initializer<uint8_t>(p + "_z", ::onnx::TensorProto::UINT8, {},
                             {static_cast<uint8_t>(q.zero)});
}
::onnx::NodeProto* ms(OnnxModelWriter& w, const std::string& name, const std::string& op,
                      std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = w.node(name, op, std::move(in), std::move(out));
  n->set_domain(kMs);
  return n;
}

std::string model(const Data& d) {
  OnnxModelWriter w;
  w.add_opset(kMs, 1);
  w.typed_input("x", {1, kC, kH, kW}, ::onnx::TensorProto::UINT8);
  w.typed_input("r", {1, kC, kH, kW}, ::onnx::TensorProto::UINT8);
  w.typed_output("c", {1, 2 * kC, kH, kW}, ::onnx::TensorProto::UINT8);
  w.typed_output("g", {1, 2 * kC, 1, 1}, ::onnx::TensorProto::UINT8);
  w.typed_output("yf", {1, kOut}, ::onnx::TensorProto::FLOAT);
  w.typed_output("sm", {1, kOut}, ::onnx::TensorProto::UINT8);
  w.typed_output("y", {1, kOut}, ::onnx::TensorProto::UINT8);
  for (auto [p, q] : {std::pair{"x", kX}, {"r", kR}, {"a", kA}, {"m", kM}, {"s", kS}, {"l", kL},
                      {"cat", kCat}, {"p", kP}, {"gp", kG}, {"y", kY}, {"sm", kSm}})
    params(w, p, q);
  w.raw_initializer<int8_t>("w", ::onnx::TensorProto::INT8, {kOut, kK}, d.w);
  w.raw_initializer<float>("w_s", ::onnx::TensorProto::FLOAT, {kOut}, d.w_scale);
  w.raw_initializer<int8_t>("w_z", ::onnx::TensorProto::INT8, {kOut}, std::vector<int8_t>(kOut, 0));
  w.raw_initializer<int32_t>("bias", ::onnx::TensorProto::INT32, {kOut}, d.bias);
  ms(w, "add", "QLinearAdd", {"x", "x_s", "x_z", "r", "r_s", "r_z", "a_s", "a_z"}, {"a"});
  ms(w, "mul", "QLinearMul", {"a", "a_s", "a_z", "r", "r_s", "r_z", "m_s", "m_z"}, {"m"});
  ms(w, "sig", "QLinearSigmoid", {"m", "m_s", "m_z", "s_s", "s_z"}, {"s"});
  OnnxModelWriter::float_attr(
      ms(w, "leaky", "QLinearLeakyRelu", {"a", "a_s", "a_z", "l_s", "l_z"}, {"l"}), "alpha", kLeak);
  OnnxModelWriter::int_attr(
      ms(w, "cat", "QLinearConcat", {"cat_s", "cat_z", "s", "s_s", "s_z", "l", "l_s", "l_z"}, {"c"}),
      "axis", 1);
  auto* pool = ms(w, "pool", "QLinearAveragePool", {"c", "cat_s", "cat_z", "p_s", "p_z"}, {"p"});
  OnnxModelWriter::ints_attr(pool, "kernel_shape", {2, 2});
  OnnxModelWriter::ints_attr(pool, "strides", {2, 2});
  ms(w, "gap", "QLinearGlobalAveragePool", {"p", "p_s", "p_z", "gp_s", "gp_z"}, {"g"});
  OnnxModelWriter::int_attr(w.node("flat", "Flatten", {"g"}, {"f"}), "axis", 1);
  for (bool quantized : {true, false}) {
    std::vector<std::string> in = {"f", "gp_s", "gp_z", "w", "w_s", "w_z", "bias"};
    if (quantized) in.insert(in.end(), {"y_s", "y_z"});
    auto* g = ms(w, quantized ? "qgemm" : "qgemm_float", "QGemm", in, {quantized ? "y" : "yf"});
    OnnxModelWriter::int_attr(g, "transB", 1);
    // alpha scales the product and the bias's grid; the fusion takes alpha 1 only.
    if (!quantized) OnnxModelWriter::float_attr(g, "alpha", kAlpha);
  }
  auto* sm = ms(w, "softmax", "QLinearSoftmax", {"y", "y_s", "y_z", "sm_s", "sm_z"}, {"sm"});
  OnnxModelWriter::int_attr(sm, "axis", -1);
  OnnxModelWriter::int_attr(sm, "opset", 13);
  const std::string path = testing::temp_path("infer_runtime_qoperator.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// The definitions, one float32 operation at a time.
float dq(int q, Q p) {
  volatile float d = static_cast<float>(q - p.zero) * p.scale;
  return d;
}
int qz(float v, Q p) {
  volatile float d = v / p.scale;
  return std::clamp(static_cast<int>(std::nearbyint(d)) + p.zero, 0, 255);
}

struct Outputs {
  std::vector<int> c, g, sm, y;
  std::vector<float> yf;
};

Outputs reference(const Data& d) {
  std::vector<int> s(kN), l(kN);
  for (int64_t i = 0; i < kN; ++i) {
    volatile float sum = dq(d.x[i], kX) + dq(d.r[i], kR);
    const int a = qz(sum, kA);
    volatile float prod = dq(a, kA) * dq(d.r[i], kR);
    const int m = qz(prod, kM);
    s[i] = qz(1.0f / (1.0f + std::exp(-dq(m, kM))), kS);
    const float v = dq(a, kA);
    volatile float leak = v * kLeak;
    l[i] = qz(v < 0 ? leak : v, kL);
  }
  Outputs o;
  for (int64_t i = 0; i < kN; ++i) o.c.push_back(qz(dq(s[i], kS), kCat));
  for (int64_t i = 0; i < kN; ++i) o.c.push_back(qz(dq(l[i], kL), kCat));
  std::vector<int> pooled;
  for (int64_t ch = 0; ch < 2 * kC; ++ch)
    for (int64_t h = 0; h < kH / 2; ++h)
      for (int64_t x = 0; x < kW / 2; ++x) {
        volatile float acc = 0;
        for (int64_t dh = 0; dh < 2; ++dh)
          for (int64_t dw = 0; dw < 2; ++dw)
            acc = acc + dq(o.c[(ch * kH + 2 * h + dh) * kW + 2 * x + dw], kCat);
        pooled.push_back(qz(acc / 4.0f, kP));
      }
  std::vector<float> f;
  for (int64_t ch = 0; ch < 2 * kC; ++ch) {
    volatile float acc = 0;
    for (int64_t k = 0; k < 4; ++k) acc = acc + dq(pooled[ch * 4 + k], kP);
    o.g.push_back(qz(acc / 4.0f, kG));
    f.push_back(dq(o.g.back(), kG));
  }
  std::vector<int> y;
  for (int64_t n = 0; n < kOut; ++n) {
    double acc = 0;  // exact: float products of grid values, summed in double
    for (int64_t k = 0; k < kK; ++k)
      acc += static_cast<double>(f[k]) * static_cast<double>(d.w[n * kK + k]) * d.w_scale[n];
    const double bias = static_cast<double>(d.bias[n]) * kG.scale * d.w_scale[n];
    o.yf.push_back(static_cast<float>(kAlpha * (acc + bias)));
    y.push_back(qz(static_cast<float>(acc + bias), kY));
  }
  o.y = y;
  float mx = -1e30f, total = 0;
  for (int v : y) mx = std::max(mx, dq(v, kY));
  std::vector<float> e;
  for (int v : y) {
    e.push_back(std::exp(dq(v, kY) - mx));
    total += e.back();
  }
  for (float v : e) o.sm.push_back(qz(v / total, kSm));
  return o;
}

Outputs run(const std::string& path, const Data& d, int level, std::string* ops) {
  SessionOptions o = tree_options({"cpu"});
  o.optimization_level = level;
  auto s = Session::create(path, o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  if (!s.is_ok()) return {};
  for (const auto& n : (*s)->plan().nodes) *ops += n.op_type + " ";
  auto out = (*s)->run(
      {{"x", *Tensor::from_bytes(DataType::kUInt8, {1, kC, kH, kW}, d.x.data(), d.x.size())},
       {"r", *Tensor::from_bytes(DataType::kUInt8, {1, kC, kH, kW}, d.r.data(), d.r.size())}});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  Outputs r;
  for (const auto& named : *out) {
    const int64_t n = named.tensor.element_count();
    for (int64_t k = 0; k < n; ++k) {
      if (named.name == "yf") {
        r.yf.push_back(named.tensor.data_as<float>()[k]);
        continue;
      }
      std::vector<int>* dst = named.name == "c"   ? &r.c
                              : named.name == "g" ? &r.g
                              : named.name == "y" ? &r.y
                                                  : &r.sm;
      dst->push_back(named.tensor.data_as<uint8_t>()[k]);
    }
  }
  return r;
}

// Values equal to the reference but for at most `ties` off by one (float32 results on a
// rounding tie of the output grid, e.g. the plugin's exp against std::exp).
void expect_close(const std::vector<int>& got, const std::vector<int>& want, int ties,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int off = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), 1) << what << " " << i;
    off += got[i] != want[i];
  }
  EXPECT_LE(off, ties) << what;
}

TEST(QOperator, ContribOpsRunAsTheirQdqFormAtEveryLevel) {
  const Data d = make_data();
  const std::string path = model(d);
  const Outputs ref = reference(d);
  for (int level : {0, 3}) {
    std::string ops;
    const Outputs got = run(path, d, level, &ops);
    EXPECT_EQ(ops.find(kMs), std::string::npos) << ops;
    if (level == 0) {
      EXPECT_NE(ops.find("DequantizeLinear"), std::string::npos) << ops;
      EXPECT_NE(ops.find("Gemm"), std::string::npos) << ops;
    } else {  // fused back into the 8-bit kernels
      for (const char* op : {"QLinearAdd", "QLinearMul", "QLinearLookup", "MatMulIntegerToFloat"})
        EXPECT_NE(ops.find(op), std::string::npos) << op << " in " << ops;
      EXPECT_EQ(ops.find("Sigmoid"), std::string::npos) << ops;
    }
    SCOPED_TRACE("level " + std::to_string(level));
    expect_close(got.c, ref.c, 2, "concat");
    expect_close(got.g, ref.g, 1, "global pool");
    expect_close(got.sm, ref.sm, 1, "softmax");
    // float32 scaling against double: y's grid value may sit on a tie.
    expect_close(got.y, ref.y, 1, "qgemm");
    ASSERT_EQ(got.yf.size(), ref.yf.size());
    for (size_t i = 0; i < ref.yf.size(); ++i)
      EXPECT_NEAR(got.yf[i], ref.yf[i], 1e-5f * (std::fabs(ref.yf[i]) + 1)) << i;
  }
  // The case exercises the leaky slope (below the concat's zero point) and a softmax that
  // is not flat.
  EXPECT_GT(std::count_if(ref.c.begin() + kN, ref.c.end(), [](int v) { return v < kCat.zero; }), 0);
  EXPECT_GT(*std::max_element(ref.sm.begin(), ref.sm.end()),
            *std::min_element(ref.sm.begin(), ref.sm.end()) + 10);
}

// What the expansion cannot express is refused, naming the node.
TEST(QOperator, UnsupportedFormsNameTheNode) {
  struct Case {
    const char* what;
    void (*build)(OnnxModelWriter&);
    const char* expect;
  };
  const Case cases[] = {
      {"an NHWC pool",
       [](OnnxModelWriter& w) {
         OnnxModelWriter::int_attr(
             ms(w, "nhwc_pool", "QLinearGlobalAveragePool", {"x", "x_s", "x_z", "x_s", "x_z"},
                {"y"}),
             "channels_last", 1);
       },
       "nhwc_pool"},
      {"a concat without triples",
       [](OnnxModelWriter& w) {
         ms(w, "bad_cat", "QLinearConcat", {"x_s", "x_z", "x", "x_s"}, {"y"});
       },
       "bad_cat"},
      {"a one-axis softmax in an opset-12 model",
       [](OnnxModelWriter& w) {
         w.set_opset(12);
         auto* n = ms(w, "old_softmax", "QLinearSoftmax", {"x", "x_s", "x_z", "x_s", "x_z"}, {"y"});
         OnnxModelWriter::int_attr(n, "axis", 1);
         OnnxModelWriter::int_attr(n, "opset", 13);
       },
       "old_softmax"},
      {"a missing scale",
       [](OnnxModelWriter& w) { ms(w, "no_scale", "QLinearSigmoid", {"x", "", "x_z", "x_s"}, {"y"}); },
       "no_scale"},
  };
  for (const Case& c : cases) {
    OnnxModelWriter w;
    w.add_opset(kMs, 1);
    w.typed_input("x", {1, 2, 3, 3}, ::onnx::TensorProto::UINT8);
    w.typed_output("y", {}, ::onnx::TensorProto::UINT8);
    params(w, "x", kX);
    c.build(w);
    const std::string path = testing::temp_path("infer_runtime_qoperator_bad.onnx");
    ASSERT_TRUE(w.save(path));
    auto s = Session::create(path, tree_options({"cpu"}));
    ASSERT_FALSE(s.is_ok()) << c.what;
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos)
        << c.what << ": " << s.status().message();
  }
}

}  // namespace
}  // namespace infer
