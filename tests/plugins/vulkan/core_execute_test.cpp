// Executables end to end: compile, execute through buffers and copies, chains of nodes,
// constants, aliases, pass-through outputs, dynamic shapes, unaligned tensors,
// concurrency, and the errors compile and execute report.
#include <cstring>
#include <thread>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

class ExecuteTest : public VulkanTest {
 protected:
};

TEST_F(ExecuteTest, SingleAddMatchesHandComputedValues) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Add", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {2, 3})},
      {TensorSpec::f32("y", {2, 3})});
  RunResult r = run_vk(graph, {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                               HostTensor::f32({2, 3}, {10, 20, 30, 40, 50, 60})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

TEST_F(ExecuteTest, ChainWithConstantsAndSharedIntermediates) {
  // y = Relu(x + c) * x2 ; z = Sigmoid(t) where t = x + c is both an intermediate with
  // two readers and a graph output.
  GraphBuilder g;
  std::vector<float> c(12);
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.1f * static_cast<float>(i) - 0.5f;
  g.node("Add", {TensorSpec::f32("x", {3, 4}), TensorSpec::constant("c", INFER_DTYPE_FLOAT32, {3, 4}, c)},
         {TensorSpec::f32("t", {3, 4})});
  g.node("Relu", {TensorSpec::f32("t", {3, 4})}, {TensorSpec::f32("r", {3, 4})});
  g.node("Mul", {TensorSpec::f32("r", {3, 4}), TensorSpec::f32("x2", {4})},
         {TensorSpec::f32("y", {3, 4})});
  g.node("Sigmoid", {TensorSpec::f32("t", {3, 4})}, {TensorSpec::f32("z", {3, 4})});
  const infer_graph_view* graph = g.graph({"x", "x2"}, {"y", "t", "z"}, "chain");
  expect_same_as_cpu(graph, 21, 1e-6, 1e-6);
}

TEST_F(ExecuteTest, LongChainReusesTheArena) {
  // 12 nodes in a row: every intermediate dies after its reader, so the arena stays
  // small, and the values stay right.
  GraphBuilder g;
  std::string prev = "x";
  for (int i = 0; i < 12; ++i) {
    const std::string out = i == 11 ? "y" : "v" + std::to_string(i);
    g.node(i % 2 ? "Tanh" : "Add",
           i % 2 ? std::vector<TensorSpec>{TensorSpec::f32(prev, {8, 16})}
                 : std::vector<TensorSpec>{TensorSpec::f32(prev, {8, 16}), TensorSpec::f32("b", {16})},
           {TensorSpec::f32(out, {8, 16})});
    prev = out;
  }
  expect_same_as_cpu(g.graph({"x", "b"}, {"y"}, "long chain"), 31, 1e-5, 1e-5);
  // Each intermediate is 512 bytes; at most two are alive at once (a node's input and
  // output), so the arena holds 2 x 512 bytes, not 11 x 512.
  bool found = false;
  for (const LogEntry& e : vk().host().logs()) {
    if (e.message.find("partition 'long chain': plan for inputs") == std::string::npos) continue;
    found = true;
    EXPECT_NE(e.message.find("12 dispatches, arena of 1024 bytes"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(found);
}

TEST_F(ExecuteTest, AliasesPassThroughsAndDuplicateOutputs) {
  // Cast f32->f32 is an alias: as an intermediate it shares memory, as a graph output it
  // is copied. A graph input and a constant returned as outputs are copied too, and a
  // value returned twice appears twice.
  GraphBuilder g;
  g.node("Cast", {TensorSpec::f32("x", {5})}, {TensorSpec::f32("a", {5})},
         {AttrSpec::Int("to", INFER_DTYPE_FLOAT32)});
  g.node("Neg", {TensorSpec::f32("a", {5})}, {TensorSpec::f32("n", {5})});
  g.node("Cast", {TensorSpec::f32("n", {5})}, {TensorSpec::f32("m", {5})},
         {AttrSpec::Int("to", INFER_DTYPE_FLOAT32)});
  g.value(TensorSpec::constant<float>("k", INFER_DTYPE_FLOAT32, {2}, {7, 8}));
  const infer_graph_view* graph = g.graph({"x"}, {"m", "x", "k", "n", "m"}, "aliases");
  RunResult r = run_vk(graph, {HostTensor::f32({5}, {1, -2, 3, -4, 5})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  ASSERT_EQ(r.outputs.size(), 5u);
  const std::vector<float> neg = {-1, 2, -3, 4, -5};
  EXPECT_EQ(r.outputs[0].as<float>(), neg);
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{1, -2, 3, -4, 5}));
  EXPECT_EQ(r.outputs[2].as<float>(), (std::vector<float>{7, 8}));
  EXPECT_EQ(r.outputs[3].as<float>(), neg);
  EXPECT_EQ(r.outputs[4].as<float>(), neg);
}

TEST_F(ExecuteTest, SymbolicDimsGetAPlanPerShape) {
  GraphBuilder g;
  TensorSpec x = TensorSpec::f32("x", {-1, 4});
  x.dim_params = {"batch", ""};
  TensorSpec y = TensorSpec::f32("y", {-1, 4});
  const infer_graph_view* graph =
      g.single_node_graph("Mul", {x, TensorSpec::f32("s", {4})}, {y});
  StatusInfo st;
  auto compiled = CompiledGraph::compile(vk(), graph, &st, device());
  ASSERT_TRUE(compiled) << st.message;
  for (int64_t batch : {1, 3, 1, 7}) {
    std::vector<float> xs(static_cast<size_t>(batch * 4));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
    RunResult r = compiled->run({HostTensor::f32({batch, 4}, xs), HostTensor::f32({4}, {1, 2, 3, 4})});
    ASSERT_TRUE(r.ok()) << r.status.message;
    ASSERT_EQ(r.outputs[0].dims, (std::vector<int64_t>{batch, 4}));
    std::vector<float> y = r.outputs[0].as<float>();
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y[i], xs[i] * static_cast<float>(i % 4 + 1)) << "batch " << batch << " [" << i << "]";
  }
}

// Runs Add with both inputs and the output at byte offsets `offset` inside larger
// buffers (the host arena aligns to 256, but the ABI allows any offset).
void run_at_offset(VulkanTest* t, PluginHandle& p, infer_device* d, size_t offset) {
  const infer_plugin_api* api = p.api();
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Add", {TensorSpec::f32("a", {6}), TensorSpec::f32("b", {6})}, {TensorSpec::f32("y", {6})});
  StatusInfo st;
  auto compiled = CompiledGraph::compile(p, graph, &st, d);
  ASSERT_TRUE(compiled) << st.message;
  std::vector<uint8_t> host(offset + 24, 0xEE);
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  std::memcpy(host.data() + offset, a, 24);
  infer_buffer* ba = nullptr;
  ASSERT_TRUE(upload(p, d, host.data(), host.size(), &ba, false).ok());
  std::memcpy(host.data() + offset, b, 24);
  infer_buffer* bb = nullptr;
  ASSERT_TRUE(upload(p, d, host.data(), host.size(), &bb, false).ok());
  infer_buffer* out = nullptr;
  ASSERT_TRUE(take_status(api->buffer_alloc(d, INFER_MEMORY_DEVICE_LOCAL, offset + 24, 64, &out)).ok());
  int64_t dims[1] = {6};
  infer_tensor in[2] = {};
  for (int i = 0; i < 2; ++i) {
    in[i].struct_size = sizeof(infer_tensor);
    in[i].dtype = INFER_DTYPE_FLOAT32;
    in[i].rank = 1;
    in[i].dims = dims;
    in[i].buffer = i ? bb : ba;
    in[i].offset = offset;
    in[i].size_bytes = 24;
  }
  struct Ctx {
    infer_buffer* out;
    size_t offset;
  } ctx{out, offset};
  auto alloc = [](void* c, size_t, infer_dtype, size_t, const int64_t*, infer_tensor* o) -> infer_status* {
    auto* x = static_cast<Ctx*>(c);
    *o = infer_tensor{};
    o->struct_size = sizeof *o;
    o->buffer = x->out;
    o->offset = x->offset;
    o->size_bytes = 24;
    return nullptr;
  };
  infer_stream* s = nullptr;
  infer_event* e = nullptr;
  ASSERT_TRUE(take_status(api->stream_create(d, &s)).ok());
  ASSERT_TRUE(take_status(api->event_create(d, &e)).ok());
  infer_event_value signal{e, 1};
  infer_execute_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = 2;
  args.inputs = in;
  args.num_outputs = 1;
  args.alloc_output = alloc;
  args.alloc_ctx = &ctx;
  args.num_signals = 1;
  args.signals = &signal;
  ASSERT_TRUE(take_status(api->execute(compiled->executable(), s, &args)).ok());
  ASSERT_TRUE(take_status(api->event_wait(e, 1, 60ull * 1000 * 1000 * 1000)).ok());
  std::vector<uint8_t> back(offset + 24);
  ASSERT_TRUE(download(p, d, out, 0, back.data(), back.size(), false).ok());
  float y[6];
  std::memcpy(y, back.data() + offset, 24);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], a[i] + 0.5f) << "offset " << offset << " [" << i << "]";
  api->stream_destroy(s);
  api->event_destroy(e);
  for (infer_buffer* buf : {ba, bb, out}) api->buffer_free(buf);
  (void)t;
}

TEST_F(ExecuteTest, TensorsAtUnalignedOffsets) {
  // 4 is below every device's minStorageBufferOffsetAlignment: the runtime copies
  // through an aligned buffer. 256 is aligned everywhere: bound directly.
  for (size_t offset : {4u, 12u, 256u}) run_at_offset(this, vk(), device(), offset);
}

TEST_F(ExecuteTest, ConcurrentExecutionsOnSeveralStreams) {
  GraphBuilder g;
  g.node("Mul", {TensorSpec::f32("a", {64}), TensorSpec::f32("b", {64})}, {TensorSpec::f32("t", {64})});
  g.node("Add", {TensorSpec::f32("t", {64}), TensorSpec::f32("a", {64})}, {TensorSpec::f32("y", {64})});
  const infer_graph_view* graph = g.graph({"a", "b"}, {"y"}, "concurrent");
  StatusInfo st;
  auto compiled = CompiledGraph::compile(vk(), graph, &st, device());
  ASSERT_TRUE(compiled) << st.message;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) {
        std::vector<float> a(64), b(64);
        for (int i = 0; i < 64; ++i) {
          a[size_t(i)] = static_cast<float>(t * 100 + rep * 10 + i % 7);
          b[size_t(i)] = static_cast<float>(i % 3);
        }
        // Each run uses its own stream and event (CompiledGraph::run).
        RunResult r = compiled->run({HostTensor::f32({64}, a), HostTensor::f32({64}, b)});
        if (!r.ok()) {
          errors[size_t(t)] = r.status.message;
          return;
        }
        std::vector<float> y = r.outputs[0].as<float>();
        for (int i = 0; i < 64; ++i)
          if (y[size_t(i)] != a[size_t(i)] * b[size_t(i)] + a[size_t(i)]) {
            errors[size_t(t)] = "wrong value at " + std::to_string(i);
            return;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(errors[size_t(t)], "") << "thread " << t;
}

// The host's pattern for results: execute on one stream signalling an event, the
// device-to-host copy on another stream that waits for it. The copy must see the
// finished result, however long the compute takes. Sizes above one workgroup (256
// threads) matter: a shader indexing bug once left every element past ~257 unwritten.
TEST_F(ExecuteTest, CopyOnAnotherStreamWaitsForTheExecution) {
  const infer_plugin_api* a = api();
  for (int64_t n : {261, 1536, 4096, 65536}) {
    GraphBuilder g;
    const infer_graph_view* graph = g.single_node_graph(
        "Mul", {TensorSpec::f32("x", {n}), TensorSpec::f32("y", {n})}, {TensorSpec::f32("z", {n})});
    StatusInfo st;
    auto compiled = CompiledGraph::compile(vk(), graph, &st, device());
    ASSERT_TRUE(compiled) << st.message;
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(i)] = 1.0f + static_cast<float>(i % 97);
      y[size_t(i)] = 2.0f + static_cast<float>(i % 13);
    }
    const size_t bytes = static_cast<size_t>(n) * 4;
    infer_buffer *bx = nullptr, *by = nullptr, *bz = nullptr;
    ASSERT_TRUE(upload(vk(), device(), x.data(), bytes, &bx, false).ok());
    ASSERT_TRUE(upload(vk(), device(), y.data(), bytes, &by, false).ok());
    ASSERT_TRUE(take_status(a->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, bytes, 256, &bz)).ok());
    infer_stream *compute = nullptr, *copy = nullptr;
    infer_event *done = nullptr, *copied = nullptr;
    ASSERT_TRUE(take_status(a->stream_create(device(), &compute)).ok());
    ASSERT_TRUE(take_status(a->stream_create(device(), &copy)).ok());
    ASSERT_TRUE(take_status(a->event_create(device(), &done)).ok());
    ASSERT_TRUE(take_status(a->event_create(device(), &copied)).ok());
    int64_t dims[1] = {n};
    infer_tensor in[2] = {};
    for (int i = 0; i < 2; ++i) {
      in[i].struct_size = sizeof(infer_tensor);
      in[i].dtype = INFER_DTYPE_FLOAT32;
      in[i].rank = 1;
      in[i].dims = dims;
      in[i].buffer = i ? by : bx;
      in[i].size_bytes = bytes;
    }
    struct Ctx {
      infer_buffer* out;
      size_t bytes;
    } ctx{bz, bytes};
    auto alloc = [](void* c, size_t, infer_dtype, size_t, const int64_t*, infer_tensor* o) -> infer_status* {
      auto* x = static_cast<Ctx*>(c);
      *o = infer_tensor{};
      o->struct_size = sizeof *o;
      o->buffer = x->out;
      o->size_bytes = x->bytes;
      return nullptr;
    };
    infer_event_value signal{done, 1};
    infer_execute_args args{};
    args.struct_size = sizeof args;
    args.num_inputs = 2;
    args.inputs = in;
    args.num_outputs = 1;
    args.alloc_output = alloc;
    args.alloc_ctx = &ctx;
    args.num_signals = 1;
    args.signals = &signal;
    ASSERT_TRUE(take_status(a->execute(compiled->executable(), compute, &args)).ok());
    std::vector<float> z(static_cast<size_t>(n), -1.0f);
    ASSERT_TRUE(take_status(a->stream_wait(copy, done, 1)).ok());
    infer_copy_region r{};
    r.struct_size = sizeof r;
    r.src_buffer = bz;
    r.dst_host = z.data();
    r.size_bytes = bytes;
    ASSERT_TRUE(take_status(a->copy_batch(copy, &r, 1)).ok());
    ASSERT_TRUE(take_status(a->stream_signal(copy, copied, 1)).ok());
    ASSERT_TRUE(take_status(a->event_wait(copied, 1, 60ull * 1000 * 1000 * 1000)).ok());
    int wrong = 0;
    int64_t first = -1;
    for (int64_t i = 0; i < n; ++i)
      if (z[size_t(i)] != x[size_t(i)] * y[size_t(i)]) {
        if (first < 0) first = i;
        ++wrong;
      }
    EXPECT_EQ(wrong, 0) << "n=" << n << ": first wrong element " << first << " = " << (first >= 0 ? z[size_t(first)] : 0.0f);
    a->stream_destroy(compute);
    a->stream_destroy(copy);
    a->event_destroy(done);
    a->event_destroy(copied);
    for (infer_buffer* b : {bx, by, bz}) a->buffer_free(b);
  }
}

TEST_F(ExecuteTest, CompileRefusesUnsupportedNodesNamingThem) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "NoSuchOp", {TensorSpec::f32("x", {2})}, {TensorSpec::f32("y", {2})}, {}, 17, "mystery");
  StatusInfo st;
  EXPECT_FALSE(CompiledGraph::compile(vk(), graph, &st, device()));
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_NE(st.message.find("node 'mystery' (NoSuchOp)"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("no vulkan kernel for NoSuchOp"), std::string::npos) << st.message;
}

TEST_F(ExecuteTest, ExecuteReportsBadInputsAndShapes) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Add", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {-1})}, {TensorSpec::f32("y", {2, 3})},
      {}, 17, "adder");
  StatusInfo st;
  auto compiled = CompiledGraph::compile(vk(), graph, &st, device());
  ASSERT_TRUE(compiled) << st.message;
  // A fixed dim that differs from the graph's.
  RunResult r = compiled->run({HostTensor::f32({3, 3}, std::vector<float>(9)),
                               HostTensor::f32({3}, std::vector<float>(3))});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("input 0 'a' has dims [3,3], expected [2,3]"), std::string::npos)
      << r.status.message;
  // Shapes that do not broadcast: found when the plan is made, naming the node.
  r = compiled->run({HostTensor::f32({2, 3}, std::vector<float>(6)),
                     HostTensor::f32({4}, std::vector<float>(4))});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("node 'adder' (Add): input shapes [2,3] and [4] do not broadcast"),
            std::string::npos)
      << r.status.message;
  // The wrong dtype.
  r = compiled->run({HostTensor::i32({2, 3}, std::vector<int32_t>(6)),
                     HostTensor::f32({3}, std::vector<float>(3))});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.status.message.find("is int32, expected float32"), std::string::npos) << r.status.message;
  // And the executable still works after all that.
  r = compiled->run({HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({3}, {1, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2, 3, 4, 5, 6, 7}));
}

TEST_F(ExecuteTest, EmptyTensorsRunWithoutDispatches) {
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "Relu", {TensorSpec::f32("x", {0, 3})}, {TensorSpec::f32("y", {0, 3})});
  RunResult r = run_vk(graph, {HostTensor::f32({0, 3}, {})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{0, 3}));
}

TEST_F(ExecuteTest, CapabilityRefusesSubgraphsAndUnknownOps) {
  {
    GraphBuilder g;
    g.single_node_graph("If", {TensorSpec::of("c", INFER_DTYPE_BOOL, {})}, {TensorSpec::f32("y", {2})});
    infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("no vulkan kernel for If"), std::string::npos) << cap.reason;
  }
  {
    // A known op carrying a graph attribute is refused by the runtime itself.
    GraphBuilder body;
    const infer_graph_view* sub = body.single_node_graph("Relu", {TensorSpec::f32("i", {2})},
                                                         {TensorSpec::f32("o", {2})});
    (void)sub;
    GraphBuilder g;
    AttrSpec attr;
    attr.name = "body";
    attr.type = INFER_ATTR_GRAPH;
    g.single_node_graph("Relu", {TensorSpec::f32("x", {2})}, {TensorSpec::f32("y", {2})}, {attr});
    infer_capability cap = capability(g.last_node());
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("subgraph attribute 'body'"), std::string::npos) << cap.reason;
  }
  {
    GraphBuilder g;
    g.single_node_graph("Relu", {TensorSpec::f32("x", {2})}, {TensorSpec::f32("y", {2})});
    infer_capability cap = capability(g.last_node());
    infer_device_props props{};
    props.struct_size = sizeof props;
    ASSERT_TRUE(take_status(api()->device_get_props(device(), &props)).ok());
    // lavapipe is never PREFERRED (the cpu plugin is faster); a GPU is.
    EXPECT_EQ(cap.support, props.kind == INFER_DEVICE_CPU ? INFER_SUPPORT_YES : INFER_SUPPORT_PREFERRED);
  }
}

}  // namespace
}  // namespace infer::test::vk
