// Planned memory for the cpu plugin's intermediate values: the placement algorithm on
// synthetic lifetimes (memory_plan.hpp is header-only and ABI-free, so it is checked
// directly), and, through the ABI, that a warmed-up run makes no host_alloc call for
// intermediates, that concurrent runs each get their own memory, and that values whose
// size depends on the data stay correct.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "memory_plan.hpp"
#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

using cpu::MemoryPlan;
using cpu::PlanInterval;

size_t round64(size_t n) { return (n + 63) / 64 * 64; }

// Every pair of intervals live at the same step must have disjoint byte ranges, every
// offset must be aligned and the block must hold every range.
void expect_valid(const std::vector<PlanInterval>& iv, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), iv.size());
  ASSERT_EQ(plan.sizes.size(), iv.size());
  EXPECT_EQ(plan.total % 64, 0u);
  for (size_t i = 0; i < iv.size(); ++i) {
    EXPECT_EQ(plan.sizes[i], round64(iv[i].bytes)) << "interval " << i;
    EXPECT_EQ(plan.offsets[i] % 64, 0u) << "interval " << i;
    EXPECT_LE(plan.offsets[i] + plan.sizes[i], plan.total) << "interval " << i;
    for (size_t j = i + 1; j < iv.size(); ++j) {
      const bool live_together = iv[i].first <= iv[j].last && iv[j].first <= iv[i].last;
      if (!live_together || plan.sizes[i] == 0 || plan.sizes[j] == 0) continue;
      const bool disjoint = plan.offsets[i] + plan.sizes[i] <= plan.offsets[j] ||
                            plan.offsets[j] + plan.sizes[j] <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "intervals " << i << " and " << j << " overlap";
    }
  }
}

TEST(MemoryPlanAlgorithm, RandomLifetimesNeverShareLiveBytes) {
  std::mt19937 gen(7);
  for (int round = 0; round < 50; ++round) {
    const int steps = 1 + static_cast<int>(gen() % 40);
    const size_t n = 1 + gen() % 60;
    std::vector<PlanInterval> iv(n);
    size_t sum = 0;
    for (PlanInterval& v : iv) {
      v.first = static_cast<int>(gen() % steps);
      v.last = v.first + static_cast<int>(gen() % 6);
      v.bytes = gen() % 5 == 0 ? 0 : 1 + gen() % 5000;  // some empty tensors
      sum += round64(v.bytes);
    }
    MemoryPlan plan = cpu::plan_memory(iv);
    expect_valid(iv, plan);
    EXPECT_LE(plan.total, sum);
    EXPECT_GE(plan.total, cpu::peak_live_bytes(iv)) << "no plan beats the live peak";
  }
}

TEST(MemoryPlanAlgorithm, ChainNeedsOnlyTheLargestAdjacentPair) {
  // Value i is produced by step i and read by step i + 1: only neighbours are live
  // together, so the optimum is the largest sum of two neighbours.
  const std::vector<std::vector<size_t>> chains = {
      {100, 300, 200, 50},                    // mixed
      {6400, 3200, 1600, 800, 400, 200},      // shrinking
      {64, 128, 192, 256, 320, 384},          // growing
      {640, 576, 320, 512},                   // a small value between two big ones
      {4096, 64, 4096, 64, 4096, 64, 4096}};  // alternating
  for (const auto& sizes : chains) {
    std::vector<PlanInterval> iv;
    size_t best_pair = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      iv.push_back({static_cast<int>(i), static_cast<int>(i) + 1, sizes[i]});
      if (i + 1 < sizes.size())
        best_pair = std::max(best_pair, round64(sizes[i]) + round64(sizes[i + 1]));
    }
    MemoryPlan plan = cpu::plan_memory(iv);
    expect_valid(iv, plan);
    EXPECT_EQ(plan.total, best_pair) << "chain starting with " << sizes[0];
  }
}

TEST(MemoryPlanAlgorithm, DisjointLifetimesShareOneRangeAndEmptyValuesTakeNothing) {
  std::vector<PlanInterval> iv = {{0, 0, 1000}, {1, 1, 700}, {2, 3, 64}, {2, 2, 0}};
  MemoryPlan plan = cpu::plan_memory(iv);
  expect_valid(iv, plan);
  EXPECT_EQ(plan.total, 1024u);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.sizes[3], 0u);
  EXPECT_EQ(cpu::plan_memory({}).total, 0u);
}

// ---- through the ABI ---------------------------------------------------------------

// Counts the plugin's host_alloc calls by swapping the test host's entry for one that
// counts and forwards. The plugin reads the services table through the pointer it was
// created with, so the swap takes effect at once; the destructor puts it back.
class AllocCounter {
 public:
  explicit AllocCounter(PluginHandle& plugin)
      : services_(const_cast<infer_host_services*>(plugin.services())) {
    original_ = services_->host_alloc;
    services_->host_alloc = &AllocCounter::counting_alloc;
  }
  ~AllocCounter() { services_->host_alloc = original_; }
  AllocCounter(const AllocCounter&) = delete;
  AllocCounter& operator=(const AllocCounter&) = delete;
  int64_t count() const { return calls_.load(); }

 private:
  static void* counting_alloc(void* ctx, size_t size, size_t alignment) {
    calls_.fetch_add(1);
    return original_(ctx, size, alignment);
  }
  infer_host_services* services_;
  static inline std::atomic<int64_t> calls_{0};
  static inline void* (*original_)(void*, size_t, size_t) = nullptr;
};

class CpuMemoryPlan : public ::testing::Test {
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
  // host_alloc calls of one run of `exe`.
  int64_t allocs_of_run(const CompiledGraph& exe, const std::vector<HostTensor>& inputs,
                        RunResult* result) {
    AllocCounter counter(*plugin_);
    const int64_t before = counter.count();
    *result = exe.run(inputs);
    return counter.count() - before;
  }
  std::unique_ptr<PluginHandle> plugin_;
};

// y = relu(x) + sigmoid(relu(x)) * 2, through five intermediate values, with every
// shape given (one plan from the declared shapes) or every dim symbolic (a plan per
// signature, recorded by the first run).
const infer_graph_view* chain_graph(GraphBuilder& g, bool static_shapes) {
  const std::vector<int64_t> dims = static_shapes ? std::vector<int64_t>{4, 16}
                                                  : std::vector<int64_t>{-1, -1};
  g.value(TensorSpec::f32("x", dims));
  for (const char* v : {"r", "s", "t", "u"}) g.value(TensorSpec::f32(v, dims));
  g.value(TensorSpec::constant<float>("two", INFER_DTYPE_FLOAT32, {}, {2.0f}));
  g.value(TensorSpec::f32("y", dims));
  g.node_by_name("Relu", {"x"}, {"r"});
  g.node_by_name("Sigmoid", {"r"}, {"s"});
  g.node_by_name("Mul", {"s", "two"}, {"t"});
  g.node_by_name("Neg", {"t"}, {"u"});
  g.node_by_name("Sub", {"r", "u"}, {"y"});
  return g.graph({"x"}, {"y"});
}

// One node, same inputs and outputs as chain_graph: what a run costs without any
// intermediate value (the input and output buffers).
const infer_graph_view* single_graph(GraphBuilder& g) {
  return g.single_node_graph("Relu", {TensorSpec::f32("x", {-1, -1})},
                             {TensorSpec::f32("y", {-1, -1})});
}

std::vector<float> chain_reference(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double r = std::max(0.0, static_cast<double>(x[i]));
    y[i] = static_cast<float>(r + 2.0 / (1.0 + std::exp(-r)));
  }
  return y;
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i) - static_cast<float>(n) / 2);
  return v;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
}

TEST_F(CpuMemoryPlan, WarmRunAllocatesNoIntermediates) {
  GraphBuilder gs;
  auto single = CompiledGraph::compile(*plugin_, single_graph(gs));
  ASSERT_TRUE(single);
  const std::vector<float> x = ramp(64, 0.25f);
  RunResult r;
  allocs_of_run(*single, {HostTensor::f32({4, 16}, x)}, &r);
  ASSERT_TRUE(r.ok()) << r.status.message;
  const int64_t io_allocs = allocs_of_run(*single, {HostTensor::f32({4, 16}, x)}, &r);
  ASSERT_TRUE(r.ok()) << r.status.message;

  for (bool static_shapes : {true, false}) {
    SCOPED_TRACE(static_shapes ? "static shapes" : "symbolic shapes");
    GraphBuilder g;
    auto exe = CompiledGraph::compile(*plugin_, chain_graph(g, static_shapes));
    ASSERT_TRUE(exe);
    const int64_t first = allocs_of_run(*exe, {HostTensor::f32({4, 16}, x)}, &r);
    ASSERT_TRUE(r.ok()) << r.status.message;
    expect_near_all(r.outputs[0].as<float>(), chain_reference(x));
    // The first run allocates the plan's block (static shapes), or each value while it
    // records their sizes (symbolic shapes); then the next run allocates the block.
    if (static_shapes) {
      EXPECT_EQ(first, io_allocs + 1);
    } else {
      EXPECT_EQ(first, io_allocs + 4) << "r, s, t and u";
      EXPECT_EQ(allocs_of_run(*exe, {HostTensor::f32({4, 16}, x)}, &r), io_allocs + 1);
      ASSERT_TRUE(r.ok()) << r.status.message;
    }
    for (int run = 0; run < 3; ++run) {
      const std::vector<float> xr = ramp(64, 0.1f * static_cast<float>(run + 1));
      EXPECT_EQ(allocs_of_run(*exe, {HostTensor::f32({4, 16}, xr)}, &r), io_allocs)
          << "run " << run;
      ASSERT_TRUE(r.ok()) << r.status.message;
      expect_near_all(r.outputs[0].as<float>(), chain_reference(xr));
    }
  }
}

TEST_F(CpuMemoryPlan, EachSignatureGetsItsPlanAndEvictedOnesComeBack) {
  GraphBuilder gs;
  auto single = CompiledGraph::compile(*plugin_, single_graph(gs));
  ASSERT_TRUE(single);
  GraphBuilder g;
  auto exe = CompiledGraph::compile(*plugin_, chain_graph(g, false));
  ASSERT_TRUE(exe);
  RunResult r;
  // Twelve shapes, more than the cache keeps, twice over: the second pass re-records
  // the evicted ones; every run must be right.
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t rows = 1; rows <= 12; ++rows) {
      const std::vector<float> x = ramp(static_cast<size_t>(rows * 5), 0.3f);
      allocs_of_run(*exe, {HostTensor::f32({rows, 5}, x)}, &r);
      ASSERT_TRUE(r.ok()) << r.status.message;
      EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{rows, 5}));
      expect_near_all(r.outputs[0].as<float>(), chain_reference(x));
    }
  // The shape used last is cached: after one run that makes its block, its runs
  // allocate what a graph without intermediates does.
  const std::vector<float> x = ramp(60, 0.2f);
  allocs_of_run(*single, {HostTensor::f32({12, 5}, x)}, &r);
  const int64_t io_allocs = allocs_of_run(*single, {HostTensor::f32({12, 5}, x)}, &r);
  EXPECT_EQ(allocs_of_run(*exe, {HostTensor::f32({12, 5}, x)}, &r), io_allocs + 1);
  EXPECT_EQ(allocs_of_run(*exe, {HostTensor::f32({12, 5}, x)}, &r), io_allocs);
  expect_near_all(r.outputs[0].as<float>(), chain_reference(x));
}

// A small CNN with a residual: c1 = relu(conv(x, w1)), c2 = relu(conv(c1, w2)),
// y = globalavgpool(c1 + c2). 1 -> 4 -> 4 channels, 3x3 kernels, padding 1.
constexpr int64_t kC = 4, kH = 6, kW = 7;

std::vector<float> cnn_weights(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(gen);
  return v;
}

// Naive double-precision 3x3 same-padding convolution of one image, then ReLU.
std::vector<double> conv_relu(const std::vector<double>& in, int64_t cin,
                              const std::vector<float>& w) {
  std::vector<double> out(static_cast<size_t>(kC * kH * kW), 0.0);
  for (int64_t co = 0; co < kC; ++co)
    for (int64_t y = 0; y < kH; ++y)
      for (int64_t x = 0; x < kW; ++x) {
        double acc = 0;
        for (int64_t ci = 0; ci < cin; ++ci)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y + ky - 1, ix = x + kx - 1;
              if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
              acc += in[static_cast<size_t>((ci * kH + iy) * kW + ix)] *
                     w[static_cast<size_t>(((co * cin + ci) * 3 + ky) * 3 + kx)];
            }
        out[static_cast<size_t>((co * kH + y) * kW + x)] = std::max(0.0, acc);
      }
  return out;
}

TEST_F(CpuMemoryPlan, ConcurrentRunsEachHaveTheirOwnMemory) {
  const std::vector<float> w1 = cnn_weights(kC * 1 * 9, 1), w2 = cnn_weights(kC * kC * 9, 2);
  GraphBuilder g;
  const AttrSpec pads = AttrSpec::Ints("pads", {1, 1, 1, 1});
  g.value(TensorSpec::f32("x", {1, 1, kH, kW}));
  g.value(TensorSpec::constant<float>("w1", INFER_DTYPE_FLOAT32, {kC, 1, 3, 3}, w1));
  g.value(TensorSpec::constant<float>("w2", INFER_DTYPE_FLOAT32, {kC, kC, 3, 3}, w2));
  for (const char* v : {"a1", "c1", "a2", "c2", "s"}) g.value(TensorSpec::f32(v, {1, kC, kH, kW}));
  g.value(TensorSpec::f32("y", {1, kC, 1, 1}));
  g.node_by_name("Conv", {"x", "w1"}, {"a1"}, {pads});
  g.node_by_name("Relu", {"a1"}, {"c1"});
  g.node_by_name("Conv", {"c1", "w2"}, {"a2"}, {pads});
  g.node_by_name("Relu", {"a2"}, {"c2"});
  g.node_by_name("Add", {"c1", "c2"}, {"s"});
  g.node_by_name("GlobalAveragePool", {"s"}, {"y"});
  auto exe = CompiledGraph::compile(*plugin_, g.graph({"x"}, {"y"}));
  ASSERT_TRUE(exe);

  // Each thread feeds its own image, so runs that shared memory would corrupt each
  // other's results.
  constexpr int kThreads = 8, kRuns = 50;
  std::vector<std::vector<float>> images(kThreads), expected(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    images[t] = cnn_weights(static_cast<size_t>(kH * kW), 100 + static_cast<uint32_t>(t));
    std::vector<double> x(images[t].begin(), images[t].end());
    std::vector<double> c1 = conv_relu(x, 1, w1);
    std::vector<double> c2 = conv_relu(c1, kC, w2);
    for (int64_t c = 0; c < kC; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < kH * kW; ++i)
        sum += c1[static_cast<size_t>(c * kH * kW + i)] + c2[static_cast<size_t>(c * kH * kW + i)];
      expected[t].push_back(static_cast<float>(sum / (kH * kW)));
    }
  }
  std::vector<std::vector<std::vector<float>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int run = 0; run < kRuns; ++run) {
        RunResult r = exe->run({HostTensor::f32({1, 1, kH, kW}, images[t])});
        if (!r.ok()) {
          errors[t] = r.status.message;
          return;
        }
        got[t].push_back(r.outputs[0].as<float>());
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ASSERT_EQ(got[t].size(), static_cast<size_t>(kRuns));
    for (int run = 0; run < kRuns; ++run) {
      EXPECT_EQ(got[t][run], got[t][0]) << "thread " << t << " run " << run << " differs";
    }
    ASSERT_EQ(got[t][0].size(), expected[t].size());
    for (size_t c = 0; c < expected[t].size(); ++c)
      EXPECT_NEAR(got[t][0][c], expected[t][c], 1e-5) << "thread " << t << " channel " << c;
  }
}

TEST_F(CpuMemoryPlan, DataDependentSizesFallBackAndStayCorrect) {
  // y = sum of the positions where relu(x) > 0: NonZero's output, an intermediate, has
  // as many columns as x has positive elements, so one signature sees several sizes.
  GraphBuilder g;
  constexpr int64_t kN = 40;
  g.value(TensorSpec::f32("x", {kN}));
  g.value(TensorSpec::f32("r", {kN}));
  g.value(TensorSpec::i64("nz", {1, -1}));
  g.value(TensorSpec::f32("c", {1, -1}));
  g.value(TensorSpec::f32("y", {}));
  g.node_by_name("Relu", {"x"}, {"r"});
  g.node_by_name("NonZero", {"r"}, {"nz"}, {}, 13);
  g.node_by_name("Cast", {"nz"}, {"c"}, {AttrSpec::Int("to", INFER_DTYPE_FLOAT32)});
  g.node_by_name("ReduceSum", {"c"}, {"y"}, {AttrSpec::Int("keepdims", 0)}, 13);
  auto exe = CompiledGraph::compile(*plugin_, g.graph({"x"}, {"y"}));
  ASSERT_TRUE(exe);
  // Positive elements per run: 2 (the recorded size: 16 bytes of indices, 64 planned),
  // all 40 (320 bytes, more than planned), 1 (fits), none, and all again.
  auto with_positives = [](std::vector<int64_t> at) {
    std::vector<float> x(kN, -1.0f);
    for (int64_t i : at) x[static_cast<size_t>(i)] = 1.5f;
    return x;
  };
  std::vector<int64_t> all(kN);
  for (int64_t i = 0; i < kN; ++i) all[static_cast<size_t>(i)] = i;
  const std::vector<std::vector<float>> inputs = {with_positives({3, 17}), with_positives(all),
                                                  with_positives({39}), with_positives({}),
                                                  with_positives(all)};
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& x : inputs) {
      float want = 0;
      for (size_t i = 0; i < x.size(); ++i)
        if (x[i] > 0) want += static_cast<float>(i);
      RunResult r = exe->run({HostTensor::f32({kN}, x)});
      ASSERT_TRUE(r.ok()) << r.status.message;
      EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>{want});
    }
}

}  // namespace
}  // namespace infer::test
