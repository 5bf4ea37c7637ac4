// Memory: kinds, mapping, the sub-allocator, bad requests.
#include <cstring>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

class MemoryTest : public VulkanTest {};

int count_logs(PluginHandle& p, const std::string& text) {
  int n = 0;
  for (const LogEntry& e : p.host().logs())
    if (e.message.find(text) != std::string::npos) ++n;
  return n;
}

TEST_F(MemoryTest, HostKindsMapAndKeepTheirBytes) {
  for (infer_memory_kind kind : {INFER_MEMORY_HOST_VISIBLE, INFER_MEMORY_HOST_PINNED}) {
    infer_buffer* b = nullptr;
    ASSERT_TRUE(take_status(api()->buffer_alloc(device(), kind, 1000, 64, &b)).ok());
    void* p1 = nullptr;
    void* p2 = nullptr;
    ASSERT_TRUE(take_status(api()->buffer_map(b, &p1)).ok());
    ASSERT_NE(p1, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p1) % 64, 0u) << "alignment 64 asked";
    std::memset(p1, 0x5A, 1000);
    // Mapping again gives the same memory with the same bytes.
    ASSERT_TRUE(take_status(api()->buffer_map(b, &p2)).ok());
    EXPECT_EQ(p1, p2);
    EXPECT_EQ(static_cast<unsigned char*>(p2)[999], 0x5A);
    api()->buffer_free(b);
  }
}

TEST_F(MemoryTest, DeviceLocalIsNotMappableByDefault) {
  infer_buffer* b = nullptr;
  ASSERT_TRUE(take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 256, 256, &b)).ok());
  void* p = nullptr;
  StatusInfo st = take_status(api()->buffer_map(b, &p));
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_NE(st.message.find("copy_batch"), std::string::npos) << st.message;
  api()->buffer_free(b);
}

TEST_F(MemoryTest, SmallBuffersShareBlocksAndBigOnesGetTheirOwn) {
  // A private instance, so the block log lines are this test's alone.
  std::string error;
  auto h = load_vulkan_plugin({}, &error);
  ASSERT_TRUE(h) << error;
  infer_device* d = h->device(0);
  ASSERT_NE(d, nullptr);
  const infer_plugin_api* a = h->api();
  // Opening the device allocated the first device-local block (for a placeholder).
  h->host().clear_logs();
  std::vector<infer_buffer*> buffers(200, nullptr);
  for (auto& b : buffers)
    ASSERT_TRUE(take_status(a->buffer_alloc(d, INFER_MEMORY_DEVICE_LOCAL, 4096, 64, &b)).ok());
  // 200 x 4 KiB fit the block that already exists: no new VkDeviceMemory.
  EXPECT_EQ(count_logs(*h, "new memory block"), 0);
  for (auto& b : buffers) a->buffer_free(b);
  for (auto& b : buffers)
    ASSERT_TRUE(take_status(a->buffer_alloc(d, INFER_MEMORY_DEVICE_LOCAL, 4096, 64, &b)).ok());
  EXPECT_EQ(count_logs(*h, "new memory block"), 0) << "freed ranges are reused";
  // A request above the 16 MiB threshold gets a dedicated allocation.
  infer_buffer* big = nullptr;
  ASSERT_TRUE(take_status(a->buffer_alloc(d, INFER_MEMORY_DEVICE_LOCAL, 20 << 20, 256, &big)).ok());
  EXPECT_EQ(count_logs(*h, "dedicated"), 1);
  a->buffer_free(big);
  for (auto& b : buffers) a->buffer_free(b);
  // Host-visible memory is a different memory type use: its own block.
  infer_buffer* hv = nullptr;
  ASSERT_TRUE(take_status(a->buffer_alloc(d, INFER_MEMORY_HOST_VISIBLE, 100, 64, &hv)).ok());
  a->buffer_free(hv);
}

TEST_F(MemoryTest, ZeroSizedBuffersWork) {
  infer_buffer* b = nullptr;
  ASSERT_TRUE(take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 0, 64, &b)).ok());
  api()->buffer_free(b);
}

TEST_F(MemoryTest, BadRequestsSayWhy) {
  infer_buffer* b = nullptr;
  StatusInfo st = take_status(
      api()->buffer_alloc(device(), static_cast<infer_memory_kind>(9), 64, 64, &b));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("unknown memory kind 9"), std::string::npos) << st.message;
  st = take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, 64, 48, &b));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("alignment 48 is not a power of two"), std::string::npos) << st.message;
  // Far beyond any device: OUT_OF_MEMORY naming the request, not a crash.
  st = take_status(api()->buffer_alloc(device(), INFER_MEMORY_DEVICE_LOCAL, size_t{1} << 44, 64, &b));
  EXPECT_EQ(st.code, INFER_STATUS_OUT_OF_MEMORY) << st.message;
  EXPECT_NE(st.message.find("a buffer of 17592186044416 bytes"), std::string::npos) << st.message;
}

TEST_F(MemoryTest, ImportIsLeftToTheHost) {
  // Not provided: the host allocates and copies (see entry.cpp for why).
  EXPECT_EQ(api()->buffer_import_host, nullptr);
}

}  // namespace
}  // namespace infer::test::vk
