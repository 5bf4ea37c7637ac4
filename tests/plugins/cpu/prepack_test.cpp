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
  // What the host does under INFER_PREPACK_REPLACES_CONSTANT: weight input 1 carries
  // `blob` and no longer its original bytes.
  static void replace_weight(const infer_graph_view* graph, const void* blob, size_t size) {
    infer_value_view* w = input_view(graph, 1);
    w->prepacked_data = blob;
    w->prepacked_size = size;
    w->const_data = nullptr;
  }

  std::unique_ptr<PluginHandle> plugin_;
  const infer_plugin_api* api_ = nullptr;
  infer_device* dev_ = nullptr;
  std::vector<void*> packed_;
};

// The [cols, rows] transpose of a row-major [rows, cols] matrix.
std::vector<float> transposed(const std::vector<float>& a, int64_t rows, int64_t cols) {
  std::vector<float> t(a.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = a[r * cols + c];
  return t;
}

// y = MatMul(x [M, K], constant `weight` [K, N]) as a one-node graph of `g`.
const infer_graph_view* matmul_graph(GraphBuilder& g, int64_t M, int64_t K, int64_t N,
                                     const std::vector<float>& b, const char* weight = "w") {
  return g.single_node_graph(
      "MatMul",
      {TensorSpec::f32("x", {M, K}), TensorSpec::constant(weight, INFER_DTYPE_FLOAT32, {K, N}, b)},
      {TensorSpec::f32("y", {M, N})}, {}, 13, "mm");
}

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
  const infer_graph_view* graph = matmul_graph(g, M, K, N, b);
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
  const std::vector<float> b = transposed(bt, N, K);
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
  const infer_graph_view* graph = matmul_graph(g, M, K, N, b);
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

// Weights replaced by their packed form, as the host does (see replace_weight): MatMul,
// Gemm with transB and Conv then compile and run from the packed form alone (a read of
// the original would be a NULL dereference), checked against references computed from
// the original here.
TEST_F(CpuPrepack, WeightsTheHostFreedRunFromThePackedFormAlone) {
  const int64_t M = 6, K = 23, N = 19;
  const auto b = random_floats(K * N, 11), x = random_floats(M * K, 12);
  const std::vector<float> bt = transposed(b, K, N);
  const std::vector<float> want = matmul_ref(x, b, M, K, N);
  for (const bool gemm : {false, true}) {
    SCOPED_TRACE(gemm ? "Gemm transB" : "MatMul");
    GraphBuilder g;
    const infer_graph_view* graph =
        gemm ? g.single_node_graph("Gemm",
                                   {TensorSpec::f32("x", {M, K}),
                                    TensorSpec::constant("w", INFER_DTYPE_FLOAT32, {N, K}, bt)},
                                   {TensorSpec::f32("y", {M, N})}, {AttrSpec::Int("transB", 1)}, 13,
                                   "fc")
             : matmul_graph(g, M, K, N, b);
    size_t size = 0;
    const void* blob = prepack(graph->nodes[0], 1, &size);
    ASSERT_NE(blob, nullptr);
    replace_weight(graph, blob, size);
    RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({M, K}, x)});
    ASSERT_TRUE(r.ok()) << r.status.message;
    expect_near_all(r.outputs[0].as<float>(), want);
  }

  // Conv 1x1 (C=7 -> M=5) on a 4x3 image.
  const int64_t C = 7, Mc = 5, P = 12;
  const auto xc = random_floats(C * P, 13), wc = random_floats(Mc * C, 14);
  GraphBuilder g;
  const infer_graph_view* graph =
      g.single_node_graph("Conv",
                          {TensorSpec::f32("x", {1, C, 4, 3}),
                           TensorSpec::constant("w", INFER_DTYPE_FLOAT32, {Mc, C, 1, 1}, wc)},
                          {TensorSpec::f32("y", {1, Mc, 4, 3})}, {}, 11, "conv");
  size_t size = 0;
  const void* blob = prepack(graph->nodes[0], 1, &size);
  ASSERT_NE(blob, nullptr);
  replace_weight(graph, blob, size);
  RunResult r = run_graph(*plugin_, graph, {HostTensor::f32({1, C, 4, 3}, xc)});
  ASSERT_TRUE(r.ok()) << r.status.message;
  // A 1x1 convolution is the product W [Mc, C] x X [C, P].
  expect_near_all(r.outputs[0].as<float>(), matmul_ref(wc, xc, Mc, C, P));
}

// A freed weight whose packed form is not ours (or not for this node) cannot be packed
// again from the original: compiling fails and names the weight, instead of reading NULL.
TEST_F(CpuPrepack, AFreedWeightWhosePackedFormDoesNotFitFailsToCompile) {
  const auto b = random_floats(8 * 16, 15);
  GraphBuilder g;
  const infer_graph_view* mm = matmul_graph(g, 4, 8, 16, b, "w_mm");
  std::vector<unsigned char> foreign(8 * 16 * sizeof(float) + 256, 0xAB);
  replace_weight(mm, foreign.data(), foreign.size());
  RunResult r = run_graph(*plugin_, mm, {HostTensor::f32({4, 8}, random_floats(32, 16))});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status.message.find("freed weight 'w_mm'"), std::string::npos) << r.status.message;

  GraphBuilder g2;
  const infer_graph_view* conv =
      g2.single_node_graph("Conv",
                           {TensorSpec::f32("x", {1, 8, 4, 4}),
                            TensorSpec::constant("w_conv", INFER_DTYPE_FLOAT32, {16, 8, 1, 1}, b)},
                           {TensorSpec::f32("y", {1, 16, 4, 4})}, {}, 11, "conv");
  replace_weight(conv, foreign.data(), foreign.size());
  r = run_graph(*plugin_, conv, {HostTensor::f32({1, 8, 4, 4}, random_floats(128, 17))});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status.message.find("freed weight 'w_conv'"), std::string::npos) << r.status.message;
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
  // A rank-4 float constant looks like a convolution weight, but only Conv and FusedConv
  // read the packed form: another op's input is left alone.
  GraphBuilder g4;
  const infer_graph_view* mul = g4.single_node_graph(
      "Mul",
      {TensorSpec::f32("a", {1, 2, 3, 3}),
       TensorSpec::constant("s", INFER_DTYPE_FLOAT32, {1, 2, 3, 3}, random_floats(18, 18))},
      {TensorSpec::f32("y", {1, 2, 3, 3})}, {}, 14, "mul");
  EXPECT_EQ(prepack(mul->nodes[0], 1, &size), nullptr);

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
