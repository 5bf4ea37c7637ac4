// The example's kernels against hand-computed values (numpy broadcasting included), a
// multi-node partition with constants and an intermediate that is also an output,
// symbolic dims resolved per run, the Gemm prepack hook, the numpy-generated cases of
// example_cases.txt, and the errors execute reports before enqueueing.
#include <cstring>

#include "example_fixture.hpp"
#include "infer_test_paths.hpp"

namespace infer::test::example {
namespace {

using ExampleOps = ExampleTest;

// Runs `graph` on the example and returns its outputs as float vectors (asserting OK).
std::vector<std::vector<float>> run_f32(PluginHandle& handle, infer_device* device,
                                        const infer_graph_view* graph,
                                        const std::vector<HostTensor>& inputs,
                                        std::vector<std::vector<int64_t>>* dims = nullptr) {
  RunResult r = run_on_example(handle, device, graph, inputs);
  EXPECT_TRUE(r.ok()) << status_code_name(r.status.code) << ": " << r.status.message;
  std::vector<std::vector<float>> out;
  for (const HostTensor& o : r.outputs) {
    EXPECT_EQ(o.dtype, INFER_DTYPE_FLOAT32);
    out.push_back(o.as<float>());
    if (dims) dims->push_back(o.dims);
  }
  return out;
}

#define RUN(graph, ...) run_f32(handle(), device(), graph, __VA_ARGS__)

TEST_F(ExampleOps, DequantizeLinearTakesScaleAndZeroPointFromTheDescriptor) {
  for (infer_dtype t : {INFER_DTYPE_UINT8, INFER_DTYPE_INT8}) {
    GraphBuilder g;
    const std::vector<uint8_t> zero = {static_cast<uint8_t>(t == INFER_DTYPE_UINT8 ? 100 : 0xFB)};
    auto* graph = g.single_node_graph(
        "DequantizeLinear",
        {TensorSpec::of("x_q", t, {2, 3}),
         TensorSpec::constant("s", INFER_DTYPE_FLOAT32, {}, std::vector<float>{0.25f}),
         TensorSpec::constant("z", t, {}, zero)},
        {TensorSpec::f32("x", {2, 3})});
    const infer_node_view* node = g.last_node();
    infer_quant_desc desc{};
    desc.struct_size = sizeof desc;
    desc.scheme = INFER_QUANT_PER_TENSOR;
    desc.storage = t;
    desc.scale = node->inputs[1];
    desc.zero_point = node->inputs[2];
    const_cast<infer_value_view*>(node->inputs[0])->quant = &desc;
    // uint8: (x - 100) / 4; int8 (zero point -5): (x + 5) / 4.
    const std::vector<uint8_t> x = {0, 100, 101, 255, 104, 96};
    auto out = RUN(graph, {HostTensor::make(t, {2, 3}, x)});
    ASSERT_EQ(out.size(), 1u);
    if (t == INFER_DTYPE_UINT8)
      EXPECT_EQ(out[0], (std::vector<float>{-25, 0, 0.25f, 38.75f, 1, -1}));
    else  // the bytes as int8: 0, 100, 101, -1, 104, 96
      EXPECT_EQ(out[0], (std::vector<float>{1.25f, 26.25f, 26.5f, 1, 27.25f, 25.25f}));
  }
}

TEST_F(ExampleOps, AddBroadcastsARowOverAMatrix) {
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("Add", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3})},
                          {TensorSpec::f32("y", {2, 3})});
  std::vector<std::vector<int64_t>> dims;
  auto out =
      RUN(graph, {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({3}, {10, 20, 30})},
          &dims);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(dims[0], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[0], (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST_F(ExampleOps, AddBroadcastsAColumnAgainstARow) {
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("Add", {TensorSpec::f32("a", {2, 1}), TensorSpec::f32("b", {1, 3})},
                          {TensorSpec::f32("y", {2, 3})});
  auto out = RUN(graph, {HostTensor::f32({2, 1}, {1, 2}), HostTensor::f32({1, 3}, {10, 20, 30})});
  EXPECT_EQ(out[0], (std::vector<float>{11, 21, 31, 12, 22, 32}));
}

TEST_F(ExampleOps, SubtractsAScalarAndKeepsOperandOrder) {
  GraphBuilder g;
  auto* graph = g.single_node_graph("Sub", {TensorSpec::f32("a", {2, 2}), TensorSpec::f32("s", {})},
                                    {TensorSpec::f32("y", {2, 2})});
  auto out = RUN(graph, {HostTensor::f32({2, 2}, {5, 6, 7, 8}), HostTensor::f32({}, {1})});
  EXPECT_EQ(out[0], (std::vector<float>{4, 5, 6, 7}));

  GraphBuilder g2;  // the broadcast operand first: s - a
  graph = g2.single_node_graph("Sub", {TensorSpec::f32("s", {1}), TensorSpec::f32("a", {3})},
                               {TensorSpec::f32("y", {3})});
  out = RUN(graph, {HostTensor::f32({1}, {10}), HostTensor::f32({3}, {1, 2, 3})});
  EXPECT_EQ(out[0], (std::vector<float>{9, 8, 7}));
}

TEST_F(ExampleOps, MulBroadcastsBothOperandsToAThirdShape) {
  // [2,1,2] * [3,1] -> [2,3,2]: y[i][j][k] = a[i][0][k] * b[j][0].
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("Mul", {TensorSpec::f32("a", {2, 1, 2}), TensorSpec::f32("b", {3, 1})},
                          {TensorSpec::f32("y", {2, 3, 2})});
  std::vector<std::vector<int64_t>> dims;
  auto out =
      RUN(graph, {HostTensor::f32({2, 1, 2}, {1, 2, 3, 4}), HostTensor::f32({3, 1}, {10, 20, 30})},
          &dims);
  EXPECT_EQ(dims[0], (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(out[0], (std::vector<float>{10, 20, 20, 40, 30, 60, 30, 40, 60, 80, 90, 120}));
}

TEST_F(ExampleOps, ReluClampsNegativesToZero) {
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("Relu", {TensorSpec::f32("x", {5})}, {TensorSpec::f32("y", {5})});
  auto out = RUN(graph, {HostTensor::f32({5}, {-1.0f, 0.0f, 2.5f, -3.5f, 4.0f})});
  EXPECT_EQ(out[0], (std::vector<float>{0.0f, 0.0f, 2.5f, 0.0f, 4.0f}));
}

TEST_F(ExampleOps, MatMulTwoDimensional) {
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("MatMul", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3, 2})},
                          {TensorSpec::f32("y", {2, 2})});
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  auto out = RUN(graph, {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                         HostTensor::f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(out[0], (std::vector<float>{58, 64, 139, 154}));
}

TEST_F(ExampleOps, MatMulBatchedWithABroadcastMatrix) {
  // Two batches of A (identity, twice identity) times one B.
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("MatMul", {TensorSpec::f32("a", {2, 2, 2}), TensorSpec::f32("b", {2, 2})},
                          {TensorSpec::f32("y", {2, 2, 2})});
  auto out = RUN(graph, {HostTensor::f32({2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2}),
                         HostTensor::f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out[0], (std::vector<float>{1, 2, 3, 4, 2, 4, 6, 8}));
}

TEST_F(ExampleOps, MatMulBroadcastsBatchDimsBothWays) {
  // a: [2,1,1,2], b: [3,2,1] -> y: [2,3,1,1]; y[i][j] = a[i] . b[j].
  GraphBuilder g;
  auto* graph = g.single_node_graph(
      "MatMul", {TensorSpec::f32("a", {2, 1, 1, 2}), TensorSpec::f32("b", {3, 2, 1})},
      {TensorSpec::f32("y", {2, 3, 1, 1})});
  std::vector<std::vector<int64_t>> dims;
  auto out = RUN(
      graph,
      {HostTensor::f32({2, 1, 1, 2}, {1, 2, 3, 4}), HostTensor::f32({3, 2, 1}, {1, 0, 0, 1, 1, 1})},
      &dims);
  EXPECT_EQ(dims[0], (std::vector<int64_t>{2, 3, 1, 1}));
  EXPECT_EQ(out[0], (std::vector<float>{1, 2, 3, 3, 4, 7}));
}

TEST_F(ExampleOps, GemmWithAlphaBetaAndARowBias) {
  GraphBuilder g;
  auto* graph = g.single_node_graph(
      "Gemm",
      {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3, 2}), TensorSpec::f32("c", {2})},
      {TensorSpec::f32("y", {2, 2})},
      {AttrSpec::Float("alpha", 2.0), AttrSpec::Float("beta", 0.5)});
  // 2 * [[58,64],[139,154]] + 0.5 * [1,-1]
  auto out =
      RUN(graph, {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                  HostTensor::f32({3, 2}, {7, 8, 9, 10, 11, 12}), HostTensor::f32({2}, {1, -1})});
  EXPECT_EQ(out[0], (std::vector<float>{116.5f, 127.5f, 278.5f, 307.5f}));
}

TEST_F(ExampleOps, GemmTransposedOperandsAndAColumnBias) {
  GraphBuilder g;
  auto* graph = g.single_node_graph(
      "Gemm",
      {TensorSpec::f32("at", {3, 2}), TensorSpec::f32("bt", {2, 3}), TensorSpec::f32("c", {2, 1})},
      {TensorSpec::f32("y", {2, 2})}, {AttrSpec::Int("transA", 1), AttrSpec::Int("transB", 1)});
  // A^T and B^T of the MatMul case; C adds 100 to row 0 and 200 to row 1.
  auto out = RUN(
      graph, {HostTensor::f32({3, 2}, {1, 4, 2, 5, 3, 6}),
              HostTensor::f32({2, 3}, {7, 9, 11, 8, 10, 12}), HostTensor::f32({2, 1}, {100, 200})});
  EXPECT_EQ(out[0], (std::vector<float>{158, 164, 339, 354}));
}

TEST_F(ExampleOps, GemmWithoutC) {
  GraphBuilder g;
  auto* graph =
      g.single_node_graph("Gemm", {TensorSpec::f32("a", {1, 2}), TensorSpec::f32("b", {2, 1})},
                          {TensorSpec::f32("y", {1, 1})}, {}, 13);
  auto out = RUN(graph, {HostTensor::f32({1, 2}, {3, 4}), HostTensor::f32({2, 1}, {5, 6})});
  EXPECT_EQ(out[0], (std::vector<float>{39}));
}

// y = Relu(x @ W + bias) * s, with t = x @ W + bias also returned. W and bias are
// constants (uploaded at compile time), s is a graph input.
const infer_graph_view* mlp_graph(GraphBuilder& g, int64_t batch) {
  g.node("MatMul",
         {TensorSpec::f32("x", {batch, 3}),
          TensorSpec::constant<float>("W", INFER_DTYPE_FLOAT32, {3, 2}, {7, 8, 9, 10, 11, 12})},
         {TensorSpec::f32("xw", {batch, 2})}, {}, 17, "matmul");
  g.node("Add",
         {TensorSpec::f32("xw", {batch, 2}),
          TensorSpec::constant<float>("bias", INFER_DTYPE_FLOAT32, {2}, {-100, -60})},
         {TensorSpec::f32("t", {batch, 2})}, {}, 17, "add");
  g.node("Relu", {TensorSpec::f32("t", {batch, 2})}, {TensorSpec::f32("r", {batch, 2})}, {}, 17,
         "relu");
  g.node("Mul", {TensorSpec::f32("r", {batch, 2}), TensorSpec::f32("s", {1})},
         {TensorSpec::f32("y", {batch, 2})}, {}, 17, "scale");
  return g.graph({"x", "s"}, {"y", "t"}, "mlp");
}

TEST_F(ExampleOps, MultiNodePartitionWithConstantsAndAnIntermediateOutput) {
  GraphBuilder g;
  auto out = RUN(mlp_graph(g, 2),
                 {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({1}, {2})});
  ASSERT_EQ(out.size(), 2u);
  // xw = [[58,64],[139,154]]; t = [[-42,4],[39,94]]; r = [[0,4],[39,94]]; y = 2r.
  EXPECT_EQ(out[0], (std::vector<float>{0, 8, 78, 188}));
  EXPECT_EQ(out[1], (std::vector<float>{-42, 4, 39, 94}));
}

TEST_F(ExampleOps, SymbolicBatchIsResolvedPerRun) {
  GraphBuilder g;
  const infer_graph_view* graph = mlp_graph(g, -1);  // batch is symbolic
  auto compiled = CompiledGraph::compile(handle(), graph, nullptr, device());
  ASSERT_NE(compiled, nullptr);
  RunResult one = compiled->run({HostTensor::f32({1, 3}, {1, 2, 3}), HostTensor::f32({1}, {1})});
  ASSERT_TRUE(one.ok()) << one.status.message;
  EXPECT_EQ(one.outputs[0].dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(one.outputs[0].as<float>(), (std::vector<float>{0, 4}));
  RunResult three = compiled->run(
      {HostTensor::f32({3, 3}, {1, 2, 3, 4, 5, 6, 0, 0, 0}), HostTensor::f32({1}, {1})});
  ASSERT_TRUE(three.ok()) << three.status.message;
  EXPECT_EQ(three.outputs[0].dims, (std::vector<int64_t>{3, 2}));
  // Row 2 is zero: t = bias = [-100, -60], relu -> 0.
  EXPECT_EQ(three.outputs[0].as<float>(), (std::vector<float>{0, 4, 39, 94, 0, 0}));
  EXPECT_EQ(three.outputs[1].as<float>(), (std::vector<float>{-42, 4, 39, 94, -100, -60}));
}

TEST_F(ExampleOps, ExecuteRejectsBadInputsBeforeEnqueueing) {
  GraphBuilder g;
  auto compiled = CompiledGraph::compile(handle(), mlp_graph(g, -1), nullptr, device());
  ASSERT_NE(compiled, nullptr);
  // Wrong static dim (3 is fixed in the view).
  RunResult r =
      compiled->run({HostTensor::f32({2, 4}, std::vector<float>(8)), HostTensor::f32({1}, {1})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("input 0 'x' has dims [2,4], expected [-1,3]"), std::string::npos)
      << r.status.message;
  // Wrong dtype.
  r = compiled->run({HostTensor::f32({2, 3}, std::vector<float>(6)), HostTensor::i32({1}, {1})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("input 1 's' is int32, expected float32"), std::string::npos)
      << r.status.message;
  // Wrong number of inputs.
  r = compiled->run({HostTensor::f32({2, 3}, std::vector<float>(6))});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("got 1 inputs, expected 2"), std::string::npos)
      << r.status.message;
}

TEST_F(ExampleOps, ShapesThatDoNotBroadcastAreReportedAtEnqueue) {
  GraphBuilder g;
  auto* graph = g.single_node_graph("Add", {TensorSpec::f32("a", {-1}), TensorSpec::f32("b", {3})},
                                    {TensorSpec::f32("y", {-1})}, {}, 17, "sum");
  RunResult r =
      run_on_example(handle(), device(), graph,
                     {HostTensor::f32({4}, {1, 2, 3, 4}), HostTensor::f32({3}, {1, 2, 3})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("node 'sum' (Add): shapes [4] and [3] do not broadcast"),
            std::string::npos)
      << r.status.message;
}

TEST_F(ExampleOps, ConstantsAndIntermediatesUseDeviceMemory) {
  load({{"memory_mb", "1"}});
  // Constants are uploaded at compile time: a 600x600 one (1.4 MB) does not fit.
  std::vector<float> big(600 * 600, 1.0f);
  GraphBuilder g;
  auto* graph = g.single_node_graph(
      "Add",
      {TensorSpec::f32("x", {600, 600}),
       TensorSpec::constant<float>("big", INFER_DTYPE_FLOAT32, {600, 600}, big)},
      {TensorSpec::f32("y", {600, 600})});
  infer_compile_options options{};
  options.struct_size = sizeof options;
  infer_executable* x = nullptr;
  StatusInfo st = take_status(api()->compile(device(), graph, &options, &x));
  EXPECT_EQ(st.code, INFER_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(st.message.find("constant 'big'"), std::string::npos) << st.message;

  // Intermediates: two chained Relus over [400, 400] (640 KB each). Input, intermediate
  // and output cannot all fit in 1 MiB, so execute reports OUT_OF_MEMORY itself.
  GraphBuilder g2;
  g2.node("Relu", {TensorSpec::f32("a", {400, 400})}, {TensorSpec::f32("b", {400, 400})});
  g2.node("Relu", {TensorSpec::f32("b", {400, 400})}, {TensorSpec::f32("c", {400, 400})});
  RunResult r = run_on_example(handle(), device(), g2.graph({"a"}, {"c"}, "chain"),
                               {HostTensor::f32({400, 400}, std::vector<float>(160000, 1.0f))});
  EXPECT_EQ(r.status.code, INFER_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(r.status.message.find("intermediate 'b'"), std::string::npos) << r.status.message;
}

TEST_F(ExampleOps, PrepackTransposesGemmWeightsAndCompileUsesThem) {
  GraphBuilder g;
  g.node("Gemm",
         {TensorSpec::f32("a", {2, 3}),
          TensorSpec::constant<float>("B", INFER_DTYPE_FLOAT32, {3, 2}, {7, 8, 9, 10, 11, 12})},
         {TensorSpec::f32("y", {2, 2})}, {}, 17, "gemm");
  const infer_node_view* node = g.last_node();

  // Input 0 is no constant, so the hook declines it.
  void* data = reinterpret_cast<void*>(0x1);
  size_t size = 7;
  ASSERT_OK(take_status(api()->prepack_constant(device(), node, 0, &data, &size)));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);

  ASSERT_OK(take_status(api()->prepack_constant(device(), node, 1, &data, &size)));
  ASSERT_NE(data, nullptr);
  // A 24-byte header ("EXPK", version 1, rows 2, cols 3), then B transposed to [N, K].
  ASSERT_EQ(size, 24u + 6 * sizeof(float));
  EXPECT_EQ(std::memcmp(data, "EXPK", 4), 0);
  int64_t shape[2];
  std::memcpy(shape, static_cast<char*>(data) + 8, sizeof shape);
  EXPECT_EQ(shape[0], 2);
  EXPECT_EQ(shape[1], 3);
  std::vector<float> packed(6);
  std::memcpy(packed.data(), static_cast<char*>(data) + 24, 6 * sizeof(float));
  EXPECT_EQ(packed, (std::vector<float>{7, 9, 11, 8, 10, 12}));

  // The host hands the blob back in the value view at compile time. Corrupt the original
  // constant so that only a compile that really uses the blob gets the right answer.
  auto* b_view = const_cast<infer_value_view*>(node->inputs[1]);
  b_view->prepacked_data = data;
  b_view->prepacked_size = size;
  std::vector<float> garbage(6, -1000.0f);
  std::memcpy(const_cast<void*>(b_view->const_data), garbage.data(), 6 * sizeof(float));
  auto out = RUN(g.graph({"a"}, {"y"}, "packed"), {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0], (std::vector<float>{58, 64, 139, 154}));
  handle().services()->host_free(handle().services()->host_ctx, data);  // the host owns it
}

TEST_F(ExampleOps, PrepackDeclinesWeightsAlreadyInItsLayout) {
  GraphBuilder g;
  g.node("Gemm",
         {TensorSpec::f32("a", {2, 3}),
          TensorSpec::constant<float>("Bt", INFER_DTYPE_FLOAT32, {2, 3}, {7, 9, 11, 8, 10, 12})},
         {TensorSpec::f32("y", {2, 2})}, {AttrSpec::Int("transB", 1)});
  void* data = nullptr;
  size_t size = 0;
  ASSERT_OK(take_status(api()->prepack_constant(device(), g.last_node(), 1, &data, &size)));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(host().live_allocations(), 0);
}

TEST_F(ExampleOps, ForeignPrepackedDataIsIgnored) {
  // A blob the plugin did not make (wrong magic) must not be trusted.
  GraphBuilder g;
  g.node("Gemm",
         {TensorSpec::f32("a", {2, 3}),
          TensorSpec::constant<float>("B", INFER_DTYPE_FLOAT32, {3, 2}, {7, 8, 9, 10, 11, 12})},
         {TensorSpec::f32("y", {2, 2})});
  std::vector<unsigned char> foreign(24 + 24, 0xEE);
  auto* b_view = const_cast<infer_value_view*>(g.last_node()->inputs[1]);
  b_view->prepacked_data = foreign.data();
  b_view->prepacked_size = foreign.size();
  auto out = RUN(g.graph({"a"}, {"y"}, "foreign"), {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0], (std::vector<float>{58, 64, 139, 154}));
}

TEST_F(ExampleOps, NumpyGeneratedCases) {
  std::string error;
  const std::string path = std::string(INFER_SOURCE_DIR) + "/tests/sdk/example_cases.txt";
  std::vector<OpCase> cases = load_op_cases(path, &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_GE(cases.size(), 6u);
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder g;
    RunResult r = run_on_example(handle(), device(), c.build(g), c.inputs());
    ASSERT_TRUE(r.ok()) << status_code_name(r.status.code) << ": " << r.status.message;
    EXPECT_EQ(c.compare(r.outputs), "");
  }
}

}  // namespace
}  // namespace infer::test::example
