// The quantized products of the cpu plugin (ConvInteger, QLinearConv, MatMulInteger,
// QLinearMatMul) on the SIMD library's integer GEMM, against naive references written
// here (int64 sums over the definitions of the ops), with exact equality: random shapes
// at tile edges, every uint8/int8 pairing, zero points per tensor and per channel,
// groups, strides, pads, dilations, 1x1 convolutions read in place, images large enough
// to be unrolled in several column blocks, weights given at run time and as constants
// (packed once at creation), and requantization that saturates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

constexpr infer_dtype kU8 = INFER_DTYPE_UINT8;
constexpr infer_dtype kI8 = INFER_DTYPE_INT8;
constexpr infer_dtype kI32 = INFER_DTYPE_INT32;

// An 8-bit tensor's values as int32, with its dtype.
struct Q8 {
  infer_dtype dtype = kU8;
  std::vector<int64_t> dims;
  std::vector<int32_t> v;

  HostTensor host() const {
    std::vector<uint8_t> b(v.size());
    for (size_t i = 0; i < v.size(); ++i) b[i] = static_cast<uint8_t>(v[i] & 0xff);
    return HostTensor::make(dtype, dims, b);
  }
};

int32_t lo(infer_dtype t) { return t == kU8 ? 0 : -128; }
int32_t hi(infer_dtype t) { return t == kU8 ? 255 : 127; }

Q8 random_q8(std::mt19937& rng, infer_dtype t, std::vector<int64_t> dims) {
  Q8 q;
  q.dtype = t;
  q.dims = std::move(dims);
  int64_t n = 1;
  for (int64_t d : q.dims) n *= d;
  std::uniform_int_distribution<int32_t> dist(lo(t), hi(t));
  q.v.resize(static_cast<size_t>(n));
  for (int32_t& x : q.v) x = dist(rng);
  return q;
}

HostTensor f32(std::vector<int64_t> dims, std::vector<float> v) {
  return HostTensor::f32(std::move(dims), std::move(v));
}

// y = saturate(nearbyint(float(acc + bias) * mult) + zero) as the ops define it.
int32_t requantize(int64_t acc, int32_t bias, float mult, int32_t zero, infer_dtype t) {
  const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(bias));
  const float r = std::nearbyint(static_cast<float>(v) * mult);
  const float q = std::min(static_cast<float>(hi(t)),
                           std::max(static_cast<float>(lo(t)), r + static_cast<float>(zero)));
  return static_cast<int32_t>(q);
}

std::vector<int32_t> values_of(const HostTensor& t) {
  std::vector<int32_t> out;
  if (t.dtype == kI32) {
    const auto v = t.as<int32_t>();
    out.assign(v.begin(), v.end());
  } else if (t.dtype == kU8) {
    for (uint8_t b : t.bytes) out.push_back(b);
  } else {
    for (uint8_t b : t.bytes) out.push_back(static_cast<int8_t>(b));
  }
  return out;
}

class CpuQuantGemm : public ::testing::Test {
 public:
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

  // Runs one node; inputs listed in `constant` are constants (packed at creation).
  RunResult run(const std::string& op, const std::vector<std::optional<HostTensor>>& inputs,
                infer_dtype out, const std::vector<AttrSpec>& attrs,
                const std::vector<size_t>& constant, int64_t opset = 10) {
    GraphBuilder g;
    std::vector<TensorSpec> ins;
    std::vector<HostTensor> feed;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i]) {
        ins.push_back(TensorSpec::omitted());
        continue;
      }
      const HostTensor& t = *inputs[i];
      const std::string name = "in" + std::to_string(i);
      if (std::find(constant.begin(), constant.end(), i) != constant.end()) {
        ins.push_back(TensorSpec::constant(name, t.dtype, t.dims, t.bytes));
      } else {
        ins.push_back(TensorSpec::of(name, t.dtype, t.dims));
        feed.push_back(t);
      }
    }
    TensorSpec o = TensorSpec::of("y", out, {});
    o.unknown_rank = true;
    const infer_graph_view* graph = g.single_node_graph(op, ins, {o}, attrs, opset, "n");
    return run_graph(*plugin_, graph, feed);
  }

  std::unique_ptr<PluginHandle> plugin_;
};

// ---- convolutions ----------------------------------------------------------------

struct ConvCase {
  infer_dtype xt = kU8, wt = kI8;
  int64_t n = 1, c = 4, m = 8, g = 1;
  std::vector<int64_t> in = {7, 9}, k = {3, 3}, stride = {1, 1}, dil = {1, 1}, pads = {1, 1, 1, 1};
  bool per_channel_wz = false;
};

struct ConvRef {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> acc;  // [n, m, out...]
};

ConvRef conv_reference(const ConvCase& cc, const Q8& x, const Q8& w, int32_t xz,
                       const std::vector<int32_t>& wz) {
  const size_t nd = cc.in.size();
  std::vector<int64_t> out(nd);
  for (size_t d = 0; d < nd; ++d)
    out[d] =
        (cc.in[d] + cc.pads[d] + cc.pads[d + nd] - cc.dil[d] * (cc.k[d] - 1) - 1) / cc.stride[d] +
        1;
  int64_t in_n = 1, out_n = 1, kprod = 1;
  for (size_t d = 0; d < nd; ++d) {
    in_n *= cc.in[d];
    out_n *= out[d];
    kprod *= cc.k[d];
  }
  const int64_t cg = cc.c / cc.g, mg = cc.m / cc.g;
  ConvRef r;
  r.out_dims = {cc.n, cc.m};
  r.out_dims.insert(r.out_dims.end(), out.begin(), out.end());
  r.acc.assign(static_cast<size_t>(cc.n * cc.m * out_n), 0);
  std::vector<int64_t> opos(nd), kpos(nd);
  for (int64_t b = 0; b < cc.n; ++b)
    for (int64_t m = 0; m < cc.m; ++m) {
      const int64_t g = m / mg;
      for (int64_t o = 0; o < out_n; ++o) {
        int64_t rem = o;
        for (size_t d = nd; d-- > 0;) {
          opos[d] = rem % out[d];
          rem /= out[d];
        }
        int64_t sum = 0;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kk = 0; kk < kprod; ++kk) {
            int64_t kr = kk, off = 0;
            bool inside = true;
            for (size_t d = nd; d-- > 0;) {
              kpos[d] = kr % cc.k[d];
              kr /= cc.k[d];
            }
            for (size_t d = 0; d < nd; ++d) {
              const int64_t p = opos[d] * cc.stride[d] + kpos[d] * cc.dil[d] - cc.pads[d];
              inside = inside && p >= 0 && p < cc.in[d];
              off = off * cc.in[d] + p;
            }
            if (!inside) continue;  // padding holds the zero point: contributes 0
            const int64_t xv =
                x.v[static_cast<size_t>((b * cc.c + g * cg + ci) * in_n + off)] - int64_t{xz};
            const int64_t wv =
                w.v[static_cast<size_t>((m * cg + ci) * kprod + kk)] - int64_t{wz[m]};
            sum += xv * wv;
          }
        r.acc[static_cast<size_t>(m * out_n + b * cc.m * out_n + o)] = sum;
      }
    }
  return r;
}

void check_conv(CpuQuantGemm& t, const ConvCase& cc, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> xd = {cc.n, cc.c};
  xd.insert(xd.end(), cc.in.begin(), cc.in.end());
  std::vector<int64_t> wd = {cc.m, cc.c / cc.g};
  wd.insert(wd.end(), cc.k.begin(), cc.k.end());
  const Q8 x = random_q8(rng, cc.xt, xd);
  const Q8 w = random_q8(rng, cc.wt, wd);
  std::uniform_int_distribution<int32_t> xzd(lo(cc.xt), hi(cc.xt)), wzd(lo(cc.wt), hi(cc.wt));
  const int32_t xz = xzd(rng);
  std::vector<int32_t> wz(static_cast<size_t>(cc.m), wzd(rng));
  if (cc.per_channel_wz)
    for (int32_t& z : wz) z = wzd(rng);
  Q8 xzq{cc.xt, {}, {xz}};
  Q8 wzq{cc.wt, cc.per_channel_wz ? std::vector<int64_t>{cc.m} : std::vector<int64_t>{},
         cc.per_channel_wz ? wz : std::vector<int32_t>{wz[0]}};
  const std::vector<AttrSpec> attrs = {
      AttrSpec::Int("group", cc.g), AttrSpec::Ints("strides", cc.stride),
      AttrSpec::Ints("dilations", cc.dil), AttrSpec::Ints("pads", cc.pads)};
  const ConvRef ref = conv_reference(cc, x, w, xz, wz);

  // ConvInteger, weights at run time and constant.
  for (bool constant : {false, true}) {
    SCOPED_TRACE(constant ? "ConvInteger, constant w" : "ConvInteger, w at run time");
    RunResult r = t.run("ConvInteger", {x.host(), w.host(), xzq.host(), wzq.host()}, kI32, attrs,
                        constant ? std::vector<size_t>{1, 3} : std::vector<size_t>{}, 10);
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs[0].dims, ref.out_dims);
    const std::vector<int32_t> got = values_of(r.outputs[0]);
    ASSERT_EQ(got.size(), ref.acc.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], static_cast<int32_t>(ref.acc[i])) << "element " << i;
  }

  // QLinearConv: scales chosen so that outputs saturate at both ends as well as land
  // inside the range; per-channel w scales and an int32 bias.
  for (infer_dtype yt : {kU8, kI8}) {
    SCOPED_TRACE(yt == kU8 ? "QLinearConv, uint8 y" : "QLinearConv, int8 y");
    int64_t amax = 1;
    for (int64_t a : ref.acc) amax = std::max<int64_t>(amax, std::llabs(a));
    const float xs = 0.5f, ys = 1.0f;
    std::vector<float> ws(static_cast<size_t>(cc.m));
    std::uniform_real_distribution<float> wsd(100.0f / static_cast<float>(amax),
                                              1000.0f / static_cast<float>(amax));
    for (float& s : ws) s = wsd(rng);
    std::vector<int32_t> bias(static_cast<size_t>(cc.m));
    std::uniform_int_distribution<int32_t> bd(-static_cast<int32_t>(amax / 4),
                                              static_cast<int32_t>(amax / 4));
    for (int32_t& b : bias) b = bd(rng);
    const int32_t yz = yt == kU8 ? 100 : -20;
    RunResult r = t.run("QLinearConv",
                        {x.host(), f32({}, {xs}), xzq.host(), w.host(), f32({cc.m}, ws), wzq.host(),
                         f32({}, {ys}), Q8{yt, {}, {yz}}.host(), HostTensor::i32({cc.m}, bias)},
                        yt, attrs, std::vector<size_t>{3, 5, 8}, 10);
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs[0].dims, ref.out_dims);
    const std::vector<int32_t> got = values_of(r.outputs[0]);
    int64_t out_n = 1;
    for (size_t d = 2; d < ref.out_dims.size(); ++d) out_n *= ref.out_dims[d];
    bool saturated = false, inside = false;
    for (size_t i = 0; i < got.size(); ++i) {
      const size_t m = (i / static_cast<size_t>(out_n)) % static_cast<size_t>(cc.m);
      const float mult = xs * ws[m] / ys;
      const int32_t want = requantize(ref.acc[i], bias[m], mult, yz, yt);
      ASSERT_EQ(got[i], want) << "element " << i;
      const bool at_end = want == lo(yt) || want == hi(yt);
      saturated = saturated || at_end;
      inside = inside || !at_end;
    }
    if (ref.acc.size() > 64) {
      EXPECT_TRUE(saturated && inside) << "the case should both saturate and stay in range";
    }
  }
}

TEST_F(CpuQuantGemm, ConvIntegerAndQLinearConvEveryStoragePairing) {
  uint32_t seed = 1;
  for (infer_dtype xt : {kU8, kI8})
    for (infer_dtype wt : {kU8, kI8}) {
      ConvCase cc;
      cc.xt = xt;
      cc.wt = wt;
      cc.c = 5;
      cc.m = 17;
      cc.per_channel_wz = wt == kI8;
      SCOPED_TRACE(std::string(xt == kU8 ? "x uint8" : "x int8") +
                   (wt == kU8 ? ", w uint8" : ", w int8"));
      check_conv(*this, cc, seed++);
    }
}

TEST_F(CpuQuantGemm, ConvShapes) {
  std::vector<ConvCase> cases;
  {  // 1x1 stride 1: the image is read in place
    ConvCase c;
    c.c = 33;
    c.m = 16;
    c.in = {5, 13};
    c.k = {1, 1};
    c.pads = {0, 0, 0, 0};
    c.n = 2;
    cases.push_back(c);
  }
  {  // strided, asymmetric pads, dilation, groups
    ConvCase c;
    c.c = 6;
    c.m = 9;
    c.g = 3;
    c.in = {11, 10};
    c.stride = {2, 3};
    c.dil = {2, 1};
    c.pads = {0, 2, 1, 0};
    c.per_channel_wz = true;
    cases.push_back(c);
  }
  {  // depthwise
    ConvCase c;
    c.c = 8;
    c.m = 8;
    c.g = 8;
    c.in = {9, 9};
    cases.push_back(c);
  }
  {  // 1-D and 3-D (the general unrolling)
    ConvCase c;
    c.in = {20};
    c.k = {5};
    c.stride = {2};
    c.dil = {1};
    c.pads = {2, 1};
    c.m = 3;
    cases.push_back(c);
    ConvCase d;
    d.c = 3;
    d.m = 5;
    d.in = {4, 5, 6};
    d.k = {2, 3, 3};
    d.stride = {1, 2, 1};
    d.dil = {1, 1, 2};
    d.pads = {1, 0, 2, 0, 1, 2};
    d.per_channel_wz = true;
    cases.push_back(d);
  }
  {  // stride 1, images at least 14 wide: read in place from the padded plane (batch,
     // groups, per-channel zero points; dilation with asymmetric pads; no padding)
    ConvCase c;
    c.n = 2;
    c.c = 6;
    c.m = 10;
    c.g = 2;
    c.in = {16, 20};
    c.per_channel_wz = true;
    cases.push_back(c);
    ConvCase d;
    d.c = 5;
    d.m = 7;
    d.in = {18, 30};
    d.k = {3, 5};
    d.dil = {2, 1};
    d.pads = {2, 1, 0, 3};
    cases.push_back(d);
    ConvCase e;
    e.c = 3;
    e.m = 33;
    e.in = {12, 24};
    e.pads = {0, 0, 0, 0};
    e.xt = kI8;
    cases.push_back(e);
  }
  {  // strided, read in place from phase planes: ResNet's 7x7 stride-2 stem, a 1x1
     // stride-2 downsample, a dilated 3x3 with stride 2 and asymmetric pads
    ConvCase c;
    c.c = 3;
    c.m = 9;
    c.in = {30, 60};
    c.k = {7, 7};
    c.stride = {2, 2};
    c.pads = {3, 3, 3, 3};
    cases.push_back(c);
    ConvCase d;
    d.c = 6;
    d.m = 10;
    d.in = {28, 28};
    d.k = {1, 1};
    d.stride = {2, 2};
    d.pads = {0, 0, 0, 0};
    d.per_channel_wz = true;
    cases.push_back(d);
    ConvCase e;
    e.c = 4;
    e.m = 7;
    e.in = {21, 40};
    e.stride = {2, 2};
    e.dil = {2, 1};
    e.pads = {2, 1, 1, 0};
    e.xt = kI8;
    cases.push_back(e);
  }
  {  // K = 4104 unrolled rows: the image is unrolled in several column blocks
    ConvCase c;
    c.c = 456;
    c.m = 4;
    c.in = {40, 40};
    c.xt = kI8;
    cases.push_back(c);
  }
  uint32_t seed = 100;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE("case " + std::to_string(seed - 100));
    check_conv(*this, c, seed++);
  }
}

// ---- matrix products ----------------------------------------------------------------

void check_matmul(CpuQuantGemm& t, infer_dtype at, infer_dtype bt, std::vector<int64_t> adims,
                  int64_t N, bool per_column, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t K = adims.back();
  const Q8 a = random_q8(rng, at, adims);
  const Q8 b = random_q8(rng, bt, {K, N});
  std::uniform_int_distribution<int32_t> azd(lo(at), hi(at)), bzd(lo(bt), hi(bt));
  const int32_t az = azd(rng);
  std::vector<int32_t> bz(static_cast<size_t>(N), bzd(rng));
  if (per_column)
    for (int32_t& z : bz) z = bzd(rng);
  const int64_t M = static_cast<int64_t>(a.v.size()) / K;
  std::vector<int64_t> acc(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int64_t s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += (int64_t{a.v[static_cast<size_t>(i * K + k)]} - az) *
             (int64_t{b.v[static_cast<size_t>(k * N + j)]} - bz[static_cast<size_t>(j)]);
      acc[static_cast<size_t>(i * N + j)] = s;
    }
  std::vector<int64_t> ydims(adims.begin(), adims.end() - 1);
  ydims.push_back(N);
  const Q8 azq{at, {}, {az}};
  const Q8 bzq{bt, per_column ? std::vector<int64_t>{N} : std::vector<int64_t>{},
               per_column ? bz : std::vector<int32_t>{bz[0]}};
  for (bool constant : {false, true}) {
    SCOPED_TRACE(constant ? "constant b" : "b at run time");
    RunResult r = t.run("MatMulInteger", {a.host(), b.host(), azq.host(), bzq.host()}, kI32, {},
                        constant ? std::vector<size_t>{1, 3} : std::vector<size_t>{});
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs[0].dims, ydims);
    const std::vector<int32_t> got = values_of(r.outputs[0]);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], static_cast<int32_t>(acc[i])) << "element " << i;
  }
  int64_t amax = 1;
  for (int64_t v : acc) amax = std::max<int64_t>(amax, std::llabs(v));
  std::vector<float> bs(static_cast<size_t>(per_column ? N : 1));
  std::uniform_real_distribution<float> bsd(100.0f / static_cast<float>(amax),
                                            900.0f / static_cast<float>(amax));
  for (float& s : bs) s = bsd(rng);
  const float as = 0.25f, ys = 0.5f;
  for (infer_dtype yt : {kU8, kI8}) {
    const int32_t yz = yt == kU8 ? 128 : 3;
    RunResult r = t.run("QLinearMatMul",
                        {a.host(), f32({}, {as}), azq.host(), b.host(),
                         f32(per_column ? std::vector<int64_t>{N} : std::vector<int64_t>{}, bs),
                         bzq.host(), f32({}, {ys}), Q8{yt, {}, {yz}}.host()},
                        yt, {}, {3, 4, 5});
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs[0].dims, ydims);
    const std::vector<int32_t> got = values_of(r.outputs[0]);
    for (size_t i = 0; i < got.size(); ++i) {
      const size_t j = i % static_cast<size_t>(N);
      const float mult = as * bs[per_column ? j : 0] / ys;
      ASSERT_EQ(got[i], requantize(acc[i], 0, mult, yz, yt)) << "element " << i;
    }
  }
}

TEST_F(CpuQuantGemm, MatMulIntegerAndQLinearMatMul) {
  uint32_t seed = 200;
  for (infer_dtype at : {kU8, kI8})
    for (infer_dtype bt : {kU8, kI8}) {
      SCOPED_TRACE(std::string(at == kU8 ? "a uint8" : "a int8") +
                   (bt == kU8 ? ", b uint8" : ", b int8"));
      check_matmul(*this, at, bt, {2, 7, 33}, 19, bt == kI8, seed++);
    }
  // BERT-like: [batch, tokens, hidden] x [hidden, out]; a vector; K not a multiple of 4.
  check_matmul(*this, kU8, kI8, {1, 24, 256}, 96, true, seed++);
  check_matmul(*this, kU8, kI8, {45}, 17, false, seed++);
  check_matmul(*this, kI8, kU8, {3, 1, 5}, 1, false, seed++);
}

}  // namespace
}  // namespace infer::test
