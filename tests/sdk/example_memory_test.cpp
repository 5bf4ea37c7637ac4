// The example's memory: device-local buffers the host cannot map, host-visible staging
// buffers it can, copies through the stream queue in every direction, the checks on
// copy regions, and the device memory limit.
#include <chrono>
#include <numeric>

#include "example_fixture.hpp"

namespace infer::test::example {
namespace {

using ExampleMemory = ExampleTest;

TEST_F(ExampleMemory, DeviceLocalBuffersCannotBeMapped) {
  infer_buffer* b = new_buffer(256);
  ASSERT_NE(b, nullptr);
  void* ptr = reinterpret_cast<void*>(0x1);
  StatusInfo st = take_status(api()->buffer_map(b, &ptr));
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_NE(st.message.find("not host-addressable"), std::string::npos) << st.message;
  EXPECT_EQ(ptr, reinterpret_cast<void*>(0x1));  // untouched
}

TEST_F(ExampleMemory, HostVisibleAndPinnedBuffersMapAndAreAligned) {
  for (infer_memory_kind kind : {INFER_MEMORY_HOST_VISIBLE, INFER_MEMORY_HOST_PINNED}) {
    infer_buffer* b = nullptr;
    ASSERT_OK(take_status(api()->buffer_alloc(device(), kind, 1000, 256, &b)));
    void* ptr = nullptr;
    ASSERT_OK(take_status(api()->buffer_map(b, &ptr)));
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 256, 0u);
    std::memset(ptr, 0x5A, 1000);  // the whole buffer is writable by the host
    api()->buffer_free(b);
  }
}

TEST_F(ExampleMemory, BadAllocationArgumentsAreRejected) {
  infer_buffer* b = nullptr;
  StatusInfo st = take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 64, 48, &b));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("alignment 48 is not a power of two"), std::string::npos) << st.message;
  st = take_status(api()->buffer_alloc(device(), static_cast<infer_memory_kind>(3), 64, 64, &b));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b, nullptr);
}

TEST_F(ExampleMemory, CopiesInAndOutThroughTheQueue) {
  std::vector<float> data(100);
  std::iota(data.begin(), data.end(), 1.0f);
  infer_buffer* b = new_buffer(1024);
  // Host to device at an offset, then back.
  ASSERT_OK(copy_to_device(b, 64, data.data(), data.size() * sizeof(float)));
  EXPECT_EQ(read_floats(b, 64, 100), data);
  // The bytes before the offset were never written (fresh buffers read as zero).
  EXPECT_EQ(read_floats(b, 0, 16), std::vector<float>(16, 0.0f));
}

TEST_F(ExampleMemory, DeviceToDeviceAndStagingCopies) {
  const std::vector<float> data = {1.5f, -2.0f, 3.25f, 4.0f};
  const size_t bytes = data.size() * sizeof(float);
  // Stage through a host-visible buffer the host writes directly, as a host would.
  infer_buffer* staging = new_buffer(bytes, INFER_MEMORY_HOST_VISIBLE);
  void* mapped = nullptr;
  ASSERT_OK(take_status(api()->buffer_map(staging, &mapped)));
  std::memcpy(mapped, data.data(), bytes);
  infer_buffer* a = new_buffer(bytes);
  infer_buffer* b = new_buffer(2 * bytes);
  infer_stream* s = new_stream();
  infer_event* e = new_event();
  // Two batches on one stream: staging -> a, then a -> the upper half of b.
  infer_copy_region r1 = region();
  r1.src_buffer = staging;
  r1.dst_buffer = a;
  r1.size_bytes = bytes;
  ASSERT_OK(take_status(api()->copy_batch(s, &r1, 1)));
  infer_copy_region r2 = region();
  r2.src_buffer = a;
  r2.dst_buffer = b;
  r2.dst_offset = bytes;
  r2.size_bytes = bytes;
  ASSERT_OK(take_status(api()->copy_batch(s, &r2, 1)));
  ASSERT_OK(sync(s, e, 1));
  EXPECT_EQ(read_floats(b, bytes, 4), data);
  EXPECT_EQ(read_floats(b, 0, 4), std::vector<float>(4, 0.0f));
}

TEST_F(ExampleMemory, OneBatchCopiesManyRegions) {
  const std::vector<float> x = {1, 2, 3}, y = {4, 5};
  infer_buffer* b = new_buffer(64);
  infer_stream* s = new_stream();
  infer_event* e = new_event();
  infer_copy_region regions[2] = {region(), region()};
  regions[0].src_host = x.data();
  regions[0].dst_buffer = b;
  regions[0].size_bytes = 12;
  regions[1].src_host = y.data();
  regions[1].dst_buffer = b;
  regions[1].dst_offset = 12;
  regions[1].size_bytes = 8;
  ASSERT_OK(take_status(api()->copy_batch(s, regions, 2)));
  ASSERT_OK(sync(s, e, 1));
  EXPECT_EQ(read_floats(b, 0, 5), (std::vector<float>{1, 2, 3, 4, 5}));
}

TEST_F(ExampleMemory, BadCopyRegionsAreReportedAtEnqueue) {
  infer_buffer* b = new_buffer(16);
  infer_stream* s = new_stream();
  float host[8] = {};
  auto expect_invalid = [&](infer_copy_region r, const std::string& needle) {
    infer_copy_region regions[2] = {region(), r};
    regions[0].src_host = host;  // region 0 is fine; region 1 is the bad one
    regions[0].dst_buffer = b;
    regions[0].size_bytes = 4;
    StatusInfo st = take_status(api()->copy_batch(s, regions, 2));
    EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT) << needle;
    EXPECT_NE(st.message.find("region 1"), std::string::npos) << st.message;
    EXPECT_NE(st.message.find(needle), std::string::npos) << st.message;
  };
  infer_copy_region r = region();
  r.src_host = host;
  r.src_buffer = b;
  r.dst_host = host;
  r.size_bytes = 4;
  expect_invalid(r, "exactly one of src_host and src_buffer");
  r = region();
  r.src_host = host;
  r.dst_host = host;
  r.size_bytes = 4;
  expect_invalid(r, "host-to-host");
  r = region();
  r.src_host = host;
  r.dst_buffer = b;
  r.dst_offset = 8;
  r.size_bytes = 12;  // 8 + 12 > 16
  expect_invalid(r, "exceeds the 16-byte dst_buffer");
  r = region();
  r.src_buffer = b;
  r.src_offset = SIZE_MAX;  // must not wrap around
  r.dst_host = host;
  r.size_bytes = 4;
  expect_invalid(r, "exceeds the 16-byte src_buffer");
  r = region();
  r.struct_size = offsetof(infer_copy_region, size_bytes);  // too short to hold size_bytes
  expect_invalid(r, "struct_size");
}

TEST_F(ExampleMemory, AllocationBeyondDeviceMemoryIsOutOfMemory) {
  load({{"memory_mb", "1"}});
  infer_buffer* b = nullptr;
  StatusInfo st =
      take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 2 << 20, 64, &b));
  EXPECT_EQ(st.code, INFER_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(st.message.find("out of device memory"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("memory_mb"), std::string::npos) << st.message;
  EXPECT_EQ(b, nullptr);

  // Two halves fit exactly; a third byte does not, until one half is freed.
  infer_buffer* h1 = new_buffer(512 << 10);
  infer_buffer* h2 = new_buffer(512 << 10);
  ASSERT_NE(h1, nullptr);
  ASSERT_NE(h2, nullptr);
  st = take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 1, 64, &b));
  EXPECT_EQ(st.code, INFER_STATUS_OUT_OF_MEMORY);
  free_buffer(h1);
  EXPECT_NE(new_buffer(1), nullptr);
  // Host-visible memory is host RAM: it does not count against the device.
  EXPECT_NE(new_buffer(2 << 20, INFER_MEMORY_HOST_VISIBLE), nullptr);
}

TEST_F(ExampleMemory, CopyLatencyOptionDelaysEveryBatch) {
  load({{"copy_latency_us", "30000"}});
  const float x = 7.0f;
  infer_buffer* b = new_buffer(4);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(copy_to_device(b, 0, &x, 4));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(30));
}

}  // namespace
}  // namespace infer::test::example
