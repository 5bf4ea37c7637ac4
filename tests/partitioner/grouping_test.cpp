// Grouping placed nodes into partitions: contiguity, acyclicity, inputs and outputs.
#include <gtest/gtest.h>

#include <random>

#include "partition_fixture.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::nodes_of;
using testing::TestGraph;
using testing::values_named;
using Names = std::vector<std::string>;

// Op types name the backend that runs them: "E*" on example, "C*" on cpu.
const std::set<std::string> kExampleOps = {"E"};
const std::set<std::string> kCpuOps = {"E", "C"};

PartitionPlan plan_for(TestGraph& t) {
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", kExampleOps), backend(t, "cpu", kCpuOps)};
  auto plan = partition(req);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  return plan.is_ok() ? *plan : PartitionPlan{};
}

TEST(Grouping, ChainSplitsIntoRunsOfOneBackend) {
  TestGraph t;
  t.input("x");
  t.node("n0", "E", {"x"}, {"v0"});
  t.node("n1", "E", {"v0"}, {"v1"});
  t.node("n2", "C", {"v1"}, {"v2"});
  t.node("n3", "C", {"v2"}, {"v3"});
  t.node("n4", "E", {"v3"}, {"y"});
  t.output("y");
  PartitionPlan plan = plan_for(t);
  ASSERT_EQ(plan.partitions.size(), 3u);
  EXPECT_EQ(nodes_of(t, plan.partitions[0]), Names({"n0", "n1"}));
  EXPECT_EQ(nodes_of(t, plan.partitions[1]), Names({"n2", "n3"}));
  EXPECT_EQ(nodes_of(t, plan.partitions[2]), Names({"n4"}));
  EXPECT_EQ(plan.partitions[0].name, "p0");
  EXPECT_EQ(plan.partitions[2].name, "p2");
  EXPECT_EQ(plan.partitions[0].backend, 0u);
  EXPECT_EQ(plan.partitions[1].backend, 1u);
  EXPECT_EQ(plan.partitions[2].backend, 0u);
  EXPECT_EQ(plan.partitions[1].depends_on, (std::vector<size_t>{0}));
  EXPECT_EQ(plan.partitions[2].depends_on, (std::vector<size_t>{1}));

  EXPECT_EQ(values_named(t, plan.partitions[0].inputs), Names({"x"}));
  EXPECT_EQ(values_named(t, plan.partitions[0].outputs), Names({"v1"}));
  EXPECT_EQ(values_named(t, plan.partitions[1].inputs), Names({"v1"}));
  EXPECT_EQ(values_named(t, plan.partitions[1].outputs), Names({"v3"}));
  EXPECT_EQ(values_named(t, plan.partitions[2].outputs), Names({"y"}));
  EXPECT_EQ(plan.partition_of_node, (std::vector<size_t>{0, 0, 1, 1, 2}));
}

// A diamond: a (example) feeds b (cpu) and c (example); d (example) reads b and c.
// Putting every example node in one partition would make {a,c,d} -> {b} -> {a,c,d}, a
// cycle. The partitions must be {a,c} -> {b} -> {d}.
TEST(Grouping, DiamondDoesNotCreateACycle) {
  TestGraph t;
  t.input("x");
  t.node("a", "E", {"x"}, {"va"});
  t.node("b", "C", {"va"}, {"vb"});
  t.node("c", "E", {"va"}, {"vc"});
  t.node("d", "E", {"vb", "vc"}, {"y"});
  t.output("y");
  PartitionPlan plan = plan_for(t);
  ASSERT_EQ(plan.partitions.size(), 3u);
  EXPECT_EQ(nodes_of(t, plan.partitions[0]), Names({"a", "c"}));
  EXPECT_EQ(nodes_of(t, plan.partitions[1]), Names({"b"}));
  EXPECT_EQ(nodes_of(t, plan.partitions[2]), Names({"d"}));
  EXPECT_EQ(plan.partitions[2].depends_on, (std::vector<size_t>{0, 1}));
  // va leaves p0 for b; vc leaves p0 for d; both are p0 outputs in production order.
  EXPECT_EQ(values_named(t, plan.partitions[0].outputs), Names({"va", "vc"}));
  EXPECT_EQ(values_named(t, plan.partitions[2].inputs), Names({"vb", "vc"}));
}

TEST(Grouping, IndependentBranchesOfOneBackendShareAPartition) {
  // e1 and e2 do not depend on the cpu node between them in the node order.
  TestGraph t;
  t.input("x");
  t.node("e1", "E", {"x"}, {"a"});
  t.node("c1", "C", {"x"}, {"b"});
  t.node("e2", "E", {"x"}, {"c"});
  t.node("c2", "C", {"a", "b", "c"}, {"y"});
  t.output("y");
  PartitionPlan plan = plan_for(t);
  ASSERT_EQ(plan.partitions.size(), 2u);
  EXPECT_EQ(nodes_of(t, plan.partitions[0]), Names({"e1", "e2"}));
  EXPECT_EQ(nodes_of(t, plan.partitions[1]), Names({"c1", "c2"}));
  EXPECT_TRUE(plan.partitions[0].depends_on.empty());
  EXPECT_EQ(plan.partitions[1].depends_on, (std::vector<size_t>{0}));
  EXPECT_EQ(values_named(t, plan.partitions[1].inputs), Names({"x", "a", "c"}));
}

TEST(Grouping, ConstantsAreNotPartitionInputsAndGraphOutputsAreOutputs) {
  TestGraph t;
  t.input("x");
  t.constant("w");
  t.node("mm", "E", {"x", "w"}, {"h"});
  t.node("act", "E", {"h"}, {"y"});
  t.output("h");
  t.output("y");
  PartitionPlan plan = plan_for(t);
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_EQ(values_named(t, plan.partitions[0].inputs), Names({"x"}));
  EXPECT_EQ(values_named(t, plan.partitions[0].outputs), Names({"h", "y"}));
}

TEST(Grouping, OmittedOptionalInputsAndOutputsAreSkipped) {
  TestGraph t;
  t.input("x");
  ir::NodeId n = t.node("e", "E", {"x"}, {"y"});
  t.g.node(n).inputs.push_back(ir::kNoValue);
  t.g.node(n).outputs.push_back(ir::kNoValue);
  t.output("y");
  PartitionPlan plan = plan_for(t);
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_EQ(values_named(t, plan.partitions[0].inputs), Names({"x"}));
  EXPECT_EQ(values_named(t, plan.partitions[0].outputs), Names({"y"}));
}

TEST(Grouping, SubgraphCapturesCountAsDependencies) {
  // "iff" (example) captures "vb" (made on cpu) inside its branch: it must come after the
  // cpu partition, not join the first example partition.
  TestGraph t;
  t.input("x");
  t.node("a", "E", {"x"}, {"va"});
  t.node("b", "C", {"va"}, {"vb"});
  ir::NodeId iff = t.node("iff", "E", {"x"}, {"y"});
  auto body = std::make_shared<ir::Graph>();
  ir::Value captured;
  captured.name = "vb";
  captured.outer_scope = true;
  body->add_value(captured);
  ir::Attribute attr;
  attr.name = "then_branch";
  attr.type = ir::AttrType::kGraph;
  attr.graphs.push_back(body);
  t.g.node(iff).attributes.push_back(attr);
  t.output("y");
  PartitionPlan plan = plan_for(t);
  ASSERT_EQ(plan.partitions.size(), 3u);
  EXPECT_EQ(nodes_of(t, plan.partitions[2]), Names({"iff"}));
  EXPECT_EQ(plan.partitions[2].depends_on, (std::vector<size_t>{1}));
}

TEST(Grouping, NonTopologicalGraphIsAnInternalError) {
  TestGraph t;
  t.input("x");
  t.node("late_reader", "E", {"v"}, {"y"});
  t.node("producer", "E", {"x"}, {"v"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", kCpuOps)};
  auto plan = partition(req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInternal);
  EXPECT_EQ(plan.status().message(),
            "partitioner: the graph is not topologically ordered: node 'late_reader' (E) reads "
            "'v', produced by a later node");
}

TEST(Grouping, EmptyGraphHasNoPartitions) {
  TestGraph t;
  t.input("x");
  t.output("x");
  PartitionPlan plan = plan_for(t);
  EXPECT_TRUE(plan.partitions.empty());
  EXPECT_TRUE(plan.copies.empty());
}

// Random DAGs with random placements over three backends: every node lands in exactly
// one partition of its own backend, partitions only read from earlier partitions (so the
// partition graph is acyclic), and no partition can be merged with the next one of its
// backend without breaking that rule.
TEST(Grouping, RandomGraphsAlwaysGiveAnAcyclicPartitionGraph) {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 200; ++trial) {
    TestGraph t;
    t.input("in");
    const int n = 1 + static_cast<int>(rng() % 25);
    std::vector<std::string> ops = {"A", "B", "C"};
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> inputs;
      const int fan_in = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < fan_in; ++k) {
        const int src = static_cast<int>(rng() % (i + 1)) - 1;  // -1: the graph input
        inputs.push_back(src < 0 ? "in" : "v" + std::to_string(src));
      }
      t.node("n" + std::to_string(i), ops[rng() % 3], inputs, {"v" + std::to_string(i)});
    }
    t.output("v" + std::to_string(n - 1));
    PartitionRequest req;
    req.graph = &t.g;
    req.backends = {backend(t, "a", {"A"}), backend(t, "b", {"B"}), backend(t, "c", {"C"})};
    auto plan = partition(req);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();

    std::vector<int> seen(t.g.node_count(), 0);
    for (size_t p = 0; p < plan->partitions.size(); ++p) {
      const Partition& part = plan->partitions[p];
      ASSERT_FALSE(part.nodes.empty());
      for (ir::NodeId id : part.nodes) {
        ++seen[id];
        EXPECT_EQ(plan->assignments[id].backend, part.backend);
        EXPECT_EQ(plan->partition_of_node[id], p);
        // Every producer a node reads from lives in this or an earlier partition.
        for (ir::ValueId v : t.g.node(id).inputs) {
          for (ir::NodeId q = 0; q < t.g.node_count(); ++q) {
            for (ir::ValueId o : t.g.node(q).outputs) {
              if (o == v) {
                EXPECT_LE(plan->partition_of_node[q], p);
              }
            }
          }
        }
      }
      for (size_t d : part.depends_on) EXPECT_LT(d, p);
    }
    for (int count : seen) EXPECT_EQ(count, 1);
  }
}

}  // namespace
}  // namespace infer::partitioner
