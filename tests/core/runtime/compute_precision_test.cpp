// SessionOptions::precision (the deployment file's `precision`, --precision) through a
// whole Session on cpu: conv1 (3x3) -> Relu -> dw (depthwise 3x3) -> GlobalAveragePool ->
// Flatten -> fc (Gemm with a constant weight). With bf16 on a CPU with AVX512_BF16, conv1
// and fc compute their products from bfloat16-rounded inputs (the plan lists exactly
// those two; the depthwise conv stays float32); elsewhere, and with fp16 (no float16
// arithmetic on cpu), nothing is narrower and the outputs equal the fp32 run's. The
// reference is the network computed in double from the same data.
#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::OnnxModelWriter;
using testing::tree_options;

constexpr int64_t kC = 16, kM = 32, kH = 10, kW = 10, kClasses = 10;

struct Data {
  std::vector<float> x, w1, b1, wd, fc, fcb;
};

std::vector<float> random_values(size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

Data make_data() {
  std::mt19937 rng(11);
  Data d;
  d.x = random_values(kC * kH * kW, 1.0f, rng);
  d.w1 = random_values(kM * kC * 9, 0.2f, rng);
  d.b1 = random_values(kM, 0.1f, rng);
  d.wd = random_values(kM * 9, 0.3f, rng);
  d.fc = random_values(kM * kClasses, 0.5f, rng);
  d.fcb = random_values(kClasses, 0.1f, rng);
  return d;
}

void pads_1(::onnx::NodeProto* n) {
  auto* a = n->add_attribute();
  a->set_name("pads");
  a->set_type(::onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) a->add_ints(1);
}

std::string write_model(const Data& d) {
  OnnxModelWriter w;
  w.input("x", {1, kC, kH, kW});
  w.output("y", {1, kClasses});
  w.initializer("w1", {kM, kC, 3, 3}, d.w1);
  w.initializer("b1", {kM}, d.b1);
  w.initializer("wd", {kM, 1, 3, 3}, d.wd);
  w.initializer("fc_w", {kM, kClasses}, d.fc);
  w.initializer("fc_b", {kClasses}, d.fcb);
  pads_1(w.node("conv1", "Conv", {"x", "w1", "b1"}, {"c1"}));
  w.node("relu1", "Relu", {"c1"}, {"r1"});
  auto* dw = w.node("dw", "Conv", {"r1", "wd"}, {"d1"});
  pads_1(dw);
  OnnxModelWriter::int_attr(dw, "group", kM);
  w.node("gap", "GlobalAveragePool", {"d1"}, {"g"});
  w.node("flat", "Flatten", {"g"}, {"f"});
  w.node("fc", "Gemm", {"f", "fc_w", "fc_b"}, {"y"});
  const std::string path = testing::temp_path("infer_runtime_compute_precision.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// The network in double.
std::vector<double> reference(const Data& d) {
  auto conv3 = [](const std::vector<double>& in, int64_t cin, const std::vector<float>& w,
                  int64_t m, bool depthwise, int64_t cout) {
    std::vector<double> out(cout * kH * kW, 0.0);
    for (int64_t oh = 0; oh < kH; ++oh)
      for (int64_t ow = 0; ow < kW; ++ow) {
        double acc = 0;
        const int64_t c0 = depthwise ? m : 0, c1 = depthwise ? m + 1 : cin;
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
              const int64_t wc = depthwise ? 0 : c;
              acc += in[(c * kH + ih) * kW + iw] * w[((m * (depthwise ? 1 : cin) + wc) * 3 + kh) * 3 + kw];
            }
        out[(m * kH + oh) * kW + ow] = acc;
      }
    return out;
  };
  std::vector<double> x(d.x.begin(), d.x.end());
  std::vector<double> r1(kM * kH * kW);
  for (int64_t m = 0; m < kM; ++m) {
    const std::vector<double> c = conv3(x, kC, d.w1, m, false, kM);
    for (int64_t i = 0; i < kH * kW; ++i)
      r1[m * kH * kW + i] = std::max(0.0, c[m * kH * kW + i] + d.b1[m]);
  }
  std::vector<double> g(kM);
  for (int64_t m = 0; m < kM; ++m) {
    const std::vector<double> c = conv3(r1, kM, d.wd, m, true, kM);
    double s = 0;
    for (int64_t i = 0; i < kH * kW; ++i) s += c[m * kH * kW + i];
    g[m] = s / static_cast<double>(kH * kW);
  }
  std::vector<double> y(kClasses);
  for (int64_t j = 0; j < kClasses; ++j) {
    double s = d.fcb[j];
    for (int64_t m = 0; m < kM; ++m) s += g[m] * d.fc[m * kClasses + j];
    y[j] = s;
  }
  return y;
}

// Whether the cpu backend has a bfloat16 GEMM here: x86-64 with AVX-512F and AVX512_BF16
// (cpuid leaf 7) and the OS saving the zmm state.
bool cpu_has_bf16_gemm() {
#if defined(__x86_64__)
  unsigned a, b, c, dx;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &dx) || (b & (1u << 16)) == 0) return false;
  if (!__get_cpuid_count(1, 0, &a, &b, &c, &dx) || (c & (1u << 27)) == 0) return false;
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0xe6) != 0xe6) return false;
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &dx)) return false;
  return (a & (1u << 5)) != 0;
#else
  return false;
#endif
}

struct Outcome {
  std::vector<float> y;
  std::vector<std::string> reduced;
  std::string text;
};

Outcome run(const std::string& model, const Data& d, Precision precision) {
  SessionOptions o = tree_options({"cpu"});
  o.precision = precision;
  auto s = Session::create(model, o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  if (!s.is_ok()) return {};
  Outcome r;
  r.reduced = (*s)->plan().reduced_precision;
  r.text = (*s)->plan().to_text();
  EXPECT_EQ((*s)->plan().requested_precision, precision);
  auto out = (*s)->run({{"x", *Tensor::from_bytes(DataType::kFloat32, {1, kC, kH, kW}, d.x.data(),
                                                   d.x.size() * sizeof(float))}});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return r;
  const float* y = (*out)[0].tensor.data_as<float>();
  r.y.assign(y, y + kClasses);
  return r;
}

double max_rel_error(const std::vector<float>& y, const std::vector<double>& ref) {
  double scale = 0, err = 0;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < ref.size(); ++i) err = std::max(err, std::fabs(y[i] - ref[i]));
  return err / scale;
}

TEST(ComputePrecision, Bf16ComputesConvAndGemmNarrowerWhereTheCpuHasIt) {
  const Data d = make_data();
  const std::string model = write_model(d);
  const std::vector<double> ref = reference(d);
  const Outcome fp32 = run(model, d, Precision::kFp32);
  const Outcome bf16 = run(model, d, Precision::kBf16);
  ASSERT_EQ(fp32.y.size(), static_cast<size_t>(kClasses));
  ASSERT_EQ(bf16.y.size(), static_cast<size_t>(kClasses));
  EXPECT_TRUE(fp32.reduced.empty());
  EXPECT_LT(max_rel_error(fp32.y, ref), 1e-5);
  if (cpu_has_bf16_gemm()) {
    ASSERT_EQ(bf16.reduced.size(), 2u) << bf16.text;
    EXPECT_EQ(bf16.reduced[0], "node 'conv1' (ai.infer:FusedConv): bfloat16 on cpu");  // Conv+Relu fused
    EXPECT_EQ(bf16.reduced[1], "node 'fc' (Gemm): bfloat16 on cpu");
    EXPECT_NE(bf16.text.find("compute precision bf16: 2 nodes computed narrower than float32"),
              std::string::npos)
        << bf16.text;
    // bfloat16 keeps 8 significant bits: the products' inputs are off by up to 2^-9
    // relative, averaged over 144 and 32 terms. Random values are not representable,
    // so the result must differ from the float32 run's.
    EXPECT_LT(max_rel_error(bf16.y, ref), 2e-2);
    EXPECT_GT(max_rel_error(bf16.y, ref), 1e-5);
    EXPECT_NE(bf16.y, fp32.y);
  } else {
    EXPECT_TRUE(bf16.reduced.empty()) << bf16.text;
    EXPECT_EQ(bf16.y, fp32.y);
  }
}

TEST(ComputePrecision, Fp16ComputesInFloat32OnCpu) {
  const Data d = make_data();
  const std::string model = write_model(d);
  const Outcome fp32 = run(model, d, Precision::kFp32);
  const Outcome fp16 = run(model, d, Precision::kFp16);
  EXPECT_TRUE(fp16.reduced.empty());
  EXPECT_NE(fp16.text.find("compute precision fp16: 0 nodes computed narrower than float32"),
            std::string::npos)
      << fp16.text;
  ASSERT_EQ(fp16.y.size(), static_cast<size_t>(kClasses));
  EXPECT_EQ(fp16.y, fp32.y);
}

}  // namespace
}  // namespace infer
