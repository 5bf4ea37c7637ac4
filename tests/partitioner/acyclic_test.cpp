// The partition graph stays acyclic whatever the passes do: a diamond whose naive
// grouping would close a cycle, a move that would isolate a node between partitions of
// another backend (refused, with the reason), the merge of partitions no third one
// separates, and random graphs with random costs.
#include <gtest/gtest.h>

#include <random>

#include "partition_fixture.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::nodes_of;
using testing::set_link;
using testing::set_time;
using testing::TestGraph;
using Names = std::vector<std::string>;

// a (E) feeds b (C, cpu only) and c (E); d (E) reads b and c. One partition for every E
// node would read from {b} and feed it: a cycle. d is a 1-node gpu island after b; it
// moves to cpu (one copy saved for 1 us more compute) and joins b, while a and c, much
// slower on cpu, stay.
TEST(Acyclic, DiamondMovesItsLastNodeWithoutClosingACycle) {
  TestGraph t;
  t.input("x");
  t.node("a", "E", {"x"}, {"va"});
  t.node("b", "C", {"va"}, {"vb"});
  t.node("c", "E", {"va"}, {"vc"});
  t.node("d", "E", {"vb", "vc"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", {"E", "C"})};
  set_link(req.backends[0], 1000, 10);
  testing::set_all_times(req.backends[0], 1);
  testing::set_all_times(req.backends[1], 100);
  set_time(req.backends[1], t, "b", 1);
  set_time(req.backends[1], t, "d", 2);
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->partitions.size(), 2u);
  EXPECT_EQ(nodes_of(t, plan->partitions[0]), Names({"a", "c"}));
  EXPECT_EQ(nodes_of(t, plan->partitions[1]), Names({"b", "d"}));
  EXPECT_EQ(plan->partitions[1].depends_on, (std::vector<size_t>{0}));
  // Before: vb up and y back (48 bytes, 2 copies); after: vc down (24 bytes, 1 copy).
  EXPECT_EQ(plan->assignments[t.id_of("d")].reason,
            "moved to cpu: gpu island of 1 node (E) under the minimum of 3; a 24 B transfer "
            "(10.0 us) costs more than the 1.0 us it saves on gpu");
  ASSERT_EQ(plan->copies.size(), 3u);  // x up, va and vc down
}

// cpu first. a and d (A) run on gpu only, r and s (C) on cpu only, b (B) on both, 4990 us
// faster on gpu. Moving b to gpu pays by the cost model, but b reads r (made on cpu from
// a) and s (cpu) reads b for d: on gpu, b could join neither a's partition nor d's.
TEST(Acyclic, MoveThatWouldIsolateANodeBetweenPartitionsIsRefusedWithTheReason) {
  TestGraph t;
  t.input("x");
  t.node("a", "A", {"x"}, {"va"});
  t.node("r", "C", {"va"}, {"vr"});
  t.node("b", "B", {"va", "vr"}, {"vb"});
  t.node("s", "C", {"vb"}, {"vs"});
  t.node("d", "A", {"vb", "vs"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", {"B", "C"}), backend(t, "gpu", {"A", "B"})};
  set_link(req.backends[1], 1000, 10);
  testing::set_all_times(req.backends[0], 1);
  testing::set_all_times(req.backends[1], 1);
  set_time(req.backends[0], t, "b", 5000);
  set_time(req.backends[1], t, "b", 10);
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& b = plan->assignments[t.id_of("b")];
  EXPECT_EQ(b.backend, 0u);
  // 4990 us of compute saved, one more copy (10.024 us).
  EXPECT_EQ(b.reason,
            "cpu: supported; kept: moving to gpu would save 4.98 ms, but joining gpu's "
            "partitions would create a cycle between partitions, so it would run in a "
            "partition of its own");
  ASSERT_EQ(plan->partitions.size(), 3u);
  EXPECT_EQ(nodes_of(t, plan->partitions[1]), Names({"r", "b", "s"}));
}

TEST(Acyclic, PartitionsOfOneBackendMergeWhenNoOtherPartitionSeparatesThem) {
  // The walk alone makes {a} {c} {m}: m reads c, made after a's partition. Nothing
  // leads from {a} to {m} through {c}, so {a} and {m} merge, after {c}.
  TestGraph t;
  t.input("x");
  t.node("a", "E", {"x"}, {"va"});
  t.node("c", "C", {"x"}, {"vc"});
  t.node("m", "E", {"va", "vc"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", {"E", "C"})};
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->partitions.size(), 2u);
  EXPECT_EQ(nodes_of(t, plan->partitions[0]), Names({"c"}));
  EXPECT_EQ(nodes_of(t, plan->partitions[1]), Names({"a", "m"}));
  EXPECT_EQ(plan->partitions[0].name, "p0");
  EXPECT_EQ(plan->partitions[1].depends_on, (std::vector<size_t>{0}));
  EXPECT_EQ(plan->partition_of_node, (std::vector<size_t>{1, 0, 1}));
  EXPECT_EQ(testing::values_named(t, plan->partitions[1].inputs), Names({"x", "vc"}));
}

// Random DAGs, random capabilities (cpu runs everything), random times, links, sizes,
// pins and budgets: every node lands on a backend that supports it (its pin's, when
// pinned), partitions only read from earlier partitions, each node is in exactly one,
// and a moved node says why.
TEST(Acyclic, RandomGraphsAndCostsAlwaysGiveAValidAcyclicPlan) {
  std::mt19937 rng(20240612);
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 150; ++trial) {
    TestGraph t;
    t.input("in");
    const int n = 1 + static_cast<int>(rng() % 20);
    const std::vector<std::string> ops = {"A", "B", "C", "D"};
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> inputs;
      const int fan_in = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < fan_in; ++k) {
        const int src = static_cast<int>(rng() % (i + 1)) - 1;
        inputs.push_back(src < 0 ? "in" : "v" + std::to_string(src));
      }
      const std::string out = "v" + std::to_string(i);
      t.node("n" + std::to_string(i), ops[rng() % ops.size()], inputs, {out});
      t.shape(out, {1 + static_cast<int64_t>(rng() % 64), 16});
    }
    t.output("v" + std::to_string(n - 1));
    PartitionRequest req;
    req.graph = &t.g;
    req.backends = {backend(t, "gpu", {"A", "B"}), backend(t, "npu", {"B", "C"}),
                    backend(t, "cpu", {"A", "B", "C", "D"})};
    for (size_t b = 0; b < 2; ++b) set_link(req.backends[b], uniform(100, 10000), uniform(0, 20));
    for (BackendCapabilities& b : req.backends)
      for (NodeCapability& c : b.nodes)
        if (c.supported()) c.est_time_us = uniform(0.5, 50);
    if (rng() % 3 == 0) req.backends[0].memory_budget_bytes = static_cast<int64_t>(rng() % 20000);
    std::vector<std::string> pinned(t.g.node_count());
    if (rng() % 2 == 0) {
      const ir::NodeId id = static_cast<ir::NodeId>(rng() % t.g.node_count());
      req.pins = {{t.g.node(id).name, "cpu"}};
      pinned[id] = "cpu";
    }
    req.options.min_island_nodes = 1 + rng() % 4;
    auto plan = partition(req);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();

    std::vector<int> seen(t.g.node_count(), 0);
    for (size_t p = 0; p < plan->partitions.size(); ++p) {
      const Partition& part = plan->partitions[p];
      ASSERT_FALSE(part.nodes.empty());
      EXPECT_EQ(part.name, "p" + std::to_string(p));
      for (ir::NodeId id : part.nodes) {
        ++seen[id];
        EXPECT_EQ(plan->assignments[id].backend, part.backend);
        EXPECT_EQ(plan->partition_of_node[id], p);
        for (ir::ValueId v : t.g.node(id).inputs)
          for (ir::NodeId q = 0; q < t.g.node_count(); ++q)
            for (ir::ValueId o : t.g.node(q).outputs)
              if (o == v) {
                EXPECT_LE(plan->partition_of_node[q], p);
              }
      }
      for (size_t d : part.depends_on) EXPECT_LT(d, p);
    }
    for (ir::NodeId id = 0; id < t.g.node_count(); ++id) {
      EXPECT_EQ(seen[id], 1);
      const NodeAssignment& a = plan->assignments[id];
      EXPECT_TRUE(req.backends[a.backend].nodes[id].supported());
      if (!pinned[id].empty()) {
        EXPECT_EQ(req.backends[a.backend].name, pinned[id]);
      }
      if (a.moved) {
        EXPECT_TRUE(a.reason.rfind("moved to ", 0) == 0 || a.reason.rfind("spilled to ", 0) == 0)
            << a.reason;
      }
    }
  }
}

}  // namespace
}  // namespace infer::partitioner
