// Tests of the SDK's header-only ABI glue (sdk/include/infer/plugin_glue.hpp), against a
// minimal host services table that records the statuses it creates and frees. Expected
// messages are written out by hand from the documented formats.
#include "infer/plugin_glue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace infer::sdk {
namespace {

// ---- A fake host: statuses are heap objects; the counters catch leaks and double frees.

struct FakeStatus {
  infer_status_code code;
  std::string message;
};

std::atomic<int> g_live_statuses{0};

infer_status* fake_status_create(void*, infer_status_code code, const char* message) {
  ++g_live_statuses;
  return reinterpret_cast<infer_status*>(new FakeStatus{code, message});
}
void fake_status_free(infer_status* s) {
  --g_live_statuses;
  delete reinterpret_cast<FakeStatus*>(s);
}
infer_status_code fake_status_code(const infer_status* s) {
  return reinterpret_cast<const FakeStatus*>(s)->code;
}
const char* fake_status_message(const infer_status* s) {
  return reinterpret_cast<const FakeStatus*>(s)->message.c_str();
}
bool fake_is_cancelled(void* ctx, const infer_run_context*) { return *static_cast<bool*>(ctx); }

class GlueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_live_statuses = 0;
    services_.struct_size = sizeof services_;
    services_.abi_major = INFER_ABI_VERSION_MAJOR;
    services_.abi_minor = INFER_ABI_VERSION_MINOR;
    services_.host_ctx = &cancelled_;
    services_.status_create = fake_status_create;
    services_.status_free = fake_status_free;
    services_.status_code = fake_status_code;
    services_.status_message = fake_status_message;
    services_.is_cancelled = fake_is_cancelled;
  }
  void TearDown() override { EXPECT_EQ(g_live_statuses.load(), 0) << "a status leaked"; }

  // Takes a status: its code and message, and frees it. {OK, ""} for NULL.
  static FakeStatus take(infer_status* s) {
    if (s == nullptr) return {INFER_STATUS_OK, ""};
    FakeStatus copy = *reinterpret_cast<FakeStatus*>(s);
    fake_status_free(s);
    return copy;
  }

  bool cancelled_ = false;
  infer_host_services services_{};
  Host host_{&services_};
};

// ---- Failures and statuses -------------------------------------------------------------

TEST_F(GlueTest, ToStatusMakesOneStatusPerFailureAndNullForSuccess) {
  EXPECT_EQ(to_status(host_, std::nullopt), nullptr);
  FakeStatus s = take(to_status(host_, failure(INFER_STATUS_UNSUPPORTED, "no Conv here")));
  EXPECT_EQ(s.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(s.message, "no Conv here");
}

TEST_F(GlueTest, TakeStatusKeepsTheCodePrefixesTheMessageAndFreesTheStatus) {
  infer_status* from_host = fake_status_create(nullptr, INFER_STATUS_OUT_OF_MEMORY, "arena full");
  Failure f = take_status(host_, from_host, "vulkan: alloc_output for output 0 'y' failed: ");
  EXPECT_EQ(f.code, INFER_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(f.message, "vulkan: alloc_output for output 0 'y' failed: arena full");
  EXPECT_EQ(g_live_statuses.load(), 0);
}

TEST_F(GlueTest, NamesForMessages) {
  EXPECT_EQ(dtype_name(INFER_DTYPE_FLOAT32), "float32");
  EXPECT_EQ(dtype_name(INFER_DTYPE_INT4), "int4");
  EXPECT_EQ(dtype_name(INFER_DTYPE_UNDEFINED), "undefined");
  EXPECT_EQ(dims_text(std::vector<int64_t>{2, -1, 3}), "[2,-1,3]");
  EXPECT_EQ(dims_text(std::vector<int64_t>{}), "[]");
  infer_value_view unnamed{};
  EXPECT_EQ(value_name(&unnamed), "");
  EXPECT_EQ(value_name(nullptr), "");
  EXPECT_EQ(input_label(2, "x"), "input 2 'x'");
}

TEST_F(GlueTest, HostCancelledAsksTheOptionalService) {
  const auto* run = reinterpret_cast<const infer_run_context*>(&cancelled_);
  EXPECT_FALSE(host_.cancelled(run));
  cancelled_ = true;
  EXPECT_TRUE(host_.cancelled(run));
  EXPECT_FALSE(host_.cancelled(nullptr));
  services_.is_cancelled = nullptr;
  EXPECT_FALSE(host_.cancelled(run));
}

// ---- Entry points ----------------------------------------------------------------------

TEST_F(GlueTest, EntryPointWordsNullArgumentsAndErrors) {
  const EntryPoint entry(host_, "demo", "compile");
  FakeStatus s = take(entry.null_argument("graph or out"));
  EXPECT_EQ(s.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "demo: compile: graph or out is NULL");
  s = take(entry.error(INFER_STATUS_INVALID_ARGUMENT, "unknown memory kind 7"));
  EXPECT_EQ(s.message, "demo: compile: unknown memory kind 7");
}

TEST_F(GlueTest, EntryPointRunConvertsEveryKindOfBodyResult) {
  const EntryPoint entry(host_, "demo", "execute");
  int calls = 0;
  EXPECT_EQ(entry.run([&] { ++calls; }), nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(entry.run([]() -> MaybeFailure { return std::nullopt; }), nullptr);
  FakeStatus s = take(entry.run([]() -> MaybeFailure {
    return failure(INFER_STATUS_UNAVAILABLE, "demo: device lost");
  }));
  EXPECT_EQ(s.code, INFER_STATUS_UNAVAILABLE);
  EXPECT_EQ(s.message, "demo: device lost");
  s = take(entry.run([&]() -> infer_status* {
    return host_.status(INFER_STATUS_TIMEOUT, "passed on as it is");
  }));
  EXPECT_EQ(s.code, INFER_STATUS_TIMEOUT);
  EXPECT_EQ(s.message, "passed on as it is");
}

TEST_F(GlueTest, EntryPointRunTurnsExceptionsIntoStatuses) {
  const EntryPoint entry(host_, "demo", "execute");
  FakeStatus s = take(entry.run([] { throw std::runtime_error("boom"); }));
  EXPECT_EQ(s.code, INFER_STATUS_INTERNAL);
  EXPECT_EQ(s.message, "plugin exception: boom");
  s = take(entry.run([] { throw std::bad_alloc(); }));
  EXPECT_EQ(s.code, INFER_STATUS_OUT_OF_MEMORY);
}

struct Widget {
  int value = 0;
};
struct widget_handle;  // an opaque handle type, like the ABI's
INFER_SDK_HANDLE(widget_handle, Widget)

TEST_F(GlueTest, HandlesRoundTripAndMakeHandleHandsOutOnlyOnSuccess) {
  Widget w;
  EXPECT_EQ(from_handle(to_handle(&w)), &w);
  const widget_handle* const_handle = to_handle(&w);
  const Widget* const_widget = from_handle(const_handle);  // the const overload
  EXPECT_EQ(const_widget, &w);

  widget_handle* out = nullptr;
  MaybeFailure f = make_handle<Widget>(&out, [](std::unique_ptr<Widget>* p) -> MaybeFailure {
    *p = std::make_unique<Widget>();
    (*p)->value = 42;
    return std::nullopt;
  });
  ASSERT_FALSE(f);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(from_handle(out)->value, 42);
  delete from_handle(out);

  widget_handle* untouched = nullptr;
  f = make_handle<Widget>(&untouched, [](std::unique_ptr<Widget>* p) -> MaybeFailure {
    *p = std::make_unique<Widget>();  // made, then the factory fails: nothing may leak
    return failure(INFER_STATUS_OUT_OF_MEMORY, "demo: full");
  });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->message, "demo: full");
  EXPECT_EQ(untouched, nullptr);
}

TEST_F(GlueTest, DeadlineAfterTreatsHugeTimeoutsAsForever) {
  EXPECT_FALSE(deadline_after(UINT64_MAX).has_value());
  const auto before = std::chrono::steady_clock::now();
  auto d = deadline_after(1000000000ull);  // one second
  ASSERT_TRUE(d.has_value());
  EXPECT_GE(*d - before, std::chrono::milliseconds(999));
}

// ---- Timeline --------------------------------------------------------------------------

struct Recorded {
  int calls = 0;
  infer_status_code code = INFER_STATUS_OK;
  std::string message;
};
void record(void* user, const infer_status* status) {
  auto* r = static_cast<Recorded*>(user);
  ++r->calls;
  r->code = status ? fake_status_code(status) : INFER_STATUS_OK;
  r->message = status ? fake_status_message(status) : "";
}

TEST_F(GlueTest, TimelineCountsUpAndRunsEachCallbackOnce) {
  Timeline t(host_, "demo");
  Recorded at2, at5;
  t.on_complete(2, record, &at2);
  t.on_complete(5, record, &at5);
  t.advance(2);
  EXPECT_EQ(at2.calls, 1);
  EXPECT_EQ(at5.calls, 0);
  t.advance(1);  // below the counter: no effect
  uint64_t value = 0;
  EXPECT_FALSE(t.query(&value));
  EXPECT_EQ(value, 2u);
  EXPECT_TRUE(t.resolved(2));
  EXPECT_FALSE(t.resolved(3));
  EXPECT_FALSE(t.signal_from_host(5));
  EXPECT_EQ(at5.calls, 1);
  EXPECT_EQ(at5.code, INFER_STATUS_OK);
  EXPECT_EQ(t.wait_status(5, 0), nullptr);
  Recorded late;
  t.on_complete(4, record, &late);  // already reached: runs right away
  EXPECT_EQ(late.calls, 1);
}

TEST_F(GlueTest, TimelineRefusesHostSignalsBelowTheCounter) {
  Timeline t(host_, "demo");
  t.advance(5);
  MaybeFailure f = t.check_host_signal(3);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(f->message,
            "demo: event_signal_host: value 3 is below the counter 5 (timeline counters only grow)");
  EXPECT_FALSE(t.check_host_signal(5));
}

TEST_F(GlueTest, TimelineFailureSticksAndWinsOverReachedValues) {
  Timeline t(host_, "demo");
  t.advance(1);
  Recorded pending;
  t.on_complete(3, record, &pending);
  t.fail(failure(INFER_STATUS_INTERNAL, "demo: kernel failed"));
  t.fail(failure(INFER_STATUS_CANCELLED, "second failure is ignored"));
  EXPECT_EQ(pending.calls, 1);
  EXPECT_EQ(pending.code, INFER_STATUS_INTERNAL);
  EXPECT_EQ(pending.message, "demo: kernel failed");
  FakeStatus s = take(t.wait_status(1, UINT64_MAX));  // even a value already passed
  EXPECT_EQ(s.code, INFER_STATUS_INTERNAL);
  EXPECT_EQ(s.message, "demo: kernel failed");
  uint64_t value = 0;
  ASSERT_TRUE(t.query(&value));
  EXPECT_TRUE(t.failure_state());
  EXPECT_TRUE(t.signal_from_host(9));
  t.advance(9);
  EXPECT_EQ(value, 1u);
}

TEST_F(GlueTest, TimelineWaitTimesOutWithItsValueAndTimeout) {
  Timeline t(host_, "demo");
  FakeStatus s = take(t.wait_status(1, 1000));
  EXPECT_EQ(s.code, INFER_STATUS_TIMEOUT);
  EXPECT_EQ(s.message, "demo: event_wait for value 1 timed out after 1000 ns");
}

TEST_F(GlueTest, DestroyingATimelineCancelsItsPendingCallbacks) {
  Recorded pending;
  {
    Timeline t(host_, "demo");
    t.on_complete(1, record, &pending);
  }
  EXPECT_EQ(pending.calls, 1);
  EXPECT_EQ(pending.code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(pending.message, "demo: event destroyed before its callbacks' values were reached");
}

// ---- Graph view copies -----------------------------------------------------------------

TEST_F(GlueTest, TensorInfoAndNodeInfoCopyTheViews) {
  const int64_t dims[] = {-1, 3};
  infer_value_view x{};
  x.struct_size = sizeof x;
  x.name = "x";
  x.dtype = INFER_DTYPE_FLOAT16;
  x.rank = 2;
  x.dims = dims;
  const TensorInfo info = TensorInfo::of(x);
  EXPECT_EQ(info.dtype, INFER_DTYPE_FLOAT16);
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims, (std::vector<int64_t>{-1, 3}));

  const int64_t perm[] = {1, 0};
  infer_attr_view attrs[3]{};
  attrs[0].name = "perm";
  attrs[0].type = INFER_ATTR_INTS;
  attrs[0].ints = perm;
  attrs[0].count = 2;
  attrs[1].name = "mode";
  attrs[1].type = INFER_ATTR_STRING;
  attrs[1].s = "cubic";
  attrs[1].s_len = 5;
  attrs[2].name = nullptr;  // a nameless attribute is skipped
  infer_node_view node{};
  node.struct_size = sizeof node;
  node.name = "t1";
  node.op_type = "Transpose";
  node.domain = nullptr;
  node.opset = 13;
  node.num_inputs = 1;
  node.num_outputs = 1;
  node.num_attrs = 3;
  node.attrs = attrs;
  const NodeInfo copy = NodeInfo::of(node);
  EXPECT_EQ(copy.describe(), "node 't1' (Transpose)");
  EXPECT_EQ(copy.domain, "");
  EXPECT_EQ(copy.opset, 13);
  EXPECT_EQ(copy.attrs.size(), 2u);
  EXPECT_EQ(copy.attr_ints("perm", {}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(copy.attr_string("mode", "linear"), "cubic");
  // A missing attribute, or one of another type, gives the fallback.
  EXPECT_EQ(copy.attr_int("mode", 7), 7);
  EXPECT_EQ(copy.attr_float("alpha", 0.5), 0.5);
  EXPECT_FALSE(copy.has_attr("alpha"));
}

TEST_F(GlueTest, PartitionNameAndConstantDims) {
  infer_graph_view graph{};
  graph.name = "g";
  EXPECT_EQ(partition_name(graph, nullptr), "g");
  infer_compile_options options{};
  options.struct_size = sizeof options;
  options.partition_name = "vulkan:0";
  EXPECT_EQ(partition_name(graph, &options), "vulkan:0");
  graph.name = nullptr;
  EXPECT_EQ(partition_name(graph, nullptr), "partition");

  const int64_t dims[] = {2, -1};
  infer_value_view w{};
  w.name = "w";
  w.rank = 2;
  w.dims = dims;
  std::vector<int64_t> out;
  EXPECT_EQ(constant_dims(w, &out), "constant 'w' has a symbolic dim");
  w.rank = -1;
  EXPECT_EQ(constant_dims(w, &out), "constant 'w' has an unknown shape");
  w.rank = 1;
  EXPECT_EQ(constant_dims(w, &out), std::nullopt);
  EXPECT_EQ(out, (std::vector<int64_t>{2}));
}

TEST_F(GlueTest, ValueIdsNumberAViewsValuesAndNameWhatIsWrong) {
  infer_value_view x{}, w{}, y{}, stray{};
  x.name = "x";
  w.name = "w";
  const float weights[] = {1.0f};
  w.const_data = weights;
  y.name = "y";
  stray.name = "stray";
  ValueIds ids;
  EXPECT_EQ(ids.check_graph_input(0, nullptr), "graph input 0 is NULL");
  EXPECT_EQ(ids.check_graph_input(0, &x), std::nullopt);
  ids.assign(&x, 0);
  EXPECT_EQ(ids.check_graph_input(1, &x), "graph input 'x' is listed twice");

  size_t id = 99;
  EXPECT_EQ(ids.classify(nullptr, &id), ValueIds::Input::kOmitted);
  EXPECT_EQ(ids.classify(&x, &id), ValueIds::Input::kKnown);
  EXPECT_EQ(id, 0u);
  EXPECT_EQ(ids.classify(&w, &id), ValueIds::Input::kConstant);
  ids.assign(&w, 1);
  EXPECT_EQ(ids.classify(&w, &id), ValueIds::Input::kKnown);  // uploaded once, then shared
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(ids.classify(&stray, &id), ValueIds::Input::kUnknown);
  EXPECT_EQ(ValueIds::unknown_input("node 'a' (Add)", &stray),
            "node 'a' (Add): input 'stray' is neither a graph input, a constant, nor an earlier "
            "node's output");

  EXPECT_EQ(ids.check_node_output("node 'a' (Add)", &y), std::nullopt);
  ids.assign(&y, 2);
  EXPECT_EQ(ids.check_node_output("node 'b' (Mul)", &y),
            "node 'b' (Mul): output 'y' is already defined");
  EXPECT_EQ(ids.find(&y), 2u);
  EXPECT_EQ(ids.find(&stray), std::nullopt);

  const infer_node_view* nodes[] = {nullptr};
  infer_graph_view graph{};
  graph.num_nodes = 1;
  graph.nodes = nodes;
  EXPECT_EQ(check_node_entry(graph, 0), "node 0 is NULL");
  infer_node_view add{};
  add.name = "a";
  add.op_type = "Add";
  EXPECT_EQ(node_label(add), "node 'a' (Add)");
  add.name = nullptr;
  EXPECT_EQ(node_label(add), "node '' (Add)");
}

TEST_F(GlueTest, WalkGraphVisitsInputsThenNodesAndRefusesMalformedLists) {
  infer_value_view a{}, b{};
  a.name = "a";
  b.name = "b";
  infer_node_view n0{};
  n0.name = "n0";
  const infer_value_view* inputs[] = {&a, &b};
  const infer_node_view* nodes[] = {&n0};
  infer_graph_view graph{};
  graph.num_inputs = 2;
  graph.inputs = inputs;
  graph.num_nodes = 1;
  graph.nodes = nodes;

  ValueIds ids;
  std::vector<std::string> seen;
  auto on_input = [&](const infer_value_view& v) {
    ids.assign(&v, seen.size());
    seen.push_back(std::string("input ") + v.name);
  };
  auto on_node = [&](const infer_node_view& n) -> MaybeFailure {
    seen.push_back(std::string("node ") + n.name);
    return std::nullopt;
  };
  EXPECT_FALSE(walk_graph(graph, ids, "demo: partition 'p': ", on_input, on_node));
  EXPECT_EQ(seen, (std::vector<std::string>{"input a", "input b", "node n0"}));

  inputs[1] = &a;  // listed twice
  ValueIds fresh;
  MaybeFailure f = walk_graph(
      graph, fresh, "demo: partition 'p': ",
      [&](const infer_value_view& v) { fresh.assign(&v, 0); }, on_node);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(f->message, "demo: partition 'p': graph input 'a' is listed twice");

  inputs[1] = &b;
  nodes[0] = nullptr;
  ValueIds again;
  f = walk_graph(graph, again, "demo: partition 'p': ", [](const infer_value_view&) {}, on_node);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->message, "demo: partition 'p': node 0 is NULL");

  nodes[0] = &n0;  // a node's own failure is passed on as it is
  ValueIds last;
  f = walk_graph(
      graph, last, "demo: partition 'p': ", [](const infer_value_view&) {},
      [](const infer_node_view&) -> MaybeFailure {
        return failure(INFER_STATUS_UNSUPPORTED, "demo: node 'n0' (Conv): unsupported");
      });
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(f->message, "demo: node 'n0' (Conv): unsupported");
}

// ---- Execute and copy arguments --------------------------------------------------------

TEST_F(GlueTest, CheckExecuteArgs) {
  infer_execute_args args{};
  args.struct_size = sizeof args;
  EXPECT_EQ(check_execute_args(&args, 0, 0), std::nullopt);
  EXPECT_EQ(check_execute_args(&args, 1, 0), "got 0 inputs, expected 1");
  EXPECT_EQ(check_execute_args(&args, 0, 2), "got 0 outputs, expected 2");
  args.num_outputs = 1;
  EXPECT_EQ(check_execute_args(&args, 0, 1), "alloc_output is NULL");
  args.num_outputs = 0;
  args.num_waits = 1;
  EXPECT_EQ(check_execute_args(&args, 0, 0),
            "an array of inputs, waits or signals is NULL but its count is not 0");
  infer_event_value wait{nullptr, 3};
  args.waits = &wait;
  EXPECT_EQ(check_execute_args(&args, 0, 0), "wait 0 has no event");
  args.num_waits = 0;
  args.struct_size = offsetof(infer_execute_args, num_signals);
  EXPECT_EQ(check_execute_args(&args, 0, 0),
            "infer_execute_args.struct_size " + std::to_string(args.struct_size) +
                " is too small");
}

TEST_F(GlueTest, CheckInputTensorAgainstTheDeclaredTypeAndShape) {
  const TensorInfo expected{INFER_DTYPE_FLOAT32, 2, {-1, 3}};
  const int64_t dims[] = {2, 4};
  infer_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = INFER_DTYPE_FLOAT32;
  t.rank = 2;
  t.dims = dims;
  std::vector<int64_t> got;
  EXPECT_EQ(check_input_tensor(t, "input 0 'x'", expected, &got),
            "input 0 'x' has dims [2,4], expected [-1,3] (-1: any)");
  const int64_t good[] = {5, 3};
  t.dims = good;
  EXPECT_EQ(check_input_tensor(t, "input 0 'x'", expected, &got), std::nullopt);
  EXPECT_EQ(got, (std::vector<int64_t>{5, 3}));
  t.dtype = INFER_DTYPE_INT64;
  EXPECT_EQ(check_input_tensor(t, "input 0 'x'", expected, &got),
            "input 0 'x' is int64, expected float32");
  t.dtype = INFER_DTYPE_FLOAT32;
  t.rank = 1;
  EXPECT_EQ(check_input_tensor(t, "input 0 'x'", expected, &got),
            "input 0 'x' has rank 1, expected 2");
  // UNDEFINED dtype and rank -1 accept anything.
  EXPECT_EQ(check_input_tensor(t, "input 0 'x'", TensorInfo{}, &got), std::nullopt);
  t.struct_size = offsetof(infer_tensor, size_bytes);
  EXPECT_EQ(check_input_tensor(t, "input 0 'x'", expected, &got),
            "input 0 'x': infer_tensor.struct_size is too small");
}

TEST_F(GlueTest, CheckTensorMemory) {
  infer_tensor t{};
  t.offset = 16;
  t.size_bytes = 32;
  EXPECT_EQ(check_tensor_memory(t, "input 1 'b'", 32, std::nullopt), "input 1 'b' has no buffer");
  EXPECT_EQ(check_tensor_memory(t, "input 1 'b'", 32, BufferExtent{64, false}),
            "input 1 'b' is in another device's buffer");
  EXPECT_EQ(check_tensor_memory(t, "input 1 'b'", 32, BufferExtent{48, true}), std::nullopt);
  EXPECT_EQ(check_tensor_memory(t, "input 1 'b'", 32, BufferExtent{40, true}),
            "input 1 'b' needs 32 bytes at offset 16 of a 40-byte buffer (size_bytes 32)");
  EXPECT_EQ(check_tensor_memory(t, "input 1 'b'", 48, BufferExtent{128, true}),
            "input 1 'b' needs 48 bytes at offset 16 of a 128-byte buffer (size_bytes 32)");
  EXPECT_TRUE(range_fits(10, 10, 0));
  EXPECT_FALSE(range_fits(10, SIZE_MAX, 2));  // no overflow
}

TEST_F(GlueTest, CheckCopyRegion) {
  char host[8];
  auto* buffer = reinterpret_cast<infer_buffer*>(host);  // never dereferenced
  infer_copy_region r{};
  r.struct_size = sizeof r;
  r.src_host = host;
  r.dst_buffer = buffer;
  EXPECT_EQ(check_copy_region(r), std::nullopt);
  r.src_buffer = buffer;
  EXPECT_EQ(check_copy_region(r), "set exactly one of src_host and src_buffer");
  r.src_buffer = nullptr;
  r.dst_host = host;
  EXPECT_EQ(check_copy_region(r), "set exactly one of dst_host and dst_buffer");
  r.dst_buffer = nullptr;
  EXPECT_EQ(check_copy_region(r),
            "host-to-host copies are not the device's business (use memcpy)");
  r.struct_size = offsetof(infer_copy_region, size_bytes);
  EXPECT_EQ(check_copy_region(r),
            "struct_size " + std::to_string(r.struct_size) + " is too small");
}

}  // namespace
}  // namespace infer::sdk
