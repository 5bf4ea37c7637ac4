// The cpu plugin's weight-prepacking hook through the ABI: which inputs it packs, that
// the packed bytes it returns are used in place by the kernels (results equal a naive
// reference computed here), and that a blob that does not fit (wrong size or another
// layout) is ignored rather than trusted.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

class CpuPrepack : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
    api_ = plugin_->api();
    dev_ = plugin_->device();
    ASSERT_NE(api_->prepack_constant, nullptr);
  }
  void TearDown() override {
    for (void* p : packed_) host_free(p);
    if (plugin_) {
      EXPECT_EQ(plugin_->host().live_allocations(), 0) << "leaked host memory";
    }
  }
  void host_free(void* p) {
    const infer_host_services* h = plugin_->host().services();
    h->host_free(h->host_ctx, p);
  }
  // Calls the hook; returns the blob (owned by the fixture) or nullptr when declined.
  const void* prepack(const infer_node_view* node, size_t input, size_t* size) {
    void* data = nullptr;
    *size = 0;
    StatusInfo st = take_status(api_->prepack_constant(dev_, node, input, &data, size));
    EXPECT_TRUE(st.ok()) << st.message;
    if (data != nullptr) packed_.push_back(data);
    return data;
  }
  // The node's input value view, made writable so a test can attach prepacked bytes the
  // way the host does (the host copies the view and sets prepacked_data).
  static infer_value_view* input_view(const infer_graph_view* graph, size_t input) {
    return const_cast<infer_value_view*>(graph->nodes[0]->inputs[input]);
  }

  std::unique_ptr<PluginHandle> plugin_;
  const infer_plugin_api* api_ = nullptr;
  infer_device* dev_ = nullptr;
  std::vector<void*> packed_;
};

// Y[M,N] = X[M,K] * B[K,N], in double.
std::vector<float> matmul_ref(const std::vector<float>& x, const std::vector<float>& b, int64_t M,
                              int64_t K, int64_t N) {
  std::vector<float> y(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[i * K + k]) * b[k * N + j];
      y[i * N + j] = static_cast<float>(acc);
    }
  return y;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << "element " << i;
}

TEST_F(CpuPrepack, MatMulConstantWeightIsPackedAndUsedInPlace) {
  const int64_t M = 5, K = 37, N = 45;
  const auto b = random_floats(K * N, 1), x = random_floats(M * K, 2);
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "MatMul", {TensorSpec::f32("x", {M, K}), TensorSpec::constant("w", INFER_DTYPE_FLOAT32, {K, N}, b)},
      {TensorSpec::f32("y", {M, N})}, {}, 13, "mm");
  const infer_node_view* node = graph->nodes[0];

  size_t size = 0;
  EXPECT_EQ(prepack(node, 0, &size), nullptr) << "input 0 is not a constant";
  const void* blob = prepack(node, 1, &size);
  ASSERT_NE(blob, nullptr);
  EXPECT_GE(size, sizeof(float) * K * N);

  infer_value_view* w = input_view(graph, 1);
  w->prepacked_data = blob;
  w->prepacked_size = size;
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({M, K}, x)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near_all(r.outputs[0].as<float>(), matmul_ref(x, b, M, K, N));
}

TEST_F(CpuPrepack, GemmWithTransposedWeightPacksTheProduct) {
  // Gemm with transB = 1: B is stored [N, K]; the packed form must be of B^T.
  const int64_t M = 3, K = 19, N = 33;
  const auto bt = random_floats(N * K, 3), x = random_floats(M * K, 4);
  std::vector<float> b(static_cast<size_t>(K * N));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) b[k * N + n] = bt[n * K + k];
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Gemm",
      {TensorSpec::f32("x", {M, K}), TensorSpec::constant("w", INFER_DTYPE_FLOAT32, {N, K}, bt)},
      {TensorSpec::f32("y", {M, N})}, {AttrSpec::Int("transB", 1)}, 13, "fc");
  size_t size = 0;
  const void* blob = prepack(graph->nodes[0], 1, &size);
  ASSERT_NE(blob, nullptr);
  infer_value_view* w = input_view(graph, 1);
  w->prepacked_data = blob;
  w->prepacked_size = size;
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({M, K}, x)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near_all(r.outputs[0].as<float>(), matmul_ref(x, b, M, K, N));
}

TEST_F(CpuPrepack, ABlobThatDoesNotFitIsIgnored) {
  const int64_t M = 4, K = 8, N = 16;
  const auto b = random_floats(K * N, 5), x = random_floats(M * K, 6);
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "MatMul", {TensorSpec::f32("x", {M, K}), TensorSpec::constant("w", INFER_DTYPE_FLOAT32, {K, N}, b)},
      {TensorSpec::f32("y", {M, N})}, {}, 13, "mm");
  // Bytes of the right size but not made by this plugin (e.g. another plugin's format).
  size_t size = 0;
  ASSERT_NE(prepack(graph->nodes[0], 1, &size), nullptr);
  std::vector<unsigned char> foreign(size, 0xAB);
  infer_value_view* w = input_view(graph, 1);
  w->prepacked_data = foreign.data();
  w->prepacked_size = foreign.size();
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({M, K}, x)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near_all(r.outputs[0].as<float>(), matmul_ref(x, b, M, K, N));
  // And a truncated one.
  w->prepacked_data = foreign.data();
  w->prepacked_size = 16;
  r = run_graph(*plugin_, graph, {HostTensor::f32({M, K}, x)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near_all(r.outputs[0].as<float>(), matmul_ref(x, b, M, K, N));
}

TEST_F(CpuPrepack, ConvWeightIsPackedAndUsedInPlace) {
  // 1 image, C=5, 9x7, M=6 filters 3x3, pad 1: checked against a direct convolution.
  const int64_t C = 5, H = 9, W = 7, M = 6;
  const auto x = random_floats(C * H * W, 7), w = random_floats(M * C * 9, 8);
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Conv",
      {TensorSpec::f32("x", {1, C, H, W}),
       TensorSpec::constant("w", INFER_DTYPE_FLOAT32, {M, C, 3, 3}, w)},
      {TensorSpec::f32("y", {1, M, H, W})}, {AttrSpec::Ints("pads", {1, 1, 1, 1})}, 11, "conv");
  size_t size = 0;
  const void* blob = prepack(graph->nodes[0], 1, &size);
  ASSERT_NE(blob, nullptr);
  infer_value_view* wv = input_view(graph, 1);
  wv->prepacked_data = blob;
  wv->prepacked_size = size;
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({1, C, H, W}, x)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  std::vector<float> want(static_cast<size_t>(M * H * W));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < H; ++oh)
      for (int64_t ow = 0; ow < W; ++ow) {
        double acc = 0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += double(x[(c * H + ih) * W + iw]) * w[((m * C + c) * 3 + kh) * 3 + kw];
            }
        want[(m * H + oh) * W + ow] = static_cast<float>(acc);
      }
  expect_near_all(r.outputs[0].as<float>(), want);
}

TEST_F(CpuPrepack, OtherOpsAndNonFloatWeightsAreDeclined) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Add",
      {TensorSpec::f32("a", {4}), TensorSpec::constant("b", INFER_DTYPE_FLOAT32, {4},
                                                       std::vector<float>{1, 2, 3, 4})},
      {TensorSpec::f32("y", {4})}, {}, 14, "add");
  size_t size = 0;
  EXPECT_EQ(prepack(graph->nodes[0], 1, &size), nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(prepack(graph->nodes[0], 7, &size), nullptr) << "input index out of range";

  GraphBuilder g2;
  const infer_graph_view* mm = g2.single_node_graph(
      "MatMul",
      {TensorSpec::of("x", INFER_DTYPE_INT32, {2, 2}),
       TensorSpec::constant("w", INFER_DTYPE_INT32, {2, 2}, std::vector<int32_t>{1, 2, 3, 4})},
      {TensorSpec::of("y", INFER_DTYPE_INT32, {2, 2})}, {}, 13, "mm_int");
  EXPECT_EQ(prepack(mm->nodes[0], 1, &size), nullptr);
}

}  // namespace
}  // namespace infer::test
