// copy_batch: every direction, offsets, stream order of host memory, bad regions.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

constexpr uint64_t kTimeout = 60ull * 1000 * 1000 * 1000;

class CopyTest : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(take_status(api()->stream_create(device(), &stream_)).ok());
    ASSERT_TRUE(take_status(api()->event_create(device(), &event_)).ok());
  }
  void TearDown() override {
    if (stream_) api()->stream_destroy(stream_);
    if (event_) api()->event_destroy(event_);
    for (infer_buffer* b : buffers_) api()->buffer_free(b);
    VulkanTest::TearDown();
  }
  infer_buffer* alloc(size_t size, infer_memory_kind kind = INFER_MEMORY_DEVICE_LOCAL) {
    infer_buffer* b = nullptr;
    EXPECT_TRUE(take_status(api()->buffer_alloc(device(), kind, size, 64, &b)).ok());
    buffers_.push_back(b);
    return b;
  }
  static infer_copy_region region() {
    infer_copy_region r{};
    r.struct_size = sizeof r;
    return r;
  }
  // Enqueues the regions and a signal, then waits for it.
  StatusInfo copy(const std::vector<infer_copy_region>& regions) {
    StatusInfo st = take_status(api()->copy_batch(stream_, regions.data(), regions.size()));
    if (!st.ok()) return st;
    st = take_status(api()->stream_signal(stream_, event_, ++value_));
    if (!st.ok()) return st;
    return take_status(api()->event_wait(event_, value_, kTimeout));
  }
  StatusInfo upload(infer_buffer* b, size_t offset, const void* src, size_t n) {
    infer_copy_region r = region();
    r.src_host = src;
    r.dst_buffer = b;
    r.dst_offset = offset;
    r.size_bytes = n;
    return copy({r});
  }
  StatusInfo download(infer_buffer* b, size_t offset, void* dst, size_t n) {
    infer_copy_region r = region();
    r.src_buffer = b;
    r.src_offset = offset;
    r.dst_host = dst;
    r.size_bytes = n;
    return copy({r});
  }

  infer_stream* stream_ = nullptr;
  infer_event* event_ = nullptr;
  uint64_t value_ = 0;
  std::vector<infer_buffer*> buffers_;
};

std::vector<uint8_t> pattern(size_t n, uint8_t start) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST_F(CopyTest, HostToDeviceToHostRoundTrips) {
  for (infer_memory_kind kind :
       {INFER_MEMORY_DEVICE_LOCAL, INFER_MEMORY_HOST_VISIBLE, INFER_MEMORY_HOST_PINNED}) {
    infer_buffer* b = alloc(4096, kind);
    std::vector<uint8_t> in = pattern(4096, 7), out(4096, 0);
    ASSERT_TRUE(upload(b, 0, in.data(), in.size()).ok());
    ASSERT_TRUE(download(b, 0, out.data(), out.size()).ok());
    EXPECT_EQ(out, in) << "memory kind " << kind;
  }
}

TEST_F(CopyTest, UnalignedOffsetsAndSizes) {
  infer_buffer* a = alloc(1000);
  infer_buffer* b = alloc(1000);
  std::vector<uint8_t> in = pattern(1000, 1);
  ASSERT_TRUE(upload(a, 0, in.data(), in.size()).ok());
  // Device to device from an odd offset to another odd offset, odd size.
  infer_copy_region r = region();
  r.src_buffer = a;
  r.src_offset = 3;
  r.dst_buffer = b;
  r.dst_offset = 517;
  r.size_bytes = 101;
  ASSERT_TRUE(copy({r}).ok());
  std::vector<uint8_t> out(101, 0);
  ASSERT_TRUE(download(b, 517, out.data(), out.size()).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(in.begin() + 3, in.begin() + 104));
  // Host to device at an odd offset leaves the bytes around it alone.
  std::vector<uint8_t> five = {9, 9, 9, 9, 9};
  ASSERT_TRUE(upload(a, 13, five.data(), five.size()).ok());
  std::vector<uint8_t> around(9, 0);
  ASSERT_TRUE(download(a, 11, around.data(), around.size()).ok());
  EXPECT_EQ(around, (std::vector<uint8_t>{in[11], in[12], 9, 9, 9, 9, 9, in[18], in[19]}));
}

TEST_F(CopyTest, OneBatchMixesDirections) {
  infer_buffer* a = alloc(256);
  infer_buffer* b = alloc(256);
  std::vector<uint8_t> in = pattern(256, 0);
  ASSERT_TRUE(upload(a, 0, in.data(), in.size()).ok());
  std::vector<uint8_t> host_in = pattern(256, 100), out(256, 0);
  infer_copy_region r1 = region(), r2 = region(), r3 = region();
  r1.src_host = host_in.data();  // host -> b
  r1.dst_buffer = b;
  r1.size_bytes = 256;
  r2.src_buffer = a;  // a -> host
  r2.dst_host = out.data();
  r2.size_bytes = 256;
  r3.src_buffer = a;  // a[0..16) -> a[128..144)
  r3.dst_buffer = a;
  r3.dst_offset = 128;
  r3.size_bytes = 16;
  ASSERT_TRUE(copy({r1, r2}).ok());
  EXPECT_EQ(out, in);
  ASSERT_TRUE(copy({r3}).ok());
  std::vector<uint8_t> back(256);
  ASSERT_TRUE(download(b, 0, back.data(), back.size()).ok());
  EXPECT_EQ(back, host_in);
  ASSERT_TRUE(download(a, 128, back.data(), 16).ok());
  EXPECT_EQ(std::vector<uint8_t>(back.begin(), back.begin() + 16),
            std::vector<uint8_t>(in.begin(), in.begin() + 16));
}

TEST_F(CopyTest, HostMemoryIsReadInStreamOrderNotAtEnqueue) {
  // The stream waits for a host signal, then copies host memory that the host fills in
  // only after enqueueing: the device must see the late data.
  infer_event* gate = nullptr;
  ASSERT_TRUE(take_status(api()->event_create(device(), &gate)).ok());
  infer_buffer* b = alloc(64);
  std::vector<uint8_t> host(64, 0), out(64, 0xFF);
  ASSERT_TRUE(take_status(api()->stream_wait(stream_, gate, 1)).ok());
  infer_copy_region up = region();
  up.src_host = host.data();
  up.dst_buffer = b;
  up.size_bytes = 64;
  ASSERT_TRUE(take_status(api()->copy_batch(stream_, &up, 1)).ok());
  infer_copy_region down = region();
  down.src_buffer = b;
  down.dst_host = out.data();
  down.size_bytes = 64;
  ASSERT_TRUE(take_status(api()->copy_batch(stream_, &down, 1)).ok());
  ASSERT_TRUE(take_status(api()->stream_signal(stream_, event_, ++value_)).ok());
  // Not done: the stream waits for the gate.
  StatusInfo st = take_status(api()->event_wait(event_, value_, 50ull * 1000 * 1000));
  EXPECT_EQ(st.code, INFER_STATUS_TIMEOUT);
  const std::vector<uint8_t> late = pattern(64, 42);
  std::copy(late.begin(), late.end(), host.begin());  // same memory the copy reads
  ASSERT_TRUE(take_status(api()->event_signal_host(gate, 1)).ok());
  ASSERT_TRUE(take_status(api()->event_wait(event_, value_, kTimeout)).ok());
  EXPECT_EQ(out, host);
  api()->event_destroy(gate);
}

TEST_F(CopyTest, EmptyBatchAndZeroSizedRegionsAreFine) {
  EXPECT_TRUE(take_status(api()->copy_batch(stream_, nullptr, 0)).ok());
  infer_buffer* b = alloc(16);
  infer_copy_region r = region();
  uint8_t x = 1;
  r.src_host = &x;
  r.dst_buffer = b;
  r.size_bytes = 0;
  EXPECT_TRUE(copy({r}).ok());
}

TEST_F(CopyTest, BadRegionsNameTheProblem) {
  infer_buffer* b = alloc(100);
  uint8_t host[200] = {};
  auto expect_invalid = [&](infer_copy_region r, const std::string& text) {
    StatusInfo st = take_status(api()->copy_batch(stream_, &r, 1));
    EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT) << text;
    EXPECT_NE(st.message.find(text), std::string::npos) << st.message;
  };
  infer_copy_region r = region();
  r.src_host = host;
  r.src_buffer = b;
  r.dst_host = host;
  r.size_bytes = 4;
  expect_invalid(r, "set exactly one of src_host and src_buffer");
  r = region();
  r.src_host = host;
  r.dst_host = host + 100;
  r.size_bytes = 4;
  expect_invalid(r, "host-to-host copies");
  r = region();
  r.src_host = host;
  r.dst_buffer = b;
  r.dst_offset = 90;
  r.size_bytes = 20;
  expect_invalid(r, "destination range [90, +20) exceeds the 100-byte dst_buffer");
  r = region();
  r.src_buffer = b;
  r.src_offset = 101;
  r.dst_host = host;
  r.size_bytes = 0;
  expect_invalid(r, "source range [101, +0) exceeds the 100-byte src_buffer");
  r = region();
  r.struct_size = 8;
  expect_invalid(r, "struct_size 8 is too small");
}

TEST_F(CopyTest, CopyCostIsPositiveForEveryDirection) {
  for (infer_copy_direction dir :
       {INFER_COPY_HOST_TO_DEVICE, INFER_COPY_DEVICE_TO_HOST, INFER_COPY_DEVICE_TO_DEVICE}) {
    infer_copy_cost cost{};
    cost.struct_size = sizeof cost;
    ASSERT_TRUE(take_status(api()->copy_cost(device(), dir, &cost)).ok());
    EXPECT_GT(cost.bandwidth_bytes_per_us, 0);
    EXPECT_GT(cost.latency_us, 0);
  }
  infer_copy_cost cost{};
  cost.struct_size = sizeof cost;
  EXPECT_EQ(take_status(api()->copy_cost(device(), static_cast<infer_copy_direction>(7), &cost)).code,
            INFER_STATUS_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace infer::test::vk
