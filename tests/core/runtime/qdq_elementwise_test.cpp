// The activations of a QDQ model stay 8-bit between quantized ops: a residual Add, the
// Relu after it, a MaxPool, a broadcast Mul, a Concat and an int8 Sigmoid, each between
// DequantizeLinear and QuantizeLinear, run through a whole Session. With the optimizer's
// QDQ passes they become QLinearAdd, QLinearLookup, an 8-bit MaxPool, QLinearMul and an
// 8-bit Concat; the test checks the outputs against a reference written here from ONNX's
// definitions (float32 arithmetic, round half to even), and against the same model run
// with those passes disabled (the unfused DequantizeLinear / float op / QuantizeLinear
// kernels), which must agree bit for bit.
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

constexpr int64_t kC = 4, kH = 6, kW = 6;
constexpr int64_t kN = kC * kH * kW, kPooled = kC * (kH / 2) * (kW / 2);

struct Q {
  float scale;
  int zero;
};
// x, r: the inputs; s: the sum; a: after Relu (zero 0, so Relu is exact saturation only
// at the float level); m: the multiplier (per channel, broadcast); p: the product;
// i/o: the int8 Sigmoid's input and output.
constexpr Q kX{0.05f, 10}, kR{0.03f, 200}, kS{0.07f, 120}, kA{0.04f, 0}, kM{0.02f, 128},
    kP{0.01f, 100}, kI{0.1f, -3}, kO{1.0f / 256, -128};

struct Data {
  std::vector<uint8_t> x, r, m;
  std::vector<int8_t> i;
};

Data make_data() {
  std::mt19937 rng(19);
  std::uniform_int_distribution<int> byte(0, 255);
  Data d;
  for (auto* v : {&d.x, &d.r}) {
    v->resize(kN);
    for (auto& b : *v) b = static_cast<uint8_t>(byte(rng));
  }
  d.m.resize(kC);
  for (auto& b : d.m) b = static_cast<uint8_t>(byte(rng));
  d.i.resize(kN);
  for (auto& b : d.i) b = static_cast<int8_t>(byte(rng) - 128);
  return d;
}

void params(OnnxModelWriter& w, const std::string& p, Q q, bool int8 = false) {
  w.raw_initializer<float>(p + "_scale", ::onnx::TensorProto::FLOAT, {}, {q.scale});
  if (int8)
    w.raw_initializer<int8_t>(p + "_zero", ::onnx::TensorProto::INT8, {},
                              {static_cast<int8_t>(q.zero)});
  else
    w.raw_initializer<uint8_t>(p + "_zero", ::onnx::TensorProto::UINT8, {},
                               {static_cast<uint8_t>(q.zero)});
}
void dq(OnnxModelWriter& w, const std::string& in, const std::string& p, const std::string& out) {
  w.node("dq_" + out, "DequantizeLinear", {in, p + "_scale", p + "_zero"}, {out});
}
void q(OnnxModelWriter& w, const std::string& in, const std::string& p, const std::string& out) {
  w.node("q_" + out, "QuantizeLinear", {in, p + "_scale", p + "_zero"}, {out});
}

std::string model() {
  OnnxModelWriter w;
  w.typed_input("x_q", {1, kC, kH, kW}, ::onnx::TensorProto::UINT8);
  w.typed_input("r_q", {1, kC, kH, kW}, ::onnx::TensorProto::UINT8);
  w.typed_input("m_q", {1, kC, 1, 1}, ::onnx::TensorProto::UINT8);
  w.typed_input("i_q", {1, kC, kH, kW}, ::onnx::TensorProto::INT8);
  w.typed_output("p_q", {1, kC, kH / 2, kW / 2}, ::onnx::TensorProto::UINT8);
  w.typed_output("cat_q", {1, 2 * kC, kH / 2, kW / 2}, ::onnx::TensorProto::UINT8);
  w.typed_output("o_q", {1, kC, kH, kW}, ::onnx::TensorProto::INT8);
  for (auto [name, p] : {std::pair{"x", kX}, {"r", kR}, {"s", kS}, {"a", kA}, {"m", kM}, {"p", kP}})
    params(w, name, p);
  params(w, "i", kI, true);
  params(w, "o", kO, true);
  dq(w, "x_q", "x", "x");
  dq(w, "r_q", "r", "r");
  w.node("add", "Add", {"x", "r"}, {"s"});
  q(w, "s", "s", "s_q");
  dq(w, "s_q", "s", "s2");
  w.node("relu", "Relu", {"s2"}, {"a"});
  q(w, "a", "a", "a_q");
  dq(w, "a_q", "a", "a2");
  auto* pool = w.node("pool", "MaxPool", {"a2"}, {"pooled"});
  for (const char* attr : {"kernel_shape", "strides"}) {
    auto* at = pool->add_attribute();
    at->set_name(attr);
    at->set_type(::onnx::AttributeProto::INTS);
    at->add_ints(2);
    at->add_ints(2);
  }
  q(w, "pooled", "a", "pooled_q");
  dq(w, "pooled_q", "a", "pooled2");
  dq(w, "m_q", "m", "m");
  w.node("mul", "Mul", {"pooled2", "m"}, {"p"});
  q(w, "p", "p", "p_q");
  OnnxModelWriter::int_attr(w.node("cat", "Concat", {"pooled2", "pooled2"}, {"cat"}), "axis", 1);
  q(w, "cat", "a", "cat_q");
  dq(w, "i_q", "i", "i");
  w.node("sigmoid", "Sigmoid", {"i"}, {"o"});
  q(w, "o", "o", "o_q");
  const std::string path = testing::temp_path("infer_runtime_qdq_elementwise.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// ONNX's definitions, one float32 operation at a time.
float dequant(int v, Q p) { return static_cast<float>(v - p.zero) * p.scale; }
int quant(float v, Q p, int lo = 0, int hi = 255) {
  volatile float d = v / p.scale;
  return std::clamp(static_cast<int>(std::nearbyint(d)) + p.zero, lo, hi);
}

struct Outputs {
  std::vector<int> p, cat, o;
};

Outputs reference(const Data& d) {
  std::vector<int> a(kN);
  for (int64_t k = 0; k < kN; ++k) {
    volatile float fx = dequant(d.x[k], kX), fr = dequant(d.r[k], kR);
    volatile float sum = fx + fr;
    const int s_q = quant(sum, kS);
    a[k] = quant(std::max(0.0f, dequant(s_q, kS)), kA);
  }
  Outputs out;
  std::vector<int> pooled(kPooled);
  for (int64_t c = 0; c < kC; ++c)
    for (int64_t h = 0; h < kH / 2; ++h)
      for (int64_t w = 0; w < kW / 2; ++w) {
        int best = 0;
        for (int64_t dh = 0; dh < 2; ++dh)
          for (int64_t dw = 0; dw < 2; ++dw)
            best = std::max(best, a[(c * kH + 2 * h + dh) * kW + 2 * w + dw]);
        pooled[(c * kH / 2 + h) * kW / 2 + w] = best;
      }
  for (int64_t k = 0; k < kPooled; ++k) {
    volatile float prod = dequant(pooled[k], kA) * dequant(d.m[k / (kPooled / kC)], kM);
    out.p.push_back(quant(prod, kP));
  }
  out.cat = pooled;
  out.cat.insert(out.cat.end(), pooled.begin(), pooled.end());
  for (int64_t k = 0; k < kN; ++k) {
    const float v = dequant(d.i[k], kI);
    out.o.push_back(quant(1.0f / (1.0f + std::exp(-v)), kO, -128, 127));
  }
  return out;
}

Outputs run(const std::string& path, const Data& d, bool fused, std::string* ops) {
  SessionOptions o = tree_options({"cpu"});
  if (!fused) o.disabled_passes = {"qdq_binary_fusion", "qdq_lookup_fusion", "qdq_passthrough"};
  auto s = Session::create(path, o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  if (!s.is_ok()) return {};
  for (const auto& n : (*s)->plan().nodes) *ops += n.op_type + " ";
  auto out = (*s)->run({
      {"x_q", *Tensor::from_bytes(DataType::kUInt8, {1, kC, kH, kW}, d.x.data(), d.x.size())},
      {"r_q", *Tensor::from_bytes(DataType::kUInt8, {1, kC, kH, kW}, d.r.data(), d.r.size())},
      {"m_q", *Tensor::from_bytes(DataType::kUInt8, {1, kC, 1, 1}, d.m.data(), d.m.size())},
      {"i_q", *Tensor::from_bytes(DataType::kInt8, {1, kC, kH, kW}, d.i.data(), d.i.size())},
  });
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  Outputs r;
  for (const auto& named : *out) {
    std::vector<int>* dst = named.name == "p_q" ? &r.p : named.name == "cat_q" ? &r.cat : &r.o;
    const int64_t n = named.tensor.element_count();
    for (int64_t k = 0; k < n; ++k)
      dst->push_back(named.name == "o_q" ? int{named.tensor.data_as<int8_t>()[k]}
                                         : int{named.tensor.data_as<uint8_t>()[k]});
  }
  return r;
}

TEST(QdqElementwise, ActivationsStayEightBitAndMatchTheUnfusedGraph) {
  const Data d = make_data();
  const std::string path = model();
  std::string fused_ops, plain_ops;
  const Outputs fused = run(path, d, true, &fused_ops);
  const Outputs plain = run(path, d, false, &plain_ops);
  // No float op and no (de)quantization is left: the inputs and outputs are 8-bit.
  EXPECT_EQ(fused_ops, "QLinearAdd QLinearLookup MaxPool QLinearMul Concat QLinearLookup ");
  EXPECT_NE(plain_ops.find("DequantizeLinear"), std::string::npos) << plain_ops;

  EXPECT_EQ(fused.p, plain.p);
  EXPECT_EQ(fused.cat, plain.cat);
  EXPECT_EQ(fused.o, plain.o);

  const Outputs ref = reference(d);
  EXPECT_EQ(fused.p, ref.p);
  EXPECT_EQ(fused.cat, ref.cat);
  // Sigmoid: the plugin's exp may differ from std::exp in the last bit, which can move a
  // value sitting on a rounding tie of the output grid by one step.
  ASSERT_EQ(fused.o.size(), ref.o.size());
  int off = 0;
  for (size_t k = 0; k < ref.o.size(); ++k) {
    ASSERT_LE(std::abs(fused.o[k] - ref.o[k]), 1) << k;
    off += fused.o[k] != ref.o[k];
  }
  EXPECT_LE(off, 2);
  // The case exercises the Relu (zeros) and the upper saturation of the sum.
  EXPECT_GT(std::count(ref.cat.begin(), ref.cat.end(), 0), 0);
}

}  // namespace
}  // namespace infer
