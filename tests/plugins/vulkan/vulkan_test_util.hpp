// Test fixture and helpers for the vulkan plugin's tests.
//
//   class MyOpTest : public infer::test::vk::VulkanTest {};
//   TEST_F(MyOpTest, AddBroadcasts) {
//     GraphBuilder g;
//     const infer_graph_view* graph = g.single_node_graph(
//         "Add", {TensorSpec::f32("a", {2, 3}), TensorSpec::f32("b", {3})},
//         {TensorSpec::f32("y", {2, 3})});
//     expect_same_as_cpu(graph, random_inputs(graph, /*seed=*/1), 1e-6, 1e-6);
//   }
//
// The fixture shares one vulkan plugin instance (validation layer on) and one cpu
// plugin instance across the whole test program, because creating a Vulkan instance
// with the validation layer takes a noticeable fraction of a second. Every test starts
// with an empty log and fails in TearDown if the plugin logged any "vulkan validation: "
// message during it. Without a Vulkan device (a machine without lavapipe) every test
// of the fixture is skipped with the plugin's reason.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "infer/test_support/test_support.hpp"

namespace infer::test::vk {

// Uniform floats in [lo, hi) from a fixed seed (std::mt19937).
HostTensor random_f32(const std::vector<int64_t>& dims, uint32_t seed, float lo = -1.0f,
                      float hi = 1.0f);
// One tensor per graph input of `graph` (its dims must be known): float32 uniform in
// [-1, 1), bool random 0/1, int32/int64 uniform in [0, 4) (other dtypes: not
// supported, float32 bytes). Seeds are seed, seed+1, ... per input.
std::vector<HostTensor> random_inputs(const infer_graph_view* graph, uint32_t seed);

// "" when `actual` matches `expected` (same dtype and dims; floats within
// atol + rtol * |expected|, NaN matching NaN; other dtypes exactly), else a description of
// the first few mismatches.
std::string compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol,
                            double rtol);

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The shared plugins: vulkan with the validation layer on, and the cpu reference.
  PluginHandle& vk();
  PluginHandle& cpu();
  const infer_plugin_api* api() { return vk().api(); }
  // The vulkan device every test runs on (the plugin's first).
  infer_device* device();

  // Compiles and runs `graph` once on one plugin (through buffers and copies, the
  // discrete-device path); the result carries the first failure's status.
  RunResult run_vk(const infer_graph_view* graph, const std::vector<HostTensor>& inputs);
  RunResult run_cpu(const infer_graph_view* graph, const std::vector<HostTensor>& inputs);

  // Runs `graph` on both plugins with the same inputs and expects every output of the
  // vulkan plugin to match the cpu plugin's within atol + rtol * |cpu| (non-fatal
  // failures naming the output).
  void expect_same_as_cpu(const infer_graph_view* graph, const std::vector<HostTensor>& inputs,
                          double atol, double rtol);
  // Same, with random inputs (random_inputs(graph, seed)).
  void expect_same_as_cpu(const infer_graph_view* graph, uint32_t seed, double atol, double rtol);

  // The "vulkan validation: " messages logged since SetUp.
  std::vector<std::string> validation_messages();

  // The vulkan plugin's answer for `node` (support NO and unknown estimates unless it
  // says otherwise); a failed query fails the test.
  infer_capability capability(const infer_node_view* node);
};

// Loads the vulkan plugin on its own (not shared), with `options` set on its host
// before the first get_devices (when Vulkan initializes). For tests of options and
// of plugin-wide state.
std::unique_ptr<PluginHandle> load_vulkan_plugin(
    const std::vector<std::pair<std::string, std::string>>& options, std::string* error);

}  // namespace infer::test::vk
