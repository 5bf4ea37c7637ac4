// Timeline events: host signal/wait/query, timeouts, callbacks, device-side signals and
// waits between streams, and the failure rules of plugin_api.h.
#include <algorithm>
#include <atomic>
#include <thread>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

constexpr uint64_t kTimeout = 60ull * 1000 * 1000 * 1000;
constexpr uint64_t kShort = 30ull * 1000 * 1000;  // 30 ms

class EventTest : public VulkanTest {
 protected:
  void TearDown() override {
    for (infer_stream* s : streams_) api()->stream_destroy(s);
    for (infer_event* e : events_) api()->event_destroy(e);
    VulkanTest::TearDown();
  }
  infer_event* event() {
    infer_event* e = nullptr;
    EXPECT_TRUE(take_status(api()->event_create(device(), &e)).ok());
    events_.push_back(e);
    return e;
  }
  infer_stream* stream() {
    infer_stream* s = nullptr;
    EXPECT_TRUE(take_status(api()->stream_create(device(), &s)).ok());
    streams_.push_back(s);
    return s;
  }
  void forget(infer_event* e) { events_.erase(std::find(events_.begin(), events_.end(), e)); }
  uint64_t value_of(infer_event* e) {
    uint64_t v = 0;
    EXPECT_TRUE(take_status(api()->event_query(e, &v)).ok());
    return v;
  }
  std::vector<infer_stream*> streams_;
  std::vector<infer_event*> events_;
};

// Records every callback call: how often, with which status code.
struct CallbackLog {
  std::atomic<int> calls{0};
  std::atomic<int> code{-1};
  static void fn(void* user, const infer_status* status) {
    auto* log = static_cast<CallbackLog*>(user);
    log->code = status == nullptr ? 0 : static_cast<int>(take_code(status));
    ++log->calls;
  }
  static infer_status_code take_code(const infer_status* s);
  static const infer_host_services* host;
};
const infer_host_services* CallbackLog::host = nullptr;
infer_status_code CallbackLog::take_code(const infer_status* s) { return host->status_code(s); }

TEST_F(EventTest, HostSignalQueryAndWait) {
  infer_event* e = event();
  EXPECT_EQ(value_of(e), 0u);
  ASSERT_TRUE(take_status(api()->event_signal_host(e, 5)).ok());
  EXPECT_EQ(value_of(e), 5u);
  EXPECT_TRUE(take_status(api()->event_wait(e, 3, kShort)).ok());
  EXPECT_TRUE(take_status(api()->event_wait(e, 5, kShort)).ok());
  StatusInfo st = take_status(api()->event_wait(e, 6, kShort));
  EXPECT_EQ(st.code, INFER_STATUS_TIMEOUT);
  EXPECT_NE(st.message.find("timed out"), std::string::npos) << st.message;
  // The same value again changes nothing; a lower one is the caller's mistake.
  EXPECT_TRUE(take_status(api()->event_signal_host(e, 5)).ok());
  st = take_status(api()->event_signal_host(e, 4));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("below the counter 5"), std::string::npos) << st.message;
}

TEST_F(EventTest, WaitReturnsWhenAnotherThreadSignals) {
  infer_event* e = event();
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(take_status(api()->event_signal_host(e, 2)).ok());
  });
  EXPECT_TRUE(take_status(api()->event_wait(e, 2, kTimeout)).ok());
  t.join();
}

TEST_F(EventTest, CallbacksFireOnceWhenTheValueIsReached) {
  CallbackLog::host = vk().services();
  infer_event* e = event();
  CallbackLog now, later, never_mind;
  ASSERT_TRUE(take_status(api()->event_signal_host(e, 1)).ok());
  // Already reached: called on this thread before event_on_complete returns.
  ASSERT_TRUE(take_status(api()->event_on_complete(e, 1, &CallbackLog::fn, &now)).ok());
  EXPECT_EQ(now.calls, 1);
  EXPECT_EQ(now.code, 0);
  ASSERT_TRUE(take_status(api()->event_on_complete(e, 3, &CallbackLog::fn, &later)).ok());
  EXPECT_EQ(later.calls, 0);
  ASSERT_TRUE(take_status(api()->event_signal_host(e, 2)).ok());
  EXPECT_EQ(later.calls, 0);
  ASSERT_TRUE(take_status(api()->event_signal_host(e, 3)).ok());
  EXPECT_EQ(later.calls, 1);
  // A pending callback still runs, with CANCELLED, when the event is destroyed.
  ASSERT_TRUE(take_status(api()->event_on_complete(e, 10, &CallbackLog::fn, &never_mind)).ok());
  api()->event_destroy(e);
  forget(e);
  EXPECT_EQ(never_mind.calls, 1);
  EXPECT_EQ(never_mind.code, INFER_STATUS_CANCELLED);
}

TEST_F(EventTest, StreamSignalCompletesAfterEarlierWorkAndFiresCallbacks) {
  CallbackLog::host = vk().services();
  infer_stream* s = stream();
  infer_event* gate = event();
  infer_event* done = event();
  CallbackLog log;
  ASSERT_TRUE(take_status(api()->event_on_complete(done, 1, &CallbackLog::fn, &log)).ok());
  ASSERT_TRUE(take_status(api()->stream_wait(s, gate, 1)).ok());
  ASSERT_TRUE(take_status(api()->stream_signal(s, done, 1)).ok());
  // The stream waits for the gate: nothing completes yet.
  EXPECT_EQ(take_status(api()->event_wait(done, 1, kShort)).code, INFER_STATUS_TIMEOUT);
  EXPECT_EQ(log.calls, 0);
  ASSERT_TRUE(take_status(api()->event_signal_host(gate, 1)).ok());
  ASSERT_TRUE(take_status(api()->event_wait(done, 1, kTimeout)).ok());
  // event_wait returns only after the callbacks for the value have returned.
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.code, 0);
  EXPECT_EQ(value_of(done), 1u);
}

TEST_F(EventTest, StreamsOrderThroughEventsOnTheDevice) {
  // Stream B waits for stream A's signal; A's copy must be visible to B's copy.
  infer_stream* a = stream();
  infer_stream* b = stream();
  infer_event* handoff = event();
  infer_event* done = event();
  infer_buffer* x = nullptr;
  infer_buffer* y = nullptr;
  ASSERT_TRUE(take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 256, 64, &x)).ok());
  ASSERT_TRUE(take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 256, 64, &y)).ok());
  std::vector<uint8_t> in(256), out(256, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  // B is enqueued first, so it really depends on the event, not on enqueue order.
  ASSERT_TRUE(take_status(api()->stream_wait(b, handoff, 1)).ok());
  infer_copy_region r{};
  r.struct_size = sizeof r;
  r.src_buffer = x;
  r.dst_buffer = y;
  r.size_bytes = 256;
  ASSERT_TRUE(take_status(api()->copy_batch(b, &r, 1)).ok());
  infer_copy_region d{};
  d.struct_size = sizeof d;
  d.src_buffer = y;
  d.dst_host = out.data();
  d.size_bytes = 256;
  ASSERT_TRUE(take_status(api()->copy_batch(b, &d, 1)).ok());
  ASSERT_TRUE(take_status(api()->stream_signal(b, done, 1)).ok());
  infer_copy_region u{};
  u.struct_size = sizeof u;
  u.src_host = in.data();
  u.dst_buffer = x;
  u.size_bytes = 256;
  ASSERT_TRUE(take_status(api()->copy_batch(a, &u, 1)).ok());
  ASSERT_TRUE(take_status(api()->stream_signal(a, handoff, 1)).ok());
  ASSERT_TRUE(take_status(api()->event_wait(done, 1, kTimeout)).ok());
  EXPECT_EQ(out, in);
  api()->buffer_free(x);
  api()->buffer_free(y);
}

// Enqueues one Relu run on a stream, signalling (event, value); the test host's cancel
// flag decides whether the run fails (the plugin polls is_cancelled in execute).
class FailingRun {
 public:
  FailingRun(PluginHandle& p, infer_device* d) : p_(p), d_(d) {
    graph_ = g_.single_node_graph("Relu", {TensorSpec::f32("x", {4})}, {TensorSpec::f32("y", {4})});
    StatusInfo st;
    compiled_ = CompiledGraph::compile(p_, graph_, &st, d_);
    EXPECT_TRUE(compiled_) << st.message;
    EXPECT_TRUE(take_status(p_.api()->buffer_alloc(d_, INFER_MEMORY_DEVICE_LOCAL, 16, 64, &in_)).ok());
  }
  ~FailingRun() {
    for (infer_buffer* b : outs_) p_.api()->buffer_free(b);
    p_.api()->buffer_free(in_);
  }
  StatusInfo enqueue(infer_stream* s, infer_event* e, uint64_t value) {
    infer_tensor t{};
    t.struct_size = sizeof t;
    t.dtype = INFER_DTYPE_FLOAT32;
    t.rank = 1;
    t.dims = dims_;
    t.buffer = in_;
    t.size_bytes = 16;
    infer_event_value signal{e, value};
    infer_execute_args args{};
    args.struct_size = sizeof args;
    args.num_inputs = 1;
    args.inputs = &t;
    args.num_outputs = 1;
    args.alloc_output = &alloc;
    args.alloc_ctx = this;
    args.num_signals = 1;
    args.signals = &signal;
    args.run = reinterpret_cast<infer_run_context*>(this);
    return take_status(p_.api()->execute(compiled_->executable(), s, &args));
  }

 private:
  static infer_status* alloc(void* ctx, size_t, infer_dtype, size_t, const int64_t*,
                             infer_tensor* out) {
    auto* self = static_cast<FailingRun*>(ctx);
    infer_buffer* b = nullptr;
    infer_status* st = self->p_.api()->buffer_alloc(self->d_, INFER_MEMORY_DEVICE_LOCAL, 16, 64, &b);
    if (st) return st;
    self->outs_.push_back(b);
    *out = infer_tensor{};
    out->struct_size = sizeof *out;
    out->buffer = b;
    out->size_bytes = 16;
    return nullptr;
  }
  PluginHandle& p_;
  infer_device* d_;
  GraphBuilder g_;
  const infer_graph_view* graph_ = nullptr;
  std::unique_ptr<CompiledGraph> compiled_;
  infer_buffer* in_ = nullptr;
  std::vector<infer_buffer*> outs_;
  int64_t dims_[1] = {4};
};

TEST_F(EventTest, ACancelledRunFailsItsEventAndTheFailureSticks) {
  CallbackLog::host = vk().services();
  FailingRun run(vk(), device());
  infer_stream* s = stream();
  infer_event* e = event();
  CallbackLog log;
  ASSERT_TRUE(take_status(api()->event_on_complete(e, 1, &CallbackLog::fn, &log)).ok());
  vk().host().set_cancelled(true);
  StatusInfo st = run.enqueue(s, e, 1);
  vk().host().set_cancelled(false);
  ASSERT_TRUE(st.ok()) << st.message;  // the failure goes to the event, not to execute
  st = take_status(api()->event_wait(e, 1, kTimeout));
  EXPECT_EQ(st.code, INFER_STATUS_CANCELLED);
  EXPECT_NE(st.message.find("cancelled"), std::string::npos) << st.message;
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.code, INFER_STATUS_CANCELLED);
  // Sticky: later waits, queries and even larger values all report it.
  uint64_t v = 0;
  EXPECT_EQ(take_status(api()->event_query(e, &v)).code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(take_status(api()->event_wait(e, 100, kShort)).code, INFER_STATUS_CANCELLED);
  EXPECT_EQ(take_status(api()->event_signal_host(e, 7)).code, INFER_STATUS_CANCELLED);
  CallbackLog after;
  ASSERT_TRUE(take_status(api()->event_on_complete(e, 50, &CallbackLog::fn, &after)).ok());
  EXPECT_EQ(after.calls, 1);
  EXPECT_EQ(after.code, INFER_STATUS_CANCELLED);
  // The stream itself recovers: the next run signals normally.
  infer_event* next = event();
  ASSERT_TRUE(run.enqueue(s, next, 1).ok());
  EXPECT_TRUE(take_status(api()->event_wait(next, 1, kTimeout)).ok());
}

TEST_F(EventTest, AFailureFlowsToWorkThatWaitsForIt) {
  FailingRun run(vk(), device());
  infer_stream* a = stream();
  infer_stream* b = stream();
  infer_event* failed = event();
  infer_event* downstream = event();
  vk().host().set_cancelled(true);
  ASSERT_TRUE(run.enqueue(a, failed, 1).ok());
  vk().host().set_cancelled(false);
  // B waits for the failed event, then signals: its signal fails with the same failure.
  ASSERT_TRUE(take_status(api()->stream_wait(b, failed, 1)).ok());
  ASSERT_TRUE(take_status(api()->stream_signal(b, downstream, 1)).ok());
  StatusInfo st = take_status(api()->event_wait(downstream, 1, kTimeout));
  EXPECT_EQ(st.code, INFER_STATUS_CANCELLED) << st.message;
  // Work after the reported failure runs normally.
  infer_event* ok = event();
  ASSERT_TRUE(take_status(api()->stream_signal(b, ok, 1)).ok());
  EXPECT_TRUE(take_status(api()->event_wait(ok, 1, kTimeout)).ok());
}

TEST_F(EventTest, EventsOfAnotherDeviceOrNullAreRejected) {
  infer_stream* s = stream();
  StatusInfo st = take_status(api()->stream_signal(s, nullptr, 1));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("event is NULL"), std::string::npos) << st.message;
  // An event of a second plugin instance's device.
  std::string error;
  auto other = load_vulkan_plugin({}, &error);
  ASSERT_TRUE(other) << error;
  infer_event* foreign = nullptr;
  ASSERT_TRUE(take_status(other->api()->event_create(other->device(0), &foreign)).ok());
  st = take_status(api()->stream_wait(s, foreign, 1));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("another device"), std::string::npos) << st.message;
  other->api()->event_destroy(foreign);
}

TEST_F(EventTest, DestroyingAStreamWaitsForItsWork) {
  infer_stream* s = nullptr;
  ASSERT_TRUE(take_status(api()->stream_create(device(), &s)).ok());
  infer_event* gate = event();
  infer_event* done = event();
  ASSERT_TRUE(take_status(api()->stream_wait(s, gate, 1)).ok());
  ASSERT_TRUE(take_status(api()->stream_signal(s, done, 1)).ok());
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(take_status(api()->event_signal_host(gate, 1)).ok());
  });
  api()->stream_destroy(s);  // returns once the signal has happened
  EXPECT_EQ(value_of(done), 1u);
  t.join();
}

}  // namespace
}  // namespace infer::test::vk
