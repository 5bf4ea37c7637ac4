// Session::create's handling of options: backends that are missing or unavailable,
// optimizer settings, pins, threads and plugin options.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "infer_test_paths.hpp"
#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::OnnxModelWriter;
using testing::source_path;
using testing::tree_options;

// x -> relu -> y, plus a dead branch x -> neg -> unused.
std::string model_with_dead_node() {
  OnnxModelWriter w;
  w.input("x", {2});
  w.node("relu", "Relu", {"x"}, {"y"});
  w.node("dead_neg", "Neg", {"x"}, {"unused"});
  w.output("y", {2});
  const std::string path = testing::temp_path("infer_runtime_dead.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

TEST(SessionOptions, DeadCodeIsRemovedAndReported) {
  auto s = Session::create(model_with_dead_node(), tree_options({"cpu"}));
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_EQ((*s)->plan().passes.size(), 1u);
  EXPECT_EQ((*s)->plan().passes[0].rfind("dead_code_elimination: 1 rewrite, ", 0), 0u)
      << (*s)->plan().passes[0];
  EXPECT_EQ((*s)->plan().nodes_loaded, 2u);
  EXPECT_EQ((*s)->plan().nodes_optimized, 1u);
  ASSERT_EQ((*s)->plan().nodes.size(), 1u);
  EXPECT_EQ((*s)->plan().nodes[0].node, "relu");
  const float x[] = {-1.5f, 2.5f};
  auto out = (*s)->run({{"x", *Tensor::from_bytes(DataType::kFloat32, {2}, x, sizeof x)}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].tensor.data_as<float>()[0], 0.0f);
  EXPECT_EQ((*out)[0].tensor.data_as<float>()[1], 2.5f);

  SessionOptions off = tree_options({"cpu"});
  off.disabled_passes = {"dead_code_elimination"};
  auto kept = Session::create(model_with_dead_node(), off);
  ASSERT_TRUE(kept.is_ok()) << kept.status().message();
  EXPECT_EQ((*kept)->plan().nodes.size(), 2u);
  EXPECT_TRUE((*kept)->plan().passes.empty());
}

TEST(SessionOptions, PinToANodeTheOptimizerRemovedIsIgnored) {
  SessionOptions o = tree_options({"cpu"});
  o.placement = {{"dead_neg", "cpu"}};
  auto s = Session::create(model_with_dead_node(), o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
}

TEST(SessionOptions, PinErrorsNameNodeAndBackend) {
  SessionOptions o = tree_options({"cpu"});
  o.placement = {{"no_such_node", "cpu"}};
  auto s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(),
            "placement pin: node 'no_such_node' (pinned to backend 'cpu') is not in the model");

  o.placement = {{"relu", "example"}};
  s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(),
            "placement pin: node 'relu' is pinned to backend 'example', which is not enabled "
            "(enabled backends: cpu)");
}

TEST(SessionOptions, UnknownBackendIsNotFound) {
  auto s = Session::create(model_with_dead_node(), tree_options({"vulkan_missing"}));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s.status().message().rfind("no plugin 'vulkan_missing' found", 0), 0u)
      << s.status().message();
}

TEST(SessionOptions, BackendWithoutDevicesIsUnavailableWithItsReason) {
  SessionOptions o = tree_options({"nodevice"});
  o.plugin_dirs.push_back(::infer::test_paths::runtime_test_plugin_dir());
  auto s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.status().message(),
            "backend 'nodevice' is unavailable: no Frobnicator driver: /dev/frob0 is missing");
}

// A listed backend without a device is left out when another listed one has a device:
// one warning with the plugin's reason, the plan says so, and the nodes run on the next.
TEST(SessionOptions, BackendWithoutDevicesIsLeftOutWhenAnotherListedOneRuns) {
  auto log = std::make_shared<testing::LogCollector>();
  SessionOptions o = tree_options({"nodevice", "cpu"}, log);
  o.plugin_dirs.push_back(::infer::test_paths::runtime_test_plugin_dir());
  auto s = Session::create(model_with_dead_node(), o);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ((*s)->active_backends(), std::vector<std::string>{"cpu"});
  const std::string warning =
      "backend 'nodevice' is unavailable (no Frobnicator driver: /dev/frob0 is missing): its "
      "nodes go to the next backends";
  const std::vector<std::string> lines = log->lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), warning), 1) << ::testing::PrintToString(lines);
  const PlanReport& plan = (*s)->plan();
  EXPECT_EQ(plan.unavailable_backends,
            std::vector<std::string>{"nodevice: no Frobnicator driver: /dev/frob0 is missing"});
  EXPECT_EQ(plan.to_text().rfind("backends left out (no device):\n  nodevice: no Frobnicator "
                                 "driver: /dev/frob0 is missing\nnodes (1):\n",
                                 0),
            0u)
      << plan.to_text();
  const float x[] = {-1.5f, 2.0f};
  auto out = (*s)->run({{"x", *Tensor::from_bytes(DataType::kFloat32, {2}, x, sizeof x)}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].tensor.data_as<float>()[0], 0.0f);
  EXPECT_EQ((*out)[0].tensor.data_as<float>()[1], 2.0f);

  // A pin to it cannot be honoured: an error naming the pin, the backend and why.
  o.placement = {{"relu", "nodevice"}};
  auto pinned = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().message(),
            "placement pin for node 'relu' names backend 'nodevice', which is unavailable: no "
            "Frobnicator driver: /dev/frob0 is missing");
}

// list_devices: every plugin of the folders by name, with its devices or the reason it
// has none, and a refused file with why.
TEST(ListDevices, NamesEveryPluginWithItsDevicesOrWhyNot) {
  const std::string bogus_dir = testing::temp_path("infer_list_devices_bogus");
  std::filesystem::create_directories(bogus_dir);
  std::ofstream(bogus_dir + "/libinfer_plugin_bogus.so") << "not a shared library";
  const std::vector<BackendDevices> all =
      list_devices({INFER_PLUGIN_DIR, ::infer::test_paths::runtime_test_plugin_dir(), bogus_dir},
                   [](LogLevel, const std::string&) {});
  auto find = [&](const std::string& name) -> const BackendDevices* {
    for (const BackendDevices& b : all)
      if (b.backend == name) return &b;
    return nullptr;
  };
  const BackendDevices* cpu = find("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->plugin_path, std::string(INFER_PLUGIN_DIR) + "/libinfer_plugin_cpu.so");
  ASSERT_EQ(cpu->devices.size(), 1u);
  EXPECT_EQ(cpu->devices[0].kind, "cpu");
  EXPECT_TRUE(cpu->devices[0].host_addressable);
  EXPECT_FALSE(cpu->devices[0].name.empty());
  EXPECT_TRUE(cpu->unavailable.empty());
  EXPECT_FALSE(cpu->version.empty());
  const BackendDevices* example = find("example");
  ASSERT_NE(example, nullptr);
  EXPECT_FALSE(example->devices.empty());
  const BackendDevices* nodevice = find("nodevice");
  ASSERT_NE(nodevice, nullptr);
  EXPECT_TRUE(nodevice->devices.empty());
  EXPECT_NE(nodevice->unavailable.find("no Frobnicator driver: /dev/frob0 is missing"),
            std::string::npos)
      << nodevice->unavailable;
  const BackendDevices* bogus = find("bogus");
  ASSERT_NE(bogus, nullptr);
  EXPECT_EQ(std::filesystem::path(bogus->plugin_path),
            (std::filesystem::path(bogus_dir) / "libinfer_plugin_bogus.so").lexically_normal());
  EXPECT_TRUE(bogus->devices.empty());
  EXPECT_FALSE(bogus->unavailable.empty());
  // Sorted by name among the loaded plugins; refused files come after them.
  EXPECT_EQ(all.back().backend, "bogus");
}

TEST(SessionOptions, OptionErrorsComeBackFromCreate) {
  SessionOptions o = tree_options({"cpu"});
  o.threads = -2;
  auto s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), "threads must be 0 (one per hardware thread) or more, got -2");

  o = tree_options({"cpu"});
  o.disabled_passes = {"fold_everything"};
  s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message().rfind(
                "unknown optimizer pass 'fold_everything' in disabled passes (known passes: ", 0),
            0u)
      << s.status().message();
  EXPECT_NE(s.status().message().find("dead_code_elimination"), std::string::npos);

  o = tree_options({"cpu"});
  o.optimization_level = 7;
  s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), "optimization level 7 is out of range (expected 0..3)");

  o = tree_options({"cpu", "cpu"});
  s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), "backends: 'cpu' is listed twice");
}

TEST(SessionOptions, PluginOptionsReachThePlugin) {
  SessionOptions o = tree_options({"example", "cpu"});
  o.backend_options = {{"example", {{"memory_mb", "lots"}}}};
  auto s = Session::create(model_with_dead_node(), o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(
      s.status().message().find("option memory_mb must be a positive integer (MiB), got 'lots'"),
      std::string::npos)
      << s.status().message();
}

TEST(SessionOptions, OptionsForAnUnusedBackendAreAWarning) {
  auto log = std::make_shared<testing::LogCollector>();
  SessionOptions o = tree_options({"cpu"}, log);
  o.backend_options = {{"vulkan", {{"device", "1"}}}};
  auto s = Session::create(model_with_dead_node(), o);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const auto lines = log->lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "options given for backend 'vulkan', which is not among the session's backends");
}

TEST(SessionOptions, MissingModelFileNamesThePath) {
  auto s = Session::create(source_path("models/no_such_model.onnx"), tree_options({"cpu"}));
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("no_such_model.onnx"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace infer
