// Checks the answers of plugin_api_c99.c (compiled as strict C99) from C++: the
// INFER_HAS_FIELD macro on shortened structs, that C and C++ lay out every ABI struct
// identically, and that a function table written in C reads correctly.
#include "plugin_api_c99.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>

#include "infer/plugin_api.h"

namespace {

constexpr unsigned kName = 1u << 0, kVendor = 1u << 1, kKind = 1u << 2, kMemory = 1u << 3,
                   kUnits = 1u << 4, kHostAddressable = 1u << 5;

TEST(PluginApiC99, HasFieldSeesEveryFieldOfAFullStruct) {
  EXPECT_EQ(c99_device_props_fields_present(sizeof(infer_device_props)),
            kName | kVendor | kKind | kMemory | kUnits | kHostAddressable);
}

TEST(PluginApiC99, HasFieldTreatsFieldsBeyondAShortStructAsAbsent) {
  // A writer that stopped just before memory_bytes (as an older ABI minor would have).
  EXPECT_EQ(c99_device_props_fields_present(offsetof(infer_device_props, memory_bytes)),
            kName | kVendor | kKind);
  // A size that covers only part of a field does not count as having it.
  EXPECT_EQ(c99_device_props_fields_present(offsetof(infer_device_props, memory_bytes) + 4),
            kName | kVendor | kKind);
  // Just struct_size itself: nothing.
  EXPECT_EQ(c99_device_props_fields_present(sizeof(size_t)), 0u);
}

TEST(PluginApiC99, HasFieldAcceptsALargerStructFromANewerWriter) {
  EXPECT_EQ(c99_device_props_fields_present(sizeof(infer_device_props) + 64),
            kName | kVendor | kKind | kMemory | kUnits | kHostAddressable);
  EXPECT_TRUE(c99_host_services_has_is_cancelled(sizeof(infer_host_services) + 8));
}

TEST(PluginApiC99, HasFieldOfNullIsFalse) { EXPECT_EQ(c99_has_field_of_null(), 0); }

TEST(PluginApiC99, HasFieldOnTheLastFieldOfTheHostServices) {
  const size_t end =
      offsetof(infer_host_services, is_cancelled) + sizeof(infer_host_services::is_cancelled);
  EXPECT_TRUE(c99_host_services_has_is_cancelled(end));
  EXPECT_FALSE(c99_host_services_has_is_cancelled(end - 1));
  EXPECT_FALSE(c99_host_services_has_is_cancelled(offsetof(infer_host_services, is_cancelled)));
}

#define CXX_LAYOUT(type, field)                               \
  {                                                           \
#type "." #field, { sizeof(type), offsetof(type, field) } \
  }

TEST(PluginApiC99, CAndCxxAgreeOnEveryStructLayout) {
  const std::map<std::string, std::pair<size_t, size_t>> cxx = {
      CXX_LAYOUT(infer_quant_desc, zero_point),
      CXX_LAYOUT(infer_value_view, prepacked_size),
      CXX_LAYOUT(infer_attr_view, graphs),
      CXX_LAYOUT(infer_node_view, index),
      CXX_LAYOUT(infer_graph_view, opsets),
      CXX_LAYOUT(infer_capability, reason),
      CXX_LAYOUT(infer_capability, compute_dtype),
      CXX_LAYOUT(infer_device_props, host_addressable),
      CXX_LAYOUT(infer_tensor, quant),
      CXX_LAYOUT(infer_copy_region, size_bytes),
      CXX_LAYOUT(infer_copy_cost, latency_us),
      CXX_LAYOUT(infer_compile_options, partition_name),
      CXX_LAYOUT(infer_event_value, value),
      CXX_LAYOUT(infer_execute_args, run),
      CXX_LAYOUT(infer_host_services, is_cancelled),
      CXX_LAYOUT(infer_host_services, compute_precision),
      CXX_LAYOUT(infer_plugin_api, prepack_constant),
  };
  ASSERT_EQ(c99_layout_count(), cxx.size());
  for (size_t i = 0; i < c99_layout_count(); ++i) {
    const c99_layout* c = c99_layout_at(i);
    auto it = cxx.find(c->what);
    ASSERT_NE(it, cxx.end()) << c->what;
    EXPECT_EQ(c->size, it->second.first) << "sizeof of " << c->what;
    EXPECT_EQ(c->offset, it->second.second) << "offsetof " << c->what;
  }
}

TEST(PluginApiC99, ATableWrittenInCReadsCorrectly) {
  infer_plugin_entry_fn entry = c99_entry_as_fn();
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry(INFER_ABI_VERSION_MAJOR + 1, 0), nullptr);
  const infer_plugin_api* api = entry(INFER_ABI_VERSION_MAJOR, INFER_ABI_VERSION_MINOR);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->struct_size, sizeof(infer_plugin_api));
  EXPECT_STREQ(api->name, "c99");
  EXPECT_EQ(api->plugin_create, nullptr);  // unnamed entries are NULL
  EXPECT_EQ(api->prepack_constant, nullptr);
  ASSERT_NE(api->get_devices, nullptr);
  size_t count = 7;
  EXPECT_EQ(api->get_devices(nullptr, nullptr, 0, &count), nullptr);
  EXPECT_EQ(count, 0u);
}

}  // namespace
