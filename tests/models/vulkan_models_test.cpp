// The exported real models run with `--backends vulkan,cpu` (the Vulkan plugin first, the
// CPU plugin as the fallback) must give the reference outputs the exporter saved, within
// the same tolerances as the CPU backend alone, and the heavy nodes must really run on
// the Vulkan device. Here and in CI the device is Mesa's lavapipe (Vulkan on the CPU);
// on a machine without any Vulkan driver the tests skip, saying why.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model_case.hpp"
#include "onnx_model_writer.hpp"
#include "infer_test_paths.hpp"

namespace infer::models_test {
namespace {

const std::vector<std::string> kVulkanFirst = {"vulkan", "cpu"};

// The sessions here neither read nor write the user's link cache (README: INFER_LINK_CACHE)
// unless the caller chose one. Set in the process, not in ctest's ENVIRONMENT, which
// carries the sanitizer options (tests/models/CMakeLists.txt).
const bool kLinkCacheOff = [] { return ::setenv("INFER_LINK_CACHE", "off", 0) == 0; }();

// Empty when a Vulkan device is there, else why not (the plugin's own reason).
std::string vulkan_missing() {
  static const std::string reason = [] {
    SessionOptions options;
    options.backends = {"vulkan"};
    options.plugin_dirs = {INFER_PLUGIN_DIR};
    options.log_level = LogLevel::kError;
    Result<std::unique_ptr<Session>> s =
        Session::create(std::string(INFER_SOURCE_DIR) + "/models/digits_cnn.onnx", options);
    if (s.is_ok() || s.status().code() != StatusCode::kUnavailable) return std::string();
    return s.status().message();
  }();
  return reason;
}

#define SKIP_WITHOUT_VULKAN()                                                        \
  do {                                                                               \
    const std::string why = vulkan_missing();                                        \
    if (!why.empty()) GTEST_SKIP() << "no Vulkan device on this machine: " << why;   \
  } while (0)

// Counts, per op type, the nodes placed on each backend and prints the partitions.
std::map<std::string, std::map<std::string, int>> placement(const Session& session) {
  std::map<std::string, std::map<std::string, int>> by_op;
  for (const NodePlacement& n : session.plan().nodes) ++by_op[n.op_type][n.backend];
  std::cout << "[          ] " << session.plan().partitions.size() << " partitions:";
  for (const PartitionSummary& p : session.plan().partitions)
    std::cout << " " << p.name << "(" << p.backend << ", " << p.node_count << ")";
  std::cout << "\n";
  return by_op;
}

// Every node of the given op types ran on the Vulkan device.
void expect_on_vulkan(const Session& session, const std::vector<std::string>& ops) {
  auto by_op = placement(session);
  for (const std::string& op : ops) {
    ASSERT_TRUE(by_op.count(op)) << "the optimized graph has no " << op << " node";
    for (const auto& [backend, count] : by_op[op])
      EXPECT_EQ(backend, "vulkan") << count << " " << op << " node(s) placed on " << backend;
  }
}

TEST(VulkanModels, ResNet18MatchesTheReferenceOnVulkan) {
  SKIP_WITHOUT_VULKAN();
  std::unique_ptr<Session> session;
  run_model_case("resnet18", kVulkanFirst, &session);
  ASSERT_TRUE(session);
  expect_on_vulkan(*session, {"FusedConv", "MaxPool", "GlobalAveragePool"});
}

TEST(VulkanModels, ResNet50MatchesTheReferenceOnVulkan) {
  SKIP_WITHOUT_VULKAN();
  std::unique_ptr<Session> session;
  run_model_case("resnet50", kVulkanFirst, &session);
  ASSERT_TRUE(session);
  expect_on_vulkan(*session, {"FusedConv", "MaxPool"});
}

TEST(VulkanModels, MobileNetV2MatchesTheReferenceOnVulkan) {
  SKIP_WITHOUT_VULKAN();
  std::unique_ptr<Session> session;
  run_model_case("mobilenet_v2", kVulkanFirst, &session);
  ASSERT_TRUE(session);
  expect_on_vulkan(*session, {"FusedConv"});
}

TEST(VulkanModels, BertTinyMatchesTheReferenceOnVulkan) {
  SKIP_WITHOUT_VULKAN();
  std::unique_ptr<Session> session;
  run_model_case("bert_tiny", kVulkanFirst, &session);
  ASSERT_TRUE(session);
  expect_on_vulkan(*session, {"FusedMatMul", "LayerNormalization"});
}

// The LSTM has no Vulkan kernel: it runs on the CPU, the rest where it may.
TEST(VulkanModels, LstmMatchesTheReferenceWithTheCpuFallback) {
  SKIP_WITHOUT_VULKAN();
  std::unique_ptr<Session> session;
  run_model_case("lstm_bidirectional", kVulkanFirst, &session);
  ASSERT_TRUE(session);
  auto by_op = placement(*session);
  ASSERT_TRUE(by_op.count("LSTM"));
  EXPECT_EQ(by_op["LSTM"].count("vulkan"), 0u);
}

// Three Conv(+Relu)s, then Hardmax (which the Vulkan plugin lacks), then three more: the
// run splits into vulkan | cpu | vulkan and still matches the CPU backend alone. Each side
// has three nodes once the optimizer has fused the Relus, so neither is a small island.
TEST(VulkanModels, OneOpVulkanLacksSplitsTheModelInThreePartitions) {
  SKIP_WITHOUT_VULKAN();
  testing::OnnxModelWriter w;
  const int64_t c = 8, h = 12;
  w.input("x", {1, c, h, h});
  w.output("y", {1, c, h, h});
  std::vector<float> weights(c * c * 9), bias(c);
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = static_cast<float>(static_cast<int>((i * 37) % 17) - 8) / 40.0f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.05f * static_cast<float>(i) - 0.2f;
  std::string prev = "x";
  auto conv = [&](const std::string& name) {
    w.initializer(name + "_w", {c, c, 3, 3}, weights);
    w.initializer(name + "_b", {c}, bias);
    auto* n = w.node(name, "Conv", {prev, name + "_w", name + "_b"}, {name + "_out"});
    auto* pads = n->add_attribute();
    pads->set_name("pads");
    pads->set_type(::onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    prev = name + "_out";
  };
  auto relu = [&](const std::string& name) {
    w.node(name, "Relu", {prev}, {name + "_out"});
    prev = name + "_out";
  };
  conv("conv1"); relu("relu1"); conv("conv2"); relu("relu2"); conv("conv3");
  auto* hardmax = w.node("hardmax", "Hardmax", {prev}, {"hardmax_out"});
  testing::OnnxModelWriter::int_attr(hardmax, "axis", 1);
  prev = "hardmax_out";
  conv("conv4"); relu("relu4"); conv("conv5"); relu("relu5"); conv("conv6");
  w.node("relu6", "Relu", {prev}, {"y"});
  const std::string path =
      (std::filesystem::temp_directory_path() / "infer_vulkan_three_partitions.onnx").string();
  ASSERT_TRUE(w.save(path));

  std::vector<float> input(c * h * h);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<float>(static_cast<int>((i * 7919) % 201) - 100) / 100.0f;
  Result<Tensor> x_tensor =
      Tensor::from_bytes(DataType::kFloat32, {1, c, h, h}, input.data(), input.size() * 4);
  ASSERT_TRUE(x_tensor.is_ok());
  const NamedTensor x{"x", *x_tensor};

  // On lavapipe the CPU backend is faster than the Vulkan device, so the cost model would
  // rightly move both Vulkan regions to the CPU; this test is about priority placement.
  auto run_on = [&](const std::vector<std::string>& backends, std::unique_ptr<Session>* keep) {
    SessionOptions options;
    options.backends = backends;
    options.cost_model = false;
    options.plugin_dirs = {INFER_PLUGIN_DIR};
    Result<std::unique_ptr<Session>> s = Session::create(path, options);
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    if (!s.is_ok()) return std::vector<float>{};
    Result<std::vector<NamedTensor>> out = (*s)->run({x});
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    std::vector<float> y;
    if (out.is_ok()) {
      const Tensor& t = (*out)[0].tensor;
      y.assign(t.data_as<float>(), t.data_as<float>() + t.element_count());
    }
    *keep = std::move(*s);
    return y;
  };
  std::unique_ptr<Session> cpu, split;
  const std::vector<float> expected = run_on({"cpu"}, &cpu);
  const std::vector<float> actual = run_on(kVulkanFirst, &split);
  ASSERT_TRUE(split);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-4 + 1e-4 * std::abs(expected[i])) << "element " << i;

  const PlanReport& plan = split->plan();
  ASSERT_EQ(plan.partitions.size(), 3u) << plan.to_text();
  EXPECT_EQ(plan.partitions[0].backend, "vulkan");
  EXPECT_EQ(plan.partitions[1].backend, "cpu");
  EXPECT_EQ(plan.partitions[2].backend, "vulkan");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace infer::models_test
