// Loading, devices, options and properties.
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

class LoadingTest : public VulkanTest {};

bool any_log_contains(PluginHandle& p, const std::string& text) {
  for (const LogEntry& e : p.host().logs())
    if (e.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(VulkanEntryTest, EntryReturnsTheTableAndRefusesAnotherMajor) {
  LoadOptions options;
  options.create_instance = false;
  std::string error;
  auto h = PluginHandle::load(plugin_path("vulkan"), &error, options);
  ASSERT_TRUE(h) << error;
  EXPECT_STREQ(h->api()->name, "vulkan");
  EXPECT_EQ(h->api()->abi_major, INFER_ABI_VERSION_MAJOR);
  EXPECT_GE(h->api()->struct_size, sizeof(infer_plugin_api));
  options.host_abi_major = INFER_ABI_VERSION_MAJOR + 1;
  EXPECT_FALSE(PluginHandle::load(plugin_path("vulkan"), &error, options));
}

// Runs in a child process (a death test re-runs this test binary) so the environment
// change cannot leak into other tests: with no driver manifest the loader finds no
// driver, and the plugin must load, report zero devices with the reason and not crash.
void load_without_driver() {
  setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
  std::string error;
  auto h = PluginHandle::load(plugin_path("vulkan"), &error);
  if (!h) {
    std::fprintf(stderr, "load failed: %s\n", error.c_str());
    std::exit(1);
  }
  size_t count = 99;
  StatusInfo st = take_status(h->api()->get_devices(h->plugin(), nullptr, 0, &count));
  if (count != 0 || st.code != INFER_STATUS_UNAVAILABLE || st.message.empty()) {
    std::fprintf(stderr, "count %zu, status %s: %s\n", count, status_code_name(st.code),
                 st.message.c_str());
    std::exit(2);
  }
  // The same reason reaches the host log.
  bool logged = false;
  for (const LogEntry& e : h->host().logs())
    if (e.message.find(st.message) != std::string::npos) logged = true;
  if (!logged) {
    std::fprintf(stderr, "reason not logged: %s\n", st.message.c_str());
    std::exit(3);
  }
  std::fprintf(stderr, "zero devices: %s\n", st.message.c_str());
  h.reset();
  std::exit(0);
}

TEST(VulkanEntryTest, WithoutADriverReportsZeroDevicesWithTheReason) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(load_without_driver(), ::testing::ExitedWithCode(0), "zero devices: vulkan: ");
}

// Also in a child process: with the layer search path pointing nowhere, asking for
// validation logs a warning and the plugin works without the layer.
void load_without_validation_layer() {
  setenv("VK_LAYER_PATH", "/nonexistent/layers", 1);
  std::string error;
  auto h = load_vulkan_plugin({{"validation", "true"}}, &error);
  if (!h) {
    std::fprintf(stderr, "load failed: %s\n", error.c_str());
    std::exit(1);
  }
  if (h->devices().empty()) {
    std::fprintf(stderr, "no devices without the layer\n");
    std::exit(2);
  }
  for (const LogEntry& e : h->host().logs())
    if (e.level == INFER_LOG_WARNING && e.message.find("is not installed") != std::string::npos) {
      std::fprintf(stderr, "warned: %s\n", e.message.c_str());
      h.reset();
      std::exit(0);
    }
  std::fprintf(stderr, "no warning logged\n");
  std::exit(3);
}

TEST(VulkanEntryTest, MissingValidationLayerIsAWarning) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(load_without_validation_layer(), ::testing::ExitedWithCode(0),
              "warned: vulkan: validation was requested but the layer VK_LAYER_KHRONOS_validation");
}

TEST_F(LoadingTest, DevicePropsDescribeTheDevice) {
  infer_device_props props{};
  props.struct_size = sizeof props;
  ASSERT_TRUE(take_status(api()->device_get_props(device(), &props)).ok());
  EXPECT_GT(std::strlen(props.name), 0u);
  EXPECT_GT(std::strlen(props.vendor), 0u);
  EXPECT_GT(props.memory_bytes, 0u);
  EXPECT_GE(props.compute_units, 1u);
  // The default is the discrete-device model: data moves through copies.
  EXPECT_FALSE(props.host_addressable);
  if (std::string(props.name).find("llvmpipe") != std::string::npos) {
    EXPECT_EQ(props.kind, INFER_DEVICE_CPU);
  }
}

TEST_F(LoadingTest, ShortPropsStructIsNotOverwritten) {
  // A host built against an older ABI has a shorter struct: nothing past it is written.
  struct {
    infer_device_props props;
    unsigned char guard[64];
  } s;
  std::memset(&s, 0xAB, sizeof s);
  s.props.struct_size = offsetof(infer_device_props, kind);
  ASSERT_TRUE(take_status(api()->device_get_props(device(), &s.props)).ok());
  const auto* bytes = reinterpret_cast<const unsigned char*>(&s.props);
  for (size_t i = offsetof(infer_device_props, kind); i < sizeof s; ++i)
    ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " written";
}

TEST_F(LoadingTest, ValidationOptionEnablesTheLayer) {
  std::string error;
  auto h = load_vulkan_plugin({{"validation", "true"}}, &error);
  ASSERT_TRUE(h) << error;
  ASSERT_NE(h->device(0), nullptr);
  EXPECT_TRUE(any_log_contains(*h, "validation layer VK_LAYER_KHRONOS_validation enabled"));
}

TEST_F(LoadingTest, FixtureCollectsValidationMessages) {
  // What TearDown fails on: any log line with the prefix the plugin's messenger uses.
  const infer_host_services* h = vk().services();
  h->log(h->host_ctx, INFER_LOG_ERROR, "vulkan validation: probe message");
  h->log(h->host_ctx, INFER_LOG_WARNING, "vulkan: not a validation message");
  std::vector<std::string> seen = validation_messages();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "vulkan validation: probe message");
  vk().host().clear_logs();  // so that this test itself passes
}

TEST_F(LoadingTest, DeviceOptionOutOfRangeReportsZeroDevices) {
  std::string error;
  auto h = load_vulkan_plugin({{"device", "7"}}, &error);
  ASSERT_TRUE(h) << error;
  size_t count = 99;
  StatusInfo st = take_status(h->api()->get_devices(h->plugin(), nullptr, 0, &count));
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(st.code, INFER_STATUS_UNAVAILABLE);
  EXPECT_NE(st.message.find("option device=7"), std::string::npos) << st.message;
}

TEST_F(LoadingTest, DeviceOptionZeroSelectsTheFirstDevice) {
  std::string error;
  auto h = load_vulkan_plugin({{"device", "0"}}, &error);
  ASSERT_TRUE(h) << error;
  EXPECT_EQ(h->devices().size(), 1u);
}

TEST_F(LoadingTest, MalformedOptionFailsWithItsName) {
  std::string error;
  auto h = load_vulkan_plugin({{"validation", "maybe"}}, &error);
  ASSERT_TRUE(h) << error;
  size_t count = 99;
  StatusInfo st = take_status(h->api()->get_devices(h->plugin(), nullptr, 0, &count));
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("option validation must be true or false, got 'maybe'"),
            std::string::npos)
      << st.message;
}

TEST_F(LoadingTest, UnifiedMemoryMakesDeviceLocalBuffersMappable) {
  std::string error;
  auto h = load_vulkan_plugin({{"unified_memory", "true"}}, &error);
  ASSERT_TRUE(h) << error;
  infer_device* d = h->device(0);
  ASSERT_NE(d, nullptr);
  infer_device_props props{};
  props.struct_size = sizeof props;
  ASSERT_TRUE(take_status(h->api()->device_get_props(d, &props)).ok());
  // lavapipe's device-local memory is host memory, so the option applies there; a
  // discrete GPU ignores it and says so.
  if (props.kind == INFER_DEVICE_CPU) {
    EXPECT_TRUE(props.host_addressable);
  }
  infer_buffer* b = nullptr;
  ASSERT_TRUE(take_status(h->api()->buffer_alloc(d, INFER_MEMORY_DEVICE_LOCAL, 64, 64, &b)).ok());
  void* ptr = nullptr;
  StatusInfo st = take_status(h->api()->buffer_map(b, &ptr));
  if (props.host_addressable) {
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_NE(ptr, nullptr);
  } else {
    EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
    EXPECT_TRUE(any_log_contains(*h, "option unified_memory ignored"));
  }
  h->api()->buffer_free(b);
}

}  // namespace
}  // namespace infer::test::vk
