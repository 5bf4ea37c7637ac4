// The example plugin as a shared library: its one exported symbol, its function table
// and version handshake, its options, its device and what the device reports.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "example_fixture.hpp"
#include "infer_test_paths.hpp"

namespace infer::test::example {
namespace {

// The symbols `nm -D --defined-only` lists for the plugin, one "TYPE NAME" per entry.
std::vector<std::string> exported_symbols(const std::string& path) {
  std::vector<std::string> symbols;
  const std::string cmd = std::string(INFER_NM) + " -D --defined-only '" + path + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {"<popen failed>"};
  char line[1024];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::istringstream in(line);
    std::string address, type, name;
    if (in >> address >> type >> name) symbols.push_back(type + " " + name);
  }
  if (pclose(pipe) != 0) symbols.push_back("<nm failed>");
  return symbols;
}

TEST(ExampleLibrary, ExportsExactlyOneSymbol) {
  EXPECT_EQ(exported_symbols(example_plugin_path()),
            std::vector<std::string>{"T infer_plugin_entry"});
}

TEST(ExampleLibrary, EntryPointResolvesAndInternalsStayHidden) {
  void* lib = dlopen(example_plugin_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  EXPECT_NE(dlsym(lib, INFER_PLUGIN_ENTRY_SYMBOL), nullptr);
  // The C++ internals and the plugin's C shims are not reachable by name.
  EXPECT_EQ(dlsym(lib, "plugin_create"), nullptr);
  EXPECT_EQ(dlsym(lib, "_ZN5infer7example5Event7advanceEm"), nullptr);
  dlclose(lib);
}

TEST(ExampleLibrary, TableDescribesThePlugin) {
  std::string error;
  LoadOptions lo;
  lo.create_instance = false;
  auto handle = PluginHandle::load(example_plugin_path(), &error, lo);
  ASSERT_NE(handle, nullptr) << error;
  const infer_plugin_api* api = handle->api();
  EXPECT_EQ(api->struct_size, sizeof(infer_plugin_api));
  EXPECT_EQ(api->abi_major, INFER_ABI_VERSION_MAJOR);
  EXPECT_EQ(api->abi_minor, INFER_ABI_VERSION_MINOR);
  EXPECT_LE(api->min_host_minor, INFER_ABI_VERSION_MINOR);
  // The name is what users type in --backends and matches libinfer_plugin_<name>.so.
  EXPECT_STREQ(api->name, "example");
  EXPECT_NE(api->version, nullptr);
  EXPECT_NE(api->description, nullptr);
  // Every required entry is there; the documented choices for optional ones hold.
  for (const void* fn :
       {(const void*)api->plugin_create, (const void*)api->plugin_destroy,
        (const void*)api->get_devices, (const void*)api->device_get_props,
        (const void*)api->query_capability, (const void*)api->buffer_alloc,
        (const void*)api->buffer_free, (const void*)api->stream_create,
        (const void*)api->stream_destroy, (const void*)api->event_create,
        (const void*)api->event_destroy, (const void*)api->stream_signal,
        (const void*)api->stream_wait, (const void*)api->event_wait, (const void*)api->copy_batch,
        (const void*)api->compile, (const void*)api->executable_destroy, (const void*)api->execute})
    EXPECT_NE(fn, nullptr);
  EXPECT_NE(api->buffer_map, nullptr);
  EXPECT_NE(api->event_signal_host, nullptr);
  EXPECT_NE(api->event_query, nullptr);
  EXPECT_NE(api->event_on_complete, nullptr);
  EXPECT_NE(api->copy_cost, nullptr);
  EXPECT_NE(api->prepack_constant, nullptr);
  EXPECT_EQ(api->buffer_import_host, nullptr);  // a host pointer means nothing to the device
  EXPECT_EQ(api->propose_groups, nullptr);
}

TEST(ExampleLibrary, DeclinesAHostOfAnotherMajorVersion) {
  std::string error;
  LoadOptions lo;
  lo.create_instance = false;
  lo.host_abi_major = INFER_ABI_VERSION_MAJOR + 1;
  EXPECT_EQ(PluginHandle::load(example_plugin_path(), &error, lo), nullptr);
  EXPECT_NE(error.find("returned no API table"), std::string::npos) << error;
}

TEST(ExampleLibrary, TellsAnOlderMinorHostWhatItNeeds) {
  // For an older minor the table still comes back, so the host can read min_host_minor
  // and refuse with a precise reason.
  std::string error;
  LoadOptions lo;
  lo.create_instance = false;
  lo.host_abi_minor = 0;
  auto handle = PluginHandle::load(example_plugin_path(), &error, lo);
  ASSERT_NE(handle, nullptr) << error;
  EXPECT_EQ(handle->api()->min_host_minor, 1u);
}

using ExampleDevice = ExampleTest;

TEST_F(ExampleDevice, ReportsOneDevice) {
  // Asking for the count only.
  size_t count = 0;
  EXPECT_OK(take_status(api()->get_devices(plugin(), nullptr, 0, &count)));
  EXPECT_EQ(count, 1u);
  // More room than devices: only the first slot is written.
  infer_device* devices[2] = {nullptr, reinterpret_cast<infer_device*>(&count)};
  EXPECT_OK(take_status(api()->get_devices(plugin(), devices, 2, &count)));
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(devices[0], device());
  EXPECT_EQ(devices[1], reinterpret_cast<infer_device*>(&count));
  // A plain PluginHandle load (its own instance) sees the same.
  std::string error;
  auto plain = PluginHandle::load(example_plugin_path(), &error);
  ASSERT_NE(plain, nullptr) << error;
  EXPECT_EQ(plain->devices().size(), 1u);
}

TEST_F(ExampleDevice, PropsDescribeADiscreteDevice) {
  infer_device_props props{};
  props.struct_size = sizeof props;
  ASSERT_OK(take_status(api()->device_get_props(device(), &props)));
  EXPECT_STREQ(props.name, "example discrete device");
  EXPECT_STREQ(props.vendor, "infer SDK example");
  EXPECT_EQ(props.kind, INFER_DEVICE_ACCELERATOR);
  EXPECT_EQ(props.memory_bytes, 256ull << 20);  // memory_mb defaults to 256
  EXPECT_EQ(props.compute_units, 1u);
  EXPECT_FALSE(props.host_addressable);
}

TEST_F(ExampleDevice, PropsRespectAnOlderHostsShorterStruct) {
  // A host built before memory_bytes existed: the plugin must not write past its struct.
  struct {
    infer_device_props props;
    unsigned char canary[64];
  } block;
  std::memset(&block, 0xAB, sizeof block);
  block.props.struct_size = offsetof(infer_device_props, memory_bytes);
  ASSERT_OK(take_status(api()->device_get_props(device(), &block.props)));
  EXPECT_STREQ(block.props.name, "example discrete device");
  EXPECT_EQ(block.props.kind, INFER_DEVICE_ACCELERATOR);
  const auto* tail = reinterpret_cast<const unsigned char*>(&block.props) +
                     offsetof(infer_device_props, memory_bytes);
  const size_t tail_size = sizeof block - offsetof(infer_device_props, memory_bytes);
  for (size_t i = 0; i < tail_size; ++i) ASSERT_EQ(tail[i], 0xAB) << "byte " << i << " written";
}

TEST_F(ExampleDevice, MemoryOptionSetsTheDeviceSize) {
  load({{"memory_mb", "3"}});
  infer_device_props props{};
  props.struct_size = sizeof props;
  ASSERT_OK(take_status(api()->device_get_props(device(), &props)));
  EXPECT_EQ(props.memory_bytes, 3ull << 20);
}

TEST_F(ExampleDevice, MalformedOptionsFailCreationNamingTheOption) {
  StatusInfo st = try_create({{"memory_mb", "lots"}});
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(st.message, "example: option memory_mb must be a positive integer (MiB), got 'lots'");
  st = try_create({{"memory_mb", "0"}});
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  st = try_create({{"copy_latency_us", "-5"}});
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("copy_latency_us"), std::string::npos) << st.message;
  st = try_create({{"copy_bandwidth_gbps", "1e400x"}});
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("copy_bandwidth_gbps"), std::string::npos) << st.message;
  load({});  // TearDown expects a loaded plugin
}

TEST_F(ExampleDevice, CopyCostReflectsTheOptions) {
  infer_copy_cost cost{};
  cost.struct_size = sizeof cost;
  // Defaults: 16 GB/s = 16000 bytes/us, 10 us of link set-up and no extra latency.
  ASSERT_OK(take_status(api()->copy_cost(device(), INFER_COPY_HOST_TO_DEVICE, &cost)));
  EXPECT_DOUBLE_EQ(cost.bandwidth_bytes_per_us, 16000.0);
  EXPECT_DOUBLE_EQ(cost.latency_us, 10.0);
  ASSERT_OK(take_status(api()->copy_cost(device(), INFER_COPY_DEVICE_TO_DEVICE, &cost)));
  EXPECT_DOUBLE_EQ(cost.bandwidth_bytes_per_us, 320000.0);  // 20x faster on the device

  load({{"copy_latency_us", "250"}, {"copy_bandwidth_gbps", "2.5"}});
  ASSERT_OK(take_status(api()->copy_cost(device(), INFER_COPY_DEVICE_TO_HOST, &cost)));
  EXPECT_DOUBLE_EQ(cost.bandwidth_bytes_per_us, 2500.0);
  EXPECT_DOUBLE_EQ(cost.latency_us, 260.0);

  StatusInfo st =
      take_status(api()->copy_cost(device(), static_cast<infer_copy_direction>(3), &cost));
  EXPECT_EQ(st.code, INFER_STATUS_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace infer::test::example
