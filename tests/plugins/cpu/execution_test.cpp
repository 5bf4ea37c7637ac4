// Execution behaviour of the cpu plugin beyond single-op correctness: run-time errors
// that name the node, argument checks, dynamic shapes, concurrency, cancellation,
// failure propagation through events, large matrix products against a naive
// reference, and that kernels really run on the host's threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuExecution : public ::testing::Test {
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
  std::unique_ptr<PluginHandle> plugin_;
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST_F(CpuExecution, GatherIndexOutOfRangeNamesTheNode) {
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("Gather", {TensorSpec::f32("data", {5, 2}), TensorSpec::i64("idx", {2})},
                          {TensorSpec::f32("y", {2, 2})}, {}, 13, "gather_1");
  RunResult r = run_graph(
      *plugin_, graph,
      {HostTensor::f32({5, 2}, std::vector<float>(10, 1.0f)), HostTensor::i64({2}, {1, 7})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'gather_1' (Gather): index 7 out of range for axis 0 of size 5");
}

TEST_F(CpuExecution, IncompatibleBroadcastNamesTheNode) {
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("Add", {TensorSpec::f32("a", {-1, -1}), TensorSpec::f32("b", {-1})},
                          {TensorSpec::f32("y", {-1, -1})}, {}, 14, "add_bad");
  RunResult r = run_graph(
      *plugin_, graph,
      {HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::f32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message, "node 'add_bad' (Add): incompatible broadcast shapes [2,3] and [4]");
}

TEST_F(CpuExecution, BadReshapeAndIntegerDivisionByZero) {
  {
    GraphBuilder g;
    const infer_graph_view* graph =
        g.single_node_graph("Reshape", {TensorSpec::f32("x", {2, 3}), TensorSpec::i64("s", {2})},
                            {TensorSpec::f32("y", {-1, -1})}, {}, 14, "reshape_3");
    RunResult r =
        run_graph(*plugin_, graph,
                  {HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::i64({2}, {4, -1})});
    EXPECT_EQ(r.status.message,
              "node 'reshape_3' (Reshape): cannot reshape [2,3] (6 elements) to [4,-1]");
  }
  {
    GraphBuilder g;
    const infer_graph_view* graph =
        g.single_node_graph("Div", {TensorSpec::i64("a", {2}), TensorSpec::i64("b", {2})},
                            {TensorSpec::i64("y", {2})}, {}, 14, "div");
    RunResult r =
        run_graph(*plugin_, graph, {HostTensor::i64({2}, {4, 5}), HostTensor::i64({2}, {1, 0})});
    EXPECT_EQ(r.status.message, "node 'div' (Div): integer division by zero (divisor element 1)");
  }
}

TEST_F(CpuExecution, FailureSticksToTheSignalledEventAndLaterSignals) {
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("Gather", {TensorSpec::f32("data", {3}), TensorSpec::i64("idx", {1})},
                          {TensorSpec::f32("y", {1})}, {}, 13, "g");
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, graph, &st);
  ASSERT_TRUE(exe) << st.message;
  const infer_plugin_api* api = plugin_->api();
  infer_device* dev = plugin_->device();
  infer_stream* s = nullptr;
  infer_event *e = nullptr, *later = nullptr;
  ASSERT_TRUE(take_status(api->stream_create(dev, &s)).ok());
  ASSERT_TRUE(take_status(api->event_create(dev, &e)).ok());
  ASSERT_TRUE(take_status(api->event_create(dev, &later)).ok());
  std::vector<float> data = {1, 2, 3};
  int64_t bad = 3;
  infer_buffer *bd = nullptr, *bi = nullptr;
  ASSERT_TRUE(upload(*plugin_, dev, data.data(), 12, &bd).ok());
  ASSERT_TRUE(upload(*plugin_, dev, &bad, 8, &bi).ok());
  int64_t d3 = 3, d1 = 1;
  infer_tensor in[2] = {};
  in[0] = {sizeof(infer_tensor), INFER_DTYPE_FLOAT32, 1, &d3, bd, 0, 12, nullptr};
  in[1] = {sizeof(infer_tensor), INFER_DTYPE_INT64, 1, &d1, bi, 0, 8, nullptr};
  infer_event_value sig{e, 1};
  infer_execute_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = 2;
  args.inputs = in;
  args.num_outputs = 1;
  args.alloc_output = [](void*, size_t, infer_dtype, size_t, const int64_t*,
                         infer_tensor*) -> infer_status* {
    ADD_FAILURE() << "no output is allocated when the index is bad";
    return nullptr;
  };
  args.num_signals = 1;
  args.signals = &sig;
  ASSERT_TRUE(take_status(api->execute(exe->executable(), s, &args)).ok())
      << "run-time errors go to the events";
  StatusInfo w = take_status(api->event_wait(e, 1, UINT64_MAX));
  EXPECT_EQ(w.message, "node 'g' (Gather): index 3 out of range for axis 0 of size 3");
  uint64_t v = 0;
  EXPECT_FALSE(take_status(api->event_query(e, &v)).ok()) << "the failure sticks";
  // A signal right after the failed work reports the failure too ...
  ASSERT_TRUE(take_status(api->stream_signal(s, later, 1)).ok());
  EXPECT_EQ(take_status(api->event_wait(later, 1, UINT64_MAX)).message, w.message);
  // ... but new work after that runs normally again.
  infer_event* fresh = nullptr;
  ASSERT_TRUE(take_status(api->event_create(plugin_->device(), &fresh)).ok());
  float back = 0;
  infer_copy_region r{};
  r.struct_size = sizeof r;
  r.src_buffer = bd;
  r.src_offset = 4;
  r.dst_host = &back;
  r.size_bytes = 4;
  ASSERT_TRUE(take_status(api->copy_batch(s, &r, 1)).ok());
  ASSERT_TRUE(take_status(api->stream_signal(s, fresh, 1)).ok());
  EXPECT_TRUE(take_status(api->event_wait(fresh, 1, UINT64_MAX)).ok());
  EXPECT_EQ(back, 2.0f);
  // With nothing to signal, a failed execution is held by the stream and reported by
  // the next signal; the work queued in between is skipped.
  args.num_signals = 0;
  ASSERT_TRUE(take_status(api->execute(exe->executable(), s, &args)).ok());
  back = 0;
  ASSERT_TRUE(take_status(api->copy_batch(s, &r, 1)).ok());
  ASSERT_TRUE(take_status(api->stream_signal(s, fresh, 2)).ok());
  EXPECT_EQ(take_status(api->event_wait(fresh, 2, UINT64_MAX)).message, w.message);
  EXPECT_EQ(back, 0.0f) << "the copy after the failure was skipped";
  api->event_destroy(fresh);
  api->buffer_free(bd);
  api->buffer_free(bi);
  api->event_destroy(e);
  api->event_destroy(later);
  api->stream_destroy(s);
}

TEST_F(CpuExecution, ArgumentErrorsAreReturnedBeforeRunning) {
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("Relu", {TensorSpec::f32("x", {2})}, {TensorSpec::f32("y", {2})});
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, graph, &st);
  ASSERT_TRUE(exe);
  RunResult r = exe->run({});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message, "cpu: execute: partition 'Relu_graph' takes 1 inputs, got 0");
  r = exe->run({HostTensor::i64({2}, {1, 2})});
  EXPECT_EQ(r.status.message, "cpu: execute: input 0 ('x') is int64, expected float32");
}

TEST_F(CpuExecution, DynamicShapesPerCall) {
  // Symbolic dims everywhere: one executable serves different shapes.
  GraphBuilder g;
  TensorSpec x = TensorSpec::f32("x", {-1, -1});
  x.dim_params = {"batch", "n"};
  g.value(x);
  g.value(TensorSpec::f32("b", {-1}));
  g.value(TensorSpec::f32("s", {-1, -1}));
  g.value(TensorSpec::f32("y", {-1}));
  g.node_by_name("Add", {"x", "b"}, {"s"}, {}, 14, "add");
  g.node_by_name("ReduceSum", {"s"}, {"y"},
                 {AttrSpec::Ints("axes", {1}), AttrSpec::Int("keepdims", 0)}, 11, "sum");
  const infer_graph_view* graph = g.graph({"x", "b"}, {"y"});
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, graph, &st);
  ASSERT_TRUE(exe) << st.message;
  RunResult r1 =
      exe->run({HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({3}, {10, 20, 30})});
  ASSERT_TRUE(r1.ok()) << r1.status.message;
  EXPECT_EQ(r1.outputs[0].dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(r1.outputs[0].as<float>(), (std::vector<float>{66, 75}));
  RunResult r2 = exe->run({HostTensor::f32({3, 1}, {1, 2, 3}), HostTensor::f32({1}, {0.5f})});
  ASSERT_TRUE(r2.ok()) << r2.status.message;
  EXPECT_EQ(r2.outputs[0].dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(r2.outputs[0].as<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
}

// A small CNN partition (Conv -> Relu -> MaxPool -> Flatten -> Gemm) with constant weights.
const infer_graph_view* build_cnn(GraphBuilder& g, const std::vector<float>& w1,
                                  const std::vector<float>& w2) {
  g.value(TensorSpec::f32("x", {-1, 1, 12, 12}));
  g.value(TensorSpec::constant("w1", INFER_DTYPE_FLOAT32, {8, 1, 3, 3}, w1));
  g.value(TensorSpec::constant("w2", INFER_DTYPE_FLOAT32, {5, 288}, w2));
  g.value(TensorSpec::f32("c", {-1, 8, 12, 12}));
  g.value(TensorSpec::f32("r", {-1, 8, 12, 12}));
  g.value(TensorSpec::f32("p", {-1, 8, 6, 6}));
  g.value(TensorSpec::f32("f", {-1, 288}));
  g.value(TensorSpec::f32("y", {-1, 5}));
  g.node_by_name("Conv", {"x", "w1"}, {"c"}, {AttrSpec::Ints("pads", {1, 1, 1, 1})}, 13, "conv");
  g.node_by_name("Relu", {"c"}, {"r"}, {}, 13, "relu");
  g.node_by_name("MaxPool", {"r"}, {"p"},
                 {AttrSpec::Ints("kernel_shape", {2, 2}), AttrSpec::Ints("strides", {2, 2})}, 13,
                 "pool");
  g.node_by_name("Flatten", {"p"}, {"f"}, {}, 13, "flatten");
  g.node_by_name("Gemm", {"f", "w2"}, {"y"}, {AttrSpec::Int("transB", 1)}, 13, "fc");
  return g.graph({"x"}, {"y"});
}

TEST_F(CpuExecution, ConcurrentExecutesGiveIdenticalResults) {
  const auto w1 = random_floats(72, 1), w2 = random_floats(5 * 288, 2),
             x = random_floats(4 * 144, 3);
  GraphBuilder g;
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, build_cnn(g, w1, w2), &st);
  ASSERT_TRUE(exe) << st.message;
  const HostTensor input = HostTensor::f32({4, 1, 12, 12}, x);
  RunResult reference = exe->run({input});
  ASSERT_TRUE(reference.ok()) << reference.status.message;
  ASSERT_EQ(reference.outputs[0].dims, (std::vector<int64_t>{4, 5}));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0), failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        RunResult r = exe->run({input});
        if (!r.ok()) {
          failures[t]++;
          continue;
        }
        if (r.outputs[0].bytes != reference.outputs[0].bytes) mismatches[t]++;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
}

TEST_F(CpuExecution, KernelsRunOnTheHostsThreads) {
  const auto a = random_floats(128 * 128, 4);
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "MatMul", {TensorSpec::f32("a", {128, 128}), TensorSpec::f32("b", {128, 128})},
      {TensorSpec::f32("y", {128, 128})}, {}, 13);
  const int64_t before = plugin_->host().parallel_calls_split();
  RunResult r =
      run_graph(*plugin_, graph, {HostTensor::f32({128, 128}, a), HostTensor::f32({128, 128}, a)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_GT(plugin_->host().parallel_calls_split(), before)
      << "the work was never split over host threads";
}

// b is rows x cols; returns its cols x rows transpose.
std::vector<float> naive_transpose(const std::vector<float>& b, int64_t rows, int64_t cols) {
  std::vector<float> t(b.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = b[r * cols + c];
  return t;
}

// Naive double-precision reference for C = op(A) * op(B).
std::vector<float> naive_gemm(const std::vector<float>& a, const std::vector<float>& b, int64_t M,
                              int64_t N, int64_t K, bool ta, bool tb) {
  std::vector<float> c(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(ta ? a[k * M + i] : a[i * K + k]) *
             (tb ? b[j * K + k] : b[k * N + j]);
      c[i * N + j] = static_cast<float>(s);
    }
  return c;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > tol && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << want[i];
}

TEST_F(CpuExecution, LargeGemmAcrossTilesMatchesNaiveReference) {
  // Sizes straddle the 64 x 256 x 256 tiles and the 4-row inner blocks.
  const int64_t M = 70, N = 300, K = 270;
  const auto a = random_floats(M * K, 5), b = random_floats(K * N, 6);
  for (bool tb : {false, true}) {
    for (bool const_b : {false, true}) {
      GraphBuilder g;
      TensorSpec bs =
          const_b
              ? TensorSpec::constant("b", INFER_DTYPE_FLOAT32,
                                     tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N},
                                     tb ? naive_transpose(b, K, N) : b)
              : TensorSpec::f32("b", tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N});
      const infer_graph_view* graph =
          g.single_node_graph("Gemm", {TensorSpec::f32("a", {M, K}), bs},
                              {TensorSpec::f32("y", {M, N})}, {AttrSpec::Int("transB", tb)}, 13);
      std::vector<HostTensor> inputs = {HostTensor::f32({M, K}, a)};
      if (!const_b)
        inputs.push_back(
            HostTensor::f32(tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N},
                            tb ? naive_transpose(b, K, N) : b));
      RunResult r = run_graph(*plugin_, graph, inputs);
      ASSERT_TRUE(r.ok()) << r.status.message;
      expect_close(r.outputs[0].as<float>(), naive_gemm(a, b, M, N, K, false, false), 1e-3f);
    }
  }
}

TEST_F(CpuExecution, ManySmallBatchedMatMulsMatchNaiveReference) {
  const int64_t B = 16, M = 5, K = 7, N = 3;
  const auto a = random_floats(B * M * K, 7), b = random_floats(K * N, 8);
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("MatMul", {TensorSpec::f32("a", {B, M, K}), TensorSpec::f32("b", {K, N})},
                          {TensorSpec::f32("y", {B, M, N})}, {}, 13);
  RunResult r =
      run_graph(*plugin_, graph, {HostTensor::f32({B, M, K}, a), HostTensor::f32({K, N}, b)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  std::vector<float> want;
  for (int64_t i = 0; i < B; ++i) {
    std::vector<float> ai(a.begin() + i * M * K, a.begin() + (i + 1) * M * K);
    auto c = naive_gemm(ai, b, M, N, K, false, false);
    want.insert(want.end(), c.begin(), c.end());
  }
  expect_close(r.outputs[0].as<float>(), want, 1e-4f);
}

TEST_F(CpuExecution, CancelledRunStopsWithCancelled) {
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("Relu", {TensorSpec::f32("x", {2})}, {TensorSpec::f32("y", {2})});
  plugin_->host().set_cancelled(true);
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({2}, {1, -1})});
  plugin_->host().set_cancelled(false);
  EXPECT_EQ(r.status.code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(r.status.message, "run cancelled before node 'Relu_0'");
}

TEST_F(CpuExecution, EmptyGraphPassesInputsAndConstantsThrough) {
  GraphBuilder g;
  g.value(TensorSpec::f32("x", {2}));
  g.value(TensorSpec::constant("k", INFER_DTYPE_INT64, {1}, std::vector<int64_t>{9}));
  const infer_graph_view* graph = g.graph({"x"}, {"x", "k"});
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({2}, {3, 4})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(r.outputs[1].as<int64_t>(), (std::vector<int64_t>{9}));
}

}  // namespace
}  // namespace infer::test
