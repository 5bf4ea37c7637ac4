// The cpu plugin's ABI surface: loading and version handshake, the single exported
// symbol, device properties, buffers, copies, events and streams.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
    api_ = plugin_->api();
    dev_ = plugin_->device();
    ASSERT_NE(dev_, nullptr);
  }
  void TearDown() override {
    if (plugin_) {
      EXPECT_EQ(plugin_->host().live_allocations(), 0);
    }
  }
  std::unique_ptr<PluginHandle> plugin_;
  const infer_plugin_api* api_ = nullptr;
  infer_device* dev_ = nullptr;
};

TEST(CpuPluginLibrary, ExportsExactlyOneDynamicSymbol) {
  const std::string cmd = "nm -D --defined-only '" + plugin_path("cpu") + "' 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::vector<std::string> symbols;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    if (!s.empty()) symbols.push_back(s);
  }
  ASSERT_EQ(pclose(f), 0) << "nm failed";
  ASSERT_EQ(symbols.size(), 1u) << "exported: " << ::testing::PrintToString(symbols);
  EXPECT_NE(symbols[0].find(" T infer_plugin_entry"), std::string::npos) << symbols[0];
}

TEST(CpuPluginLibrary, VersionHandshake) {
  std::string error;
  LoadOptions opts;
  opts.create_instance = false;
  auto same = PluginHandle::load(plugin_path("cpu"), &error, opts);
  ASSERT_TRUE(same) << error;
  const infer_plugin_api* api = same->api();
  EXPECT_EQ(api->abi_major, INFER_ABI_VERSION_MAJOR);
  EXPECT_EQ(api->abi_minor, INFER_ABI_VERSION_MINOR);
  EXPECT_STREQ(api->name, "cpu");
  EXPECT_GE(api->struct_size, sizeof(infer_plugin_api));
  EXPECT_LE(api->min_host_minor, INFER_ABI_VERSION_MINOR);
  // Its kernels read a weight they prepacked only in that form (prepack_test.cpp checks).
  EXPECT_EQ(api->prepack_flags, uint64_t{INFER_PREPACK_REPLACES_CONSTANT});
  // A newer host minor is fine: minors only append.
  opts.host_abi_minor = INFER_ABI_VERSION_MINOR + 5;
  EXPECT_TRUE(PluginHandle::load(plugin_path("cpu"), &error, opts)) << error;
  // A different major is refused with a NULL table.
  opts.host_abi_major = INFER_ABI_VERSION_MAJOR + 1;
  opts.host_abi_minor = INFER_ABI_VERSION_MINOR;
  EXPECT_FALSE(PluginHandle::load(plugin_path("cpu"), &error, opts));
  EXPECT_NE(error.find("returned no API table"), std::string::npos) << error;
}

// The device is named after the instruction set its kernels use: the one INFER_CPU_ISA
// asks for, else the best this CPU runs.
void expect_cpu_device_name(const char* name) {
  const char* forced = std::getenv("INFER_CPU_ISA");
  if (forced != nullptr && *forced != '\0') {
    EXPECT_EQ(std::string(name), std::string("CPU (") + forced + ")");
  } else {
    const std::string n = name;
    bool known = false;
    for (const char* isa : {"scalar", "avx2", "avx512", "neon"})
      known = known || n == std::string("CPU (") + isa + ")";
    EXPECT_TRUE(known) << n;
  }
}

TEST_F(CpuAbi, OneHostAddressableCpuDevice) {
  size_t count = 0;
  ASSERT_TRUE(take_status(api_->get_devices(plugin_->plugin(), nullptr, 0, &count)).ok());
  EXPECT_EQ(count, 1u);
  infer_device_props props{};
  props.struct_size = sizeof props;
  ASSERT_TRUE(take_status(api_->device_get_props(dev_, &props)).ok());
  expect_cpu_device_name(props.name);
  EXPECT_EQ(props.kind, INFER_DEVICE_CPU);
  EXPECT_TRUE(props.host_addressable);
  EXPECT_EQ(props.compute_units, 4u);  // the test host's num_threads
  EXPECT_EQ(props.struct_size, sizeof props);
}

TEST_F(CpuAbi, DevicePropsRespectsAnOlderHostsSmallerStruct) {
  // An older host's struct ends before host_addressable; the plugin must not write it.
  struct Guarded {
    infer_device_props props;
    char guard[16];
  } g;
  std::memset(&g, 0x5A, sizeof g);
  g.props.struct_size = offsetof(infer_device_props, host_addressable);
  ASSERT_TRUE(take_status(api_->device_get_props(dev_, &g.props)).ok());
  expect_cpu_device_name(g.props.name);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(&g.props.host_addressable)[0], 0x5A);
}

TEST_F(CpuAbi, BuffersMapImportAndCopy) {
  infer_buffer* a = nullptr;
  ASSERT_TRUE(take_status(api_->buffer_alloc(dev_, INFER_MEMORY_DEVICE_LOCAL, 64, 128, &a)).ok());
  void* p = nullptr;
  ASSERT_TRUE(take_status(api_->buffer_map(a, &p)).ok());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 128, 0u) << "alignment honoured";
  for (int i = 0; i < 64; ++i) static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(i);

  // Importing wraps host memory without copying.
  std::vector<uint8_t> host(64, 0);
  infer_buffer* b = nullptr;
  ASSERT_TRUE(take_status(api_->buffer_import_host(dev_, host.data(), host.size(), &b)).ok());
  void* q = nullptr;
  ASSERT_TRUE(take_status(api_->buffer_map(b, &q)).ok());
  EXPECT_EQ(q, host.data());

  // Device to device, then device to host, on a stream, then a signal.
  infer_stream* s = nullptr;
  infer_event* e = nullptr;
  ASSERT_TRUE(take_status(api_->stream_create(dev_, &s)).ok());
  ASSERT_TRUE(take_status(api_->event_create(dev_, &e)).ok());
  std::vector<uint8_t> out(16, 0);
  infer_copy_region r[2] = {};
  r[0].struct_size = r[1].struct_size = sizeof(infer_copy_region);
  r[0].src_buffer = a;
  r[0].src_offset = 8;
  r[0].dst_buffer = b;
  r[0].dst_offset = 0;
  r[0].size_bytes = 32;
  r[1].src_buffer = a;
  r[1].src_offset = 48;
  r[1].dst_host = out.data();
  r[1].size_bytes = 16;
  ASSERT_TRUE(take_status(api_->copy_batch(s, r, 2)).ok());
  ASSERT_TRUE(take_status(api_->stream_signal(s, e, 1)).ok());
  ASSERT_TRUE(take_status(api_->event_wait(e, 1, UINT64_MAX)).ok());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(host[i], i + 8);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], i + 48);

  // Out-of-bounds and malformed regions are refused before anything is copied.
  infer_copy_region bad = r[1];
  bad.src_offset = 60;
  StatusInfo st = take_status(api_->copy_batch(s, &bad, 1));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("exceeds buffer size 64"), std::string::npos) << st.message;
  bad = r[1];
  bad.src_host = out.data();
  st = take_status(api_->copy_batch(s, &bad, 1));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("exactly one of src_host and src_buffer"), std::string::npos)
      << st.message;

  infer_copy_cost cost{};
  cost.struct_size = sizeof cost;
  ASSERT_TRUE(take_status(api_->copy_cost(dev_, INFER_COPY_HOST_TO_DEVICE, &cost)).ok());
  EXPECT_GT(cost.bandwidth_bytes_per_us, 0);
  EXPECT_GE(cost.latency_us, 0);

  api_->event_destroy(e);
  api_->stream_destroy(s);
  api_->buffer_free(a);
  api_->buffer_free(b);
}

TEST_F(CpuAbi, UploadAndDownloadThroughTheSupportHelpers) {
  std::vector<float> v = {1, 2, 3, 4};
  infer_buffer* b = nullptr;
  ASSERT_TRUE(upload(*plugin_, dev_, v.data(), v.size() * 4, &b).ok());
  std::vector<float> back(4);
  ASSERT_TRUE(download(*plugin_, dev_, b, 4, back.data(), 12).ok());
  EXPECT_EQ(back[0], 2);
  EXPECT_EQ(back[2], 4);
  api_->buffer_free(b);
}

TEST_F(CpuAbi, EventCounterWaitQueryAndTimeout) {
  infer_event* e = nullptr;
  ASSERT_TRUE(take_status(api_->event_create(dev_, &e)).ok());
  uint64_t v = 99;
  ASSERT_TRUE(take_status(api_->event_query(e, &v)).ok());
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(take_status(api_->event_signal_host(e, 5)).ok());
  ASSERT_TRUE(take_status(api_->event_signal_host(e, 3)).ok());  // never goes back
  ASSERT_TRUE(take_status(api_->event_query(e, &v)).ok());
  EXPECT_EQ(v, 5u);
  EXPECT_TRUE(take_status(api_->event_wait(e, 4, 0)).ok());
  StatusInfo st = take_status(api_->event_wait(e, 6, 1000000));  // 1 ms
  EXPECT_EQ(st.code, INFER_STATUS_TIMEOUT) << st.message;

  // A waiter on another thread is released by a later signal.
  std::thread t([&] { api_->event_signal_host(e, 7); });
  EXPECT_TRUE(take_status(api_->event_wait(e, 7, UINT64_MAX)).ok());
  t.join();
  api_->event_destroy(e);
}

struct CallbackLog {
  std::atomic<int> calls{0};
  std::atomic<int> failures{0};
  std::string last_message;
  static void cb(void* user, const infer_status* status) {
    auto* self = static_cast<CallbackLog*>(user);
    self->calls++;
    if (status != nullptr) {
      self->failures++;
      // The status is borrowed; read it through the host's accessor.
      self->last_message = TestHost(1).services()->status_message(status);
    }
  }
};

TEST_F(CpuAbi, EventCallbacksRunOnceAtTheirValue) {
  infer_event* e = nullptr;
  ASSERT_TRUE(take_status(api_->event_create(dev_, &e)).ok());
  CallbackLog at2, at5, done;
  ASSERT_TRUE(take_status(api_->event_on_complete(e, 2, &CallbackLog::cb, &at2)).ok());
  ASSERT_TRUE(take_status(api_->event_on_complete(e, 5, &CallbackLog::cb, &at5)).ok());
  api_->event_signal_host(e, 3);
  EXPECT_EQ(at2.calls, 1);
  EXPECT_EQ(at5.calls, 0);
  api_->event_signal_host(e, 6);
  api_->event_signal_host(e, 8);
  EXPECT_EQ(at2.calls, 1);
  EXPECT_EQ(at5.calls, 1);
  // Already reached: called immediately, on this thread.
  ASSERT_TRUE(take_status(api_->event_on_complete(e, 8, &CallbackLog::cb, &done)).ok());
  EXPECT_EQ(done.calls, 1);
  EXPECT_EQ(done.failures, 0);
  api_->event_destroy(e);
}

TEST_F(CpuAbi, EventWaitReturnsAfterReleasedCallbacksReturned) {
  infer_event* e = nullptr;
  ASSERT_TRUE(take_status(api_->event_create(dev_, &e)).ok());
  struct Slow {
    std::atomic<bool> finished{false};
    static void cb(void* user, const infer_status*) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      static_cast<Slow*>(user)->finished = true;
    }
  } slow;
  ASSERT_TRUE(take_status(api_->event_on_complete(e, 1, &Slow::cb, &slow)).ok());
  std::thread signaller([&] { api_->event_signal_host(e, 1); });
  // Whether this wait starts before or after the signal, it may not return while the
  // callback is still running.
  ASSERT_TRUE(take_status(api_->event_wait(e, 1, UINT64_MAX)).ok());
  EXPECT_TRUE(slow.finished.load());
  signaller.join();
  api_->event_destroy(e);
}

TEST_F(CpuAbi, DestroyingAnEventCancelsPendingCallbacks) {
  infer_event* e = nullptr;
  ASSERT_TRUE(take_status(api_->event_create(dev_, &e)).ok());
  CallbackLog log;
  ASSERT_TRUE(take_status(api_->event_on_complete(e, 3, &CallbackLog::cb, &log)).ok());
  api_->event_destroy(e);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.failures, 1);
  EXPECT_EQ(log.last_message, "event destroyed before it was signalled");
}

TEST_F(CpuAbi, StreamWaitHoldsLaterWorkUntilTheHostSignals) {
  infer_stream* s = nullptr;
  infer_event *gate = nullptr, *done = nullptr;
  ASSERT_TRUE(take_status(api_->stream_create(dev_, &s)).ok());
  ASSERT_TRUE(take_status(api_->event_create(dev_, &gate)).ok());
  ASSERT_TRUE(take_status(api_->event_create(dev_, &done)).ok());
  int src = 42, dst = 0;
  infer_buffer* b = nullptr;
  ASSERT_TRUE(take_status(api_->buffer_alloc(dev_, INFER_MEMORY_HOST_VISIBLE, 4, 4, &b)).ok());
  // The host thread enqueues: wait(gate, 1), copy, signal(done, 1); another thread opens
  // the gate later. The copy must not have happened before the gate opened.
  std::atomic<bool> opened{false};
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    opened = true;
    api_->event_signal_host(gate, 1);
  });
  ASSERT_TRUE(take_status(api_->stream_wait(s, gate, 1)).ok());
  infer_copy_region r{};
  r.struct_size = sizeof r;
  r.src_host = &src;
  r.dst_buffer = b;
  r.size_bytes = 4;
  ASSERT_TRUE(take_status(api_->copy_batch(s, &r, 1)).ok());
  EXPECT_TRUE(opened.load());
  ASSERT_TRUE(take_status(api_->stream_signal(s, done, 1)).ok());
  ASSERT_TRUE(take_status(api_->event_wait(done, 1, UINT64_MAX)).ok());
  void* p = nullptr;
  ASSERT_TRUE(take_status(api_->buffer_map(b, &p)).ok());
  std::memcpy(&dst, p, 4);
  EXPECT_EQ(dst, 42);
  opener.join();
  api_->buffer_free(b);
  api_->event_destroy(gate);
  api_->event_destroy(done);
  api_->stream_destroy(s);
}

TEST_F(CpuAbi, PluginCreateRefusesAnotherAbiMajor) {
  TestHost host;
  infer_host_services services = *host.services();
  services.abi_major = INFER_ABI_VERSION_MAJOR + 1;
  infer_plugin* p = reinterpret_cast<infer_plugin*>(1);
  StatusInfo st = take_status(api_->plugin_create(&services, &p));
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(p, nullptr);
}

TEST_F(CpuAbi, StatusesAreFreed) {
  // Every status the plugin created during the tests of this fixture was taken over.
  EXPECT_EQ(TestHost::live_statuses(), 0);
}

}  // namespace
}  // namespace infer::test
