// Timeline events and stream ordering: host signals and waits, timeouts, queries,
// completion callbacks before and after completion, sticky failures (a kernel cancelled
// at run time), failure propagation across streams, and that one stream runs copy ->
// kernel -> copy strictly in order, asynchronously to the host.
#include <atomic>
#include <thread>

#include "example_fixture.hpp"

namespace infer::test::example {
namespace {

constexpr uint64_t kForever = UINT64_MAX;
constexpr uint64_t kFiveSeconds = 5ull * 1000 * 1000 * 1000;

using ExampleEvents = ExampleTest;

TEST_F(ExampleEvents, HostSignalReleasesAWaiterOnAnotherThread) {
  infer_event* e = new_event();
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_OK(take_status(api()->event_signal_host(e, 3)));
  });
  EXPECT_OK(take_status(api()->event_wait(e, 3, kForever)));
  signaller.join();
  uint64_t value = 0;
  EXPECT_OK(take_status(api()->event_query(e, &value)));
  EXPECT_EQ(value, 3u);
  // A wait for a value already passed returns at once.
  EXPECT_OK(take_status(api()->event_wait(e, 2, 0)));
}

TEST_F(ExampleEvents, WaitTimesOut) {
  infer_event* e = new_event();
  ASSERT_OK(take_status(api()->event_signal_host(e, 1)));
  const auto start = std::chrono::steady_clock::now();
  StatusInfo st = take_status(api()->event_wait(e, 2, 10'000'000));  // 10 ms
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(10));
  EXPECT_EQ(st.code, INFER_STATUS_TIMEOUT);
  EXPECT_NE(st.message.find("timed out"), std::string::npos) << st.message;
  // A zero timeout polls.
  EXPECT_EQ(take_status(api()->event_wait(e, 2, 0)).code, INFER_STATUS_TIMEOUT);
}

TEST_F(ExampleEvents, CountersOnlyGrow) {
  infer_event* e = new_event();
  uint64_t value = 99;
  ASSERT_OK(take_status(api()->event_query(e, &value)));
  EXPECT_EQ(value, 0u);  // events start at 0
  ASSERT_OK(take_status(api()->event_signal_host(e, 5)));
  ASSERT_OK(take_status(api()->event_signal_host(e, 5)));  // the same value again is fine
  StatusInfo st = take_status(api()->event_signal_host(e, 4));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("only grow"), std::string::npos) << st.message;
  // A stream signal of a lower value leaves the counter alone.
  infer_stream* s = new_stream();
  ASSERT_OK(take_status(api()->stream_signal(s, e, 2)));
  ASSERT_OK(sync(s, e, 5));
  ASSERT_OK(take_status(api()->event_query(e, &value)));
  EXPECT_EQ(value, 5u);
}

// Reads the code of a borrowed status through the host's table.
struct Recorder {
  const infer_host_services* host = nullptr;
  std::atomic<int> calls{0};
  std::atomic<int> code{-1};
  std::string message;
  std::thread::id thread;
  static void fn(void* user, const infer_status* status) {
    auto* r = static_cast<Recorder*>(user);
    r->thread = std::this_thread::get_id();
    if (status == nullptr) {
      r->code = INFER_STATUS_OK;
    } else {
      r->code = r->host->status_code(status);
      r->message = r->host->status_message(status);
    }
    r->calls.fetch_add(1);
  }
};

TEST_F(ExampleEvents, CallbackRegisteredAfterCompletionRunsAtOnceOnTheCaller) {
  infer_event* e = new_event();
  ASSERT_OK(take_status(api()->event_signal_host(e, 3)));
  Recorder r;
  r.host = handle().services();
  ASSERT_OK(take_status(api()->event_on_complete(e, 2, Recorder::fn, &r)));
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.code.load(), INFER_STATUS_OK);
  EXPECT_EQ(r.thread, std::this_thread::get_id());
}

TEST_F(ExampleEvents, CallbackRegisteredBeforeCompletionRunsOnceWhenReached) {
  infer_event* e = new_event();
  Recorder r;
  r.host = handle().services();
  ASSERT_OK(take_status(api()->event_on_complete(e, 2, Recorder::fn, &r)));
  EXPECT_EQ(r.calls.load(), 0);
  ASSERT_OK(take_status(api()->event_signal_host(e, 1)));
  EXPECT_EQ(r.calls.load(), 0);
  // Reached from a stream: the callback runs on the queue thread.
  infer_stream* s = new_stream();
  ASSERT_OK(sync(s, e, 2));
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.code.load(), INFER_STATUS_OK);
  EXPECT_NE(r.thread, std::this_thread::get_id());
  ASSERT_OK(take_status(api()->event_signal_host(e, 7)));
  EXPECT_EQ(r.calls.load(), 1);  // exactly once
}

TEST_F(ExampleEvents, WaitReturnsOnlyAfterTheCallbacksItReleasedHaveReturned) {
  // A host frees a callback's user data once its own wait for the same value returns,
  // so the callback must be finished by then, even when it is slow and runs on the
  // queue thread.
  struct Slow {
    std::atomic<bool> finished{false};
    static void fn(void* user, const infer_status*) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      static_cast<Slow*>(user)->finished = true;
    }
  };
  infer_event* e = new_event();
  infer_stream* s = new_stream();
  for (uint64_t v = 1; v <= 3; ++v) {
    Slow slow;
    ASSERT_OK(take_status(api()->event_on_complete(e, v, Slow::fn, &slow)));
    ASSERT_OK(take_status(api()->stream_signal(s, e, v)));
    ASSERT_OK(take_status(api()->event_wait(e, v, kFiveSeconds)));
    EXPECT_TRUE(slow.finished.load()) << "value " << v;
  }
}

TEST_F(ExampleEvents, DestroyingAnEventStillRunsItsPendingCallbacks) {
  infer_event* e = nullptr;
  ASSERT_OK(take_status(api()->event_create(device(), &e)));
  Recorder r;
  r.host = handle().services();
  ASSERT_OK(take_status(api()->event_on_complete(e, 10, Recorder::fn, &r)));
  api()->event_destroy(e);
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.code.load(), INFER_STATUS_CANCELLED);
}

TEST_F(ExampleEvents, StreamWaitHoldsLaterWorkUntilTheHostSignals) {
  infer_event* gate = new_event();
  infer_event* done = new_event();
  infer_stream* s = new_stream();
  infer_buffer* b = new_buffer(4);
  const float x = 42.0f;
  ASSERT_OK(take_status(api()->stream_wait(s, gate, 1)));
  infer_copy_region r = region();
  r.src_host = &x;
  r.dst_buffer = b;
  r.size_bytes = 4;
  ASSERT_OK(take_status(api()->copy_batch(s, &r, 1)));
  ASSERT_OK(take_status(api()->stream_signal(s, done, 1)));
  // Everything above returned at once; nothing ran yet.
  EXPECT_EQ(take_status(api()->event_wait(done, 1, 20'000'000)).code, INFER_STATUS_TIMEOUT);
  ASSERT_OK(take_status(api()->event_signal_host(gate, 1)));
  ASSERT_OK(take_status(api()->event_wait(done, 1, kFiveSeconds)));
  EXPECT_EQ(read_floats(b, 0, 1), std::vector<float>{42.0f});
}

// A one-node Relu partition over [n] floats.
const infer_graph_view* relu_graph(GraphBuilder& g, int64_t n) {
  return g.single_node_graph("Relu", {TensorSpec::f32("x", {n})}, {TensorSpec::f32("y", {n})});
}

TEST_F(ExampleEvents, CopyKernelCopyRunInOrderOnOneStream) {
  GraphBuilder g;
  infer_executable* relu = compile(relu_graph(g, 4));
  ASSERT_NE(relu, nullptr);
  infer_stream* s = new_stream();
  infer_event* gate = new_event();
  infer_event* done = new_event();
  infer_buffer* x = new_buffer(16);
  const std::vector<float> in = {-1.0f, 2.0f, -3.0f, 4.0f};
  std::vector<float> out(4, -99.0f);

  // Hold the queue so that the whole sequence is enqueued before anything runs: if the
  // stream did not keep order, the kernel could read x before the copy filled it.
  ASSERT_OK(take_status(api()->stream_wait(s, gate, 1)));
  infer_copy_region up = region();
  up.src_host = in.data();
  up.dst_buffer = x;
  up.size_bytes = 16;
  ASSERT_OK(take_status(api()->copy_batch(s, &up, 1)));
  const std::vector<int64_t> dims = {4};
  std::vector<infer_tensor> inputs = {f32_tensor(x, dims)};
  OutputSlots outs = output_slots(1);
  infer_execute_args args = execute_args(inputs, &outs);
  ASSERT_OK(take_status(api()->execute(relu, s, &args)));
  // The output was allocated inside execute, with the shape known at enqueue time.
  ASSERT_EQ(outs.calls, 1);
  EXPECT_EQ(outs.dims[0], dims);
  infer_copy_region down = region();
  down.src_buffer = outs.buffers[0];
  down.dst_host = out.data();
  down.size_bytes = 16;
  ASSERT_OK(take_status(api()->copy_batch(s, &down, 1)));
  ASSERT_OK(take_status(api()->stream_signal(s, done, 1)));

  EXPECT_EQ(out, std::vector<float>(4, -99.0f));  // nothing has run yet
  ASSERT_OK(take_status(api()->event_signal_host(gate, 1)));
  ASSERT_OK(take_status(api()->event_wait(done, 1, kFiveSeconds)));
  EXPECT_EQ(out, (std::vector<float>{0.0f, 2.0f, 0.0f, 4.0f}));
}

// Enqueues one Relu execution over `x` on `s`, signalling `event` to `value`, with a
// run context (any non-NULL pointer: the TestHost's is_cancelled reads only its flag).
StatusInfo execute_relu(const infer_plugin_api* api, infer_executable* relu, infer_stream* s,
                        infer_buffer* x, infer_event* event, uint64_t value,
                        ExampleTest::OutputSlots* outs) {
  static const std::vector<int64_t> dims = {4};
  std::vector<infer_tensor> inputs = {ExampleTest::f32_tensor(x, dims)};
  infer_execute_args args = ExampleTest::execute_args(inputs, outs);
  infer_event_value signal{event, value};
  args.num_signals = 1;
  args.signals = &signal;
  static int run_context_stand_in;
  args.run = reinterpret_cast<infer_run_context*>(&run_context_stand_in);
  return take_status(api->execute(relu, s, &args));
}

TEST_F(ExampleEvents, AKernelFailingAtRunTimeFailsItsEventsForGood) {
  GraphBuilder g;
  infer_executable* relu = compile(relu_graph(g, 4));
  infer_stream* s = new_stream();
  infer_event* e = new_event();
  infer_buffer* x = new_buffer(16);
  Recorder before;
  before.host = handle().services();
  ASSERT_OK(take_status(api()->event_on_complete(e, 1, Recorder::fn, &before)));

  // Cancellation is noticed on the queue thread, before the kernel runs: execute itself
  // succeeds, and the failure arrives through the event it was to signal.
  host().set_cancelled(true);
  OutputSlots outs = output_slots(1);
  ASSERT_OK(execute_relu(api(), relu, s, x, e, 1, &outs));
  StatusInfo st = take_status(api()->event_wait(e, 1, kFiveSeconds));
  EXPECT_EQ(st.code, INFER_STATUS_CANCELLED);
  EXPECT_NE(st.message.find("cancelled before node"), std::string::npos) << st.message;
  host().set_cancelled(false);

  // event_wait returned, so the callback released by the failure has already returned.
  // The failure sticks: queries, waits (even for lower values), callbacks, host signals.
  uint64_t value = 0;
  EXPECT_EQ(take_status(api()->event_query(e, &value)).code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(take_status(api()->event_wait(e, 0, 0)).code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(before.calls.load(), 1);
  EXPECT_EQ(before.code.load(), INFER_STATUS_CANCELLED);
  EXPECT_EQ(before.message, st.message);
  Recorder after;
  after.host = handle().services();
  ASSERT_OK(take_status(api()->event_on_complete(e, 5, Recorder::fn, &after)));
  EXPECT_EQ(after.calls.load(), 1);
  EXPECT_EQ(after.code.load(), INFER_STATUS_CANCELLED);
  EXPECT_EQ(take_status(api()->event_signal_host(e, 9)).code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(take_status(api()->stream_signal(s, e, 9)).code, INFER_STATUS_OK);
  EXPECT_EQ(take_status(api()->event_wait(e, 9, kFiveSeconds)).code, INFER_STATUS_CANCELLED);
}

TEST_F(ExampleEvents, AStreamRecoversOnceItsFailureWasReported) {
  GraphBuilder g;
  infer_executable* relu = compile(relu_graph(g, 4));
  infer_stream* s = new_stream();
  infer_event* failed = new_event();
  infer_event* fine = new_event();
  infer_buffer* x = new_buffer(16);
  const std::vector<float> in = {1.0f, -1.0f, 2.0f, -2.0f};
  ASSERT_OK(copy_to_device(x, 0, in.data(), 16));

  host().set_cancelled(true);
  OutputSlots first = output_slots(1);
  ASSERT_OK(execute_relu(api(), relu, s, x, failed, 1, &first));
  EXPECT_EQ(take_status(api()->event_wait(failed, 1, kFiveSeconds)).code, INFER_STATUS_CANCELLED);
  host().set_cancelled(false);

  // The next run on the same stream is not affected by the earlier failure.
  OutputSlots second = output_slots(1);
  ASSERT_OK(execute_relu(api(), relu, s, x, fine, 1, &second));
  ASSERT_OK(take_status(api()->event_wait(fine, 1, kFiveSeconds)));
  EXPECT_EQ(read_floats(second.buffers[0], 0, 4), (std::vector<float>{1.0f, 0.0f, 2.0f, 0.0f}));
}

TEST_F(ExampleEvents, AFailureFlowsToStreamsThatWaitForIt) {
  GraphBuilder g;
  infer_executable* relu = compile(relu_graph(g, 4));
  infer_stream* producer = new_stream();
  infer_stream* consumer = new_stream();
  infer_event* produced = new_event();
  infer_event* consumed = new_event();
  infer_buffer* x = new_buffer(16);
  infer_buffer* y = new_buffer(16);

  host().set_cancelled(true);
  OutputSlots outs = output_slots(1);
  ASSERT_OK(execute_relu(api(), relu, producer, x, produced, 1, &outs));
  // The consumer waits for the producer, copies, and signals: the copy is skipped and
  // its signal carries the producer's failure.
  ASSERT_OK(take_status(api()->stream_wait(consumer, produced, 1)));
  infer_copy_region r = region();
  r.src_buffer = x;
  r.dst_buffer = y;
  r.size_bytes = 16;
  ASSERT_OK(take_status(api()->copy_batch(consumer, &r, 1)));
  ASSERT_OK(take_status(api()->stream_signal(consumer, consumed, 1)));
  StatusInfo st = take_status(api()->event_wait(consumed, 1, kFiveSeconds));
  host().set_cancelled(false);
  EXPECT_EQ(st.code, INFER_STATUS_CANCELLED);
  EXPECT_NE(st.message.find("cancelled before node"), std::string::npos) << st.message;
}

TEST_F(ExampleEvents, ExecuteHonoursItsWaits) {
  GraphBuilder g;
  infer_executable* relu = compile(relu_graph(g, 4));
  infer_stream* s = new_stream();
  infer_event* gate = new_event();
  infer_event* done = new_event();
  infer_buffer* x = new_buffer(16);
  const std::vector<float> in = {-5.0f, 5.0f, -6.0f, 6.0f};
  ASSERT_OK(copy_to_device(x, 0, in.data(), 16));
  const std::vector<int64_t> dims = {4};
  std::vector<infer_tensor> inputs = {f32_tensor(x, dims)};
  OutputSlots outs = output_slots(1);
  infer_execute_args args = execute_args(inputs, &outs);
  infer_event_value wait{gate, 2};
  infer_event_value signal{done, 1};
  args.num_waits = 1;
  args.waits = &wait;
  args.num_signals = 1;
  args.signals = &signal;
  ASSERT_OK(take_status(api()->execute(relu, s, &args)));
  ASSERT_OK(take_status(api()->event_signal_host(gate, 1)));  // not enough yet
  EXPECT_EQ(take_status(api()->event_wait(done, 1, 20'000'000)).code, INFER_STATUS_TIMEOUT);
  ASSERT_OK(take_status(api()->event_signal_host(gate, 2)));
  ASSERT_OK(take_status(api()->event_wait(done, 1, kFiveSeconds)));
  EXPECT_EQ(read_floats(outs.buffers[0], 0, 4), (std::vector<float>{0.0f, 5.0f, 0.0f, 6.0f}));
}

}  // namespace
}  // namespace infer::test::example
