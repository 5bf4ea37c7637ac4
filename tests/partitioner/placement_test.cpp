// Placement: which backend each node goes to, the reasons --explain shows, pins, and
// the errors for nodes nobody can run.
#include <gtest/gtest.h>

#include "partition_fixture.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::TestGraph;

// x -> conv(Conv) -> relu(Relu) -> sm(Softmax) -> y
TestGraph small_net() {
  TestGraph t;
  t.input("x");
  t.node("conv", "Conv", {"x"}, {"a"});
  t.node("relu", "Relu", {"a"}, {"b"});
  t.node("sm", "Softmax", {"b"}, {"y"});
  t.output("y");
  return t;
}

const std::set<std::string> kAllOps = {"Conv", "Relu", "Softmax"};

TEST(Placement, FirstBackendInPriorityOrderWins) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", {"Relu", "Conv"}), backend(t, "cpu", kAllOps)};
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->backends, (std::vector<std::string>{"example", "cpu"}));
  EXPECT_EQ(plan->assignments[t.id_of("conv")].backend, 0u);
  EXPECT_EQ(plan->assignments[t.id_of("relu")].backend, 0u);
  EXPECT_EQ(plan->assignments[t.id_of("sm")].backend, 1u);
  EXPECT_EQ(plan->assignments[t.id_of("conv")].reason, "example: supported");
  EXPECT_EQ(plan->assignments[t.id_of("sm")].reason,
            "cpu: fallback (example: unsupported op Softmax)");

  // Reversed priority: cpu claims everything.
  req.backends = {backend(t, "cpu", kAllOps), backend(t, "example", {"Relu", "Conv"})};
  plan = partition(req);
  ASSERT_TRUE(plan.is_ok());
  for (const NodeAssignment& a : plan->assignments) {
    EXPECT_EQ(a.backend, 0u);
    EXPECT_EQ(a.reason, "cpu: supported");
  }
}

TEST(Placement, ReasonsCarryPluginNotesPreferenceAndEveryRefusal) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  BackendCapabilities a = backend(t, "a", {});
  a.nodes[t.id_of("sm")].reason = "";  // a refusal without a reason
  BackendCapabilities b = backend(t, "b", {"Conv"});
  b.nodes[t.id_of("conv")].support = Support::kPreferred;
  b.nodes[t.id_of("conv")].reason = "winograd 3x3";
  BackendCapabilities cpu = backend(t, "cpu", kAllOps);
  cpu.implicit_fallback = true;
  req.backends = {a, b, cpu};
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->assignments[t.id_of("conv")].reason, "b: fallback (a: unsupported op Conv)");
  EXPECT_EQ(plan->assignments[t.id_of("sm")].reason,
            "cpu: fallback (a: not supported; b: unsupported op Softmax)");

  req.backends = {b, cpu};
  plan = partition(req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[t.id_of("conv")].reason, "b: preferred (winograd 3x3)");
}

TEST(Placement, NodeThatNoBackendSupportsIsAnErrorNamingEachReason) {
  TestGraph t;
  t.input("x");
  t.node("ok", "Relu", {"x"}, {"a"});
  t.node("x", "Foo", {"a"}, {"y"}, "com.acme");
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", {"Relu"}, true, "no kernel for "),
                  backend(t, "example", {"Relu"})};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(plan.status().message(),
            "node 'x' (Foo, domain 'com.acme'): no backend supports it (cpu: no kernel for Foo; "
            "example: unsupported op Foo)");
}

TEST(Placement, EveryUnsupportedNodeIsListedInOneMessage) {
  TestGraph t;
  t.input("x");
  t.node("f1", "Foo", {"x"}, {"a"}, "com.acme");
  t.node("r", "Relu", {"a"}, {"b"});
  t.node("f2", "Bar", {"b"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", {"Relu"})};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().message(),
            "node 'f1' (Foo, domain 'com.acme'): no backend supports it (cpu: unsupported op Foo)\n"
            "node 'f2' (Bar, domain 'ai.onnx'): no backend supports it (cpu: unsupported op Bar)");
}

TEST(Placement, StrictModeListsEveryUnclaimedNodeWithEachBackendsReason) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.strict = true;
  req.backends = {backend(t, "example", {"Relu"}), backend(t, "vulkan", {})};
  req.backends[1].nodes[t.id_of("conv")].reason = "no Vulkan driver";
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(plan.status().message(),
            "strict mode: 2 nodes are not supported by any listed backend (example, vulkan):\n"
            "  node 'conv' (Conv, domain 'ai.onnx'): example: unsupported op Conv; vulkan: no "
            "Vulkan driver\n"
            "  node 'sm' (Softmax, domain 'ai.onnx'): example: unsupported op Softmax; vulkan: "
            "unsupported op Softmax");

  // The same request succeeds once a listed backend covers the nodes.
  req.backends.push_back(backend(t, "cpu", kAllOps));
  auto ok = partition(req);
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->assignments[t.id_of("conv")].backend, 2u);
}

TEST(Placement, PinsOverridePriority) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", {"Relu", "Conv"}), backend(t, "cpu", kAllOps)};
  req.pins = {{"relu", "cpu"}};
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->assignments[t.id_of("conv")].backend, 0u);
  EXPECT_EQ(plan->assignments[t.id_of("relu")].backend, 1u);
  EXPECT_TRUE(plan->assignments[t.id_of("relu")].pinned);
  EXPECT_EQ(plan->assignments[t.id_of("relu")].reason, "cpu: pinned by placement");
  EXPECT_FALSE(plan->assignments[t.id_of("conv")].pinned);
}

TEST(Placement, PinToAnUnknownNodeNamesNodeAndBackend) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", kAllOps)};
  req.pins = {{"conv9", "cpu"}};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(),
            "placement pin: node 'conv9' (pinned to backend 'cpu') is not in the model");
}

TEST(Placement, PinToABackendThatIsNotEnabledNamesBoth) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", {"Relu"}), backend(t, "cpu", kAllOps)};
  req.pins = {{"conv", "vulkan"}};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(),
            "placement pin: node 'conv' is pinned to backend 'vulkan', which is not enabled "
            "(enabled backends: example, cpu)");
}

TEST(Placement, PinToABackendThatRefusesTheNodeNamesBothAndTheReason) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", {"Relu"}), backend(t, "cpu", kAllOps)};
  req.pins = {{"conv", "example"}, {"sm", "example"}};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().message(),
            "placement pin: node 'conv' (Conv) is pinned to backend 'example', which does not "
            "support it: unsupported op Conv\n"
            "placement pin: node 'sm' (Softmax) is pinned to backend 'example', which does not "
            "support it: unsupported op Softmax");
}

TEST(Placement, ConflictingPinsForOneNodeAreAnError) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", {"Relu"}), backend(t, "cpu", kAllOps)};
  req.pins = {{"relu", "example"}, {"relu", "example"}, {"relu", "cpu"}};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().message(),
            "placement pin: node 'relu' is pinned twice, to 'example' and to 'cpu'");
}

TEST(Placement, MalformedCapabilityTablesAreInternalErrors) {
  TestGraph t = small_net();
  PartitionRequest req;
  req.graph = &t.g;
  BackendCapabilities cpu = backend(t, "cpu", kAllOps);
  cpu.nodes.pop_back();
  req.backends = {cpu};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInternal);
  EXPECT_EQ(plan.status().message(),
            "partitioner: backend 'cpu' has 2 capability answers for 3 nodes");
}

}  // namespace
}  // namespace infer::partitioner
