// Small islands: a 1-node island of one backend between nodes of another moves to them
// when the copies it saves cost more than the compute it loses, and stays (saying why)
// otherwise. Pins never move. Numbers in the reasons are computed by hand from the
// links and the plugin estimates the tests set.
#include <gtest/gtest.h>

#include "partition_fixture.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::set_link;
using testing::set_time;
using testing::TestGraph;
using Names = std::vector<std::string>;

// x -> c1 (C) -> e1 (E) -> c2 (C) -> y. gpu runs E only, over a link of 1000 B/us and
// 10 us latency; cpu runs everything. Every tensor is [2,3] float32: 24 bytes, so one
// copy costs 10 + 24/1000 = 10.024 us.
struct GpuIslandBetweenCpuNodes {
  TestGraph t;
  PartitionRequest req;
  GpuIslandBetweenCpuNodes(double e1_on_gpu, double e1_on_cpu) {
    t.input("x");
    t.node("c1", "C", {"x"}, {"a"});
    t.node("e1", "E", {"a"}, {"b"});
    t.node("c2", "C", {"b"}, {"y"});
    t.output("y");
    req.graph = &t.g;
    req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", {"E", "C"})};
    set_link(req.backends[0], 1000, 10);
    set_time(req.backends[0], t, "e1", e1_on_gpu);
    testing::set_all_times(req.backends[1], 1);
    set_time(req.backends[1], t, "e1", e1_on_cpu);
  }
};

TEST(Islands, OneNodeAcceleratorIslandBetweenCpuNodesGoesToCpu) {
  GpuIslandBetweenCpuNodes f(/*e1_on_gpu=*/2, /*e1_on_cpu=*/5);
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& e1 = plan->assignments[f.t.id_of("e1")];
  EXPECT_EQ(e1.backend, 1u);
  EXPECT_TRUE(e1.moved);
  // Saved: a to gpu and b back, 2 x 10.024 us for 48 bytes; lost: 5 - 2 = 3 us.
  EXPECT_EQ(e1.reason,
            "moved to cpu: gpu island of 1 node (E) under the minimum of 3; a 48 B transfer "
            "(20.0 us) costs more than the 3.0 us it saves on gpu");
  EXPECT_EQ(e1.est_time_us, 5.0);
  ASSERT_EQ(plan->partitions.size(), 1u);
  EXPECT_TRUE(plan->copies.empty());
  EXPECT_EQ(plan->assignments[f.t.id_of("c1")].reason, "cpu: fallback (gpu: unsupported op C)");
}

TEST(Islands, IslandThatComputesMuchFasterWhereItIsStaysAndSaysWhy) {
  GpuIslandBetweenCpuNodes f(/*e1_on_gpu=*/2, /*e1_on_cpu=*/500);
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& e1 = plan->assignments[f.t.id_of("e1")];
  EXPECT_EQ(e1.backend, 0u);
  EXPECT_FALSE(e1.moved);
  EXPECT_EQ(e1.reason,
            "gpu: supported; kept: gpu island of 1 node (E) under the minimum of 3; moving to "
            "cpu saves a 48 B transfer (20.0 us) but costs 498.0 us more compute");
  ASSERT_EQ(plan->partitions.size(), 3u);
  ASSERT_EQ(plan->copies.size(), 2u);
  EXPECT_DOUBLE_EQ(plan->copies[0].est_time_us, 10.024);
  EXPECT_DOUBLE_EQ(plan->estimates.transfer_us, 20.048);
  EXPECT_EQ(plan->estimates.undecided, 0u);
}

TEST(Islands, OneNodeCpuIslandBetweenAcceleratorNodesJoinsThemWhenSupported) {
  // cpu comes first, but runs only M: g1 and g2 go to gpu, m to cpu, between them.
  TestGraph t;
  t.input("x");
  t.node("g1", "G", {"x"}, {"a"});
  t.node("m", "M", {"a"}, {"b"});
  t.node("g2", "G", {"b"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", {"M"}), backend(t, "gpu", {"G", "M"})};
  set_link(req.backends[1], 1000, 10);
  testing::set_all_times(req.backends[0], 1);
  testing::set_all_times(req.backends[1], 3);
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& m = plan->assignments[t.id_of("m")];
  EXPECT_EQ(m.backend, 1u);
  EXPECT_EQ(m.reason,
            "moved to gpu: cpu island of 1 node (M) under the minimum of 3; a 48 B transfer "
            "(20.0 us) costs more than the 2.0 us it saves on cpu");
  ASSERT_EQ(plan->partitions.size(), 1u);
  // Only the graph input in and the output back remain.
  ASSERT_EQ(plan->copies.size(), 2u);
  EXPECT_EQ(plan->copies[0].src_backend, kHost);
  EXPECT_EQ(plan->copies[1].dst_backend, kHost);

  // Unsupported on gpu: it stays, and no note claims a move was weighed.
  req.backends[1].nodes[t.id_of("m")] = NodeCapability{};
  plan = partition(req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[t.id_of("m")].backend, 0u);
  EXPECT_EQ(plan->assignments[t.id_of("m")].reason, "cpu: supported");
}

TEST(Islands, IslandsOfTheMinimumSizeAreNotMovedAsAWhole) {
  // gpu island of three E nodes between cpu nodes: each costs 3 us on gpu, 4 us on cpu.
  // As a whole, moving it would save two copies (20.048 us) for 3 us of compute; but it
  // is not small, and moving one node alone saves no copy.
  TestGraph t;
  t.input("x");
  t.node("c1", "C", {"x"}, {"a"});
  t.node("e1", "E", {"a"}, {"b"});
  t.node("e2", "E", {"b"}, {"c"});
  t.node("e3", "E", {"c"}, {"d"});
  t.node("c2", "C", {"d"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", {"E", "C"})};
  set_link(req.backends[0], 1000, 10);
  testing::set_all_times(req.backends[0], 3);
  testing::set_all_times(req.backends[1], 4);
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->partitions.size(), 3u);
  EXPECT_EQ(testing::nodes_of(t, plan->partitions[1]), Names({"e1", "e2", "e3"}));
  EXPECT_EQ(plan->assignments[t.id_of("e1")].reason,
            "gpu: supported; kept: moving to cpu costs 1.0 us more compute");
  EXPECT_EQ(plan->assignments[t.id_of("e2")].reason, "gpu: supported");

  // With a minimum of 4 the island is small, and moves.
  req.options.min_island_nodes = 4;
  plan = partition(req);
  ASSERT_TRUE(plan.is_ok());
  ASSERT_EQ(plan->partitions.size(), 1u);
  EXPECT_EQ(plan->assignments[t.id_of("e2")].reason,
            "moved to cpu: gpu island of 3 nodes (E, E, E) under the minimum of 4; a 48 B "
            "transfer (20.0 us) costs more than the 3.0 us it saves on gpu");
}

TEST(Islands, PinsStayEvenWhenTheCostModelDisagrees) {
  GpuIslandBetweenCpuNodes f(/*e1_on_gpu=*/2, /*e1_on_cpu=*/5);
  f.req.pins = {{"e1", "gpu"}};
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& e1 = plan->assignments[f.t.id_of("e1")];
  EXPECT_EQ(e1.backend, 0u);
  EXPECT_TRUE(e1.pinned);
  EXPECT_FALSE(e1.moved);
  EXPECT_EQ(e1.reason, "gpu: pinned by placement");
  EXPECT_EQ(plan->partitions.size(), 3u);

  // And the other way: pinned to cpu, though gpu would run it 5000 times faster.
  GpuIslandBetweenCpuNodes g(/*e1_on_gpu=*/1, /*e1_on_cpu=*/5000);
  g.req.pins = {{"e1", "cpu"}};
  plan = partition(g.req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[g.t.id_of("e1")].backend, 1u);
  EXPECT_EQ(plan->assignments[g.t.id_of("e1")].reason, "cpu: pinned by placement");
}

TEST(Islands, UnknownSizesLeaveThePriorityPlacementAndAreCounted) {
  GpuIslandBetweenCpuNodes f(/*e1_on_gpu=*/2, /*e1_on_cpu=*/5);
  for (const char* v : {"a", "b"})
    f.t.g.value(*f.t.g.find_value(v)).shape.dims->at(0) = ir::Dim::symbol("batch");
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].backend, 0u);
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].reason, "gpu: supported");
  EXPECT_EQ(plan->estimates.undecided, 1u);
  EXPECT_EQ(plan->estimates.copies_without_estimate, 2u);

  // Assuming a batch of 1 prices it: the same decision as with static shapes.
  f.req.options.assumed_symbolic_dim = 1;
  plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].backend, 1u);
  EXPECT_EQ(plan->estimates.undecided, 0u);

  // Without a link estimate nothing is priced either.
  f.req.options.assumed_symbolic_dim = 0;
  for (const char* v : {"a", "b"})
    f.t.g.value(*f.t.g.find_value(v)).shape.dims->at(0) = ir::Dim::known(2);
  f.req.backends[0].host_to_device.reset();
  plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].backend, 0u);
  EXPECT_EQ(plan->estimates.undecided, 1u);
}

TEST(Islands, CopiesMadeEitherWayNeedNoEstimate) {
  // A third backend, npu (no link estimate), also reads a. Its copy of a is made whether
  // e1 moves or not, so the decision does not need its cost.
  GpuIslandBetweenCpuNodes f(/*e1_on_gpu=*/2, /*e1_on_cpu=*/5);
  f.t.node("k", "N", {"a"}, {"z"});
  f.t.output("z");
  for (BackendCapabilities& b : f.req.backends) b.nodes.push_back(NodeCapability{});  // no
  BackendCapabilities npu = backend(f.t, "npu", {"N"}, /*host_addressable=*/false);
  f.req.backends.push_back(npu);
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].backend, 1u);
  EXPECT_EQ(plan->assignments[f.t.id_of("k")].backend, 2u);
  EXPECT_EQ(plan->estimates.copies_without_estimate, 2u);  // a up to npu, z back
}

TEST(Islands, CostModelOffKeepsThePriorityPlacement) {
  GpuIslandBetweenCpuNodes f(/*e1_on_gpu=*/2, /*e1_on_cpu=*/5);
  f.req.options.cost_model = false;
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].backend, 0u);
  EXPECT_EQ(plan->assignments[f.t.id_of("e1")].reason, "gpu: supported");
  EXPECT_EQ(plan->partitions.size(), 3u);
}

}  // namespace
}  // namespace infer::partitioner
