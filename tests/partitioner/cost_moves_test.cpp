// Boundary moves (region growth): a node next to another backend moves there alone when
// the compute it saves exceeds the transfer it adds - both ways - and a node whose move
// would add a big transfer for little compute stays put.
#include <gtest/gtest.h>

#include "partition_fixture.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::set_link;
using testing::set_time;
using testing::TestGraph;

// x -> e1 -> e2 -> e3 (E, on gpu) -> c1 (C, cpu only) -> y. e2 makes a 1 MiB tensor
// ([256,1024] float32) that e3 reduces to [2,3] (24 bytes): a boundary at e3 copies 24
// bytes, one before e3 copies 1 MiB. Link: 1000 B/us, 10 us latency.
struct ReductionAtTheBoundary {
  TestGraph t;
  PartitionRequest req;
  ReductionAtTheBoundary(double e3_on_gpu, double e3_on_cpu) {
    t.input("x");
    t.node("e1", "E", {"x"}, {"v1"});
    t.node("e2", "E", {"v1"}, {"v2"});
    t.node("e3", "E", {"v2"}, {"v3"});
    t.node("c1", "C", {"v3"}, {"y"});
    t.output("y");
    t.shape("v2", {256, 1024});
    req.graph = &t.g;
    req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", {"E", "C"})};
    set_link(req.backends[0], 1000, 10);
    testing::set_all_times(req.backends[0], 1);
    testing::set_all_times(req.backends[1], 2000);
    set_time(req.backends[0], t, "e3", e3_on_gpu);
    set_time(req.backends[1], t, "e3", e3_on_cpu);
  }
};

TEST(CostMoves, CheapNodeWhoseMoveAddsABigTransferStaysPut) {
  // Moving e3 to cpu saves 60 - 10 = 50 us of compute but copies v2 (1048576 bytes,
  // 10 + 1048.576 us) instead of v3 (24 bytes, 10.024 us): 1048.552 us more.
  ReductionAtTheBoundary f(/*e3_on_gpu=*/60, /*e3_on_cpu=*/10);
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& e3 = plan->assignments[f.t.id_of("e3")];
  EXPECT_EQ(e3.backend, 0u);
  EXPECT_EQ(e3.reason,
            "gpu: supported; kept: moving to cpu saves 50.0 us but adds a 1024.0 KiB transfer "
            "(1.05 ms)");
  ASSERT_EQ(plan->copies.size(), 2u);  // x up, v3 down
  EXPECT_EQ(f.t.value_name(plan->copies[1].value), "v3");
}

TEST(CostMoves, ExpensiveNodeMovesWhereItRunsFaster) {
  // Now e3 takes 2000 us on gpu (emulated, say) and 10 us on cpu: 1990 us saved, more
  // than the 1048.552 us the bigger copy adds.
  ReductionAtTheBoundary f(/*e3_on_gpu=*/2000, /*e3_on_cpu=*/10);
  auto plan = partition(f.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& e3 = plan->assignments[f.t.id_of("e3")];
  EXPECT_EQ(e3.backend, 1u);
  EXPECT_TRUE(e3.moved);
  EXPECT_EQ(e3.reason,
            "moved to cpu: it saves 1.99 ms of compute, more than the 1024.0 KiB transfer "
            "(1.05 ms) it adds");
  // e1 and e2 are now a 2-node gpu island; on cpu they would cost 2000 us each, far more
  // than the copies of x (24 bytes) and v2 (1 MiB) it would save: 10.024 + 1058.576 us.
  EXPECT_EQ(plan->assignments[f.t.id_of("e2")].backend, 0u);
  EXPECT_EQ(plan->assignments[f.t.id_of("e2")].reason,
            "gpu: supported; kept: gpu island of 2 nodes (E, E) under the minimum of 3; moving "
            "to cpu saves a 1.0 MiB transfer (1.07 ms) but costs 4.00 ms more compute");
  ASSERT_EQ(plan->copies.size(), 2u);  // x up, v2 down
  EXPECT_EQ(f.t.value_name(plan->copies[1].value), "v2");
  EXPECT_EQ(plan->copies[1].bytes, 1048576);
}

TEST(CostMoves, AcceleratorRegionGrowsOverANodeThatShrinksWhatCrosses) {
  // cpu comes first; g1..g3 (G) run on gpu only; p (P, a pooling from [256,1024] to
  // [2,3]) and m1, m2 (M) run on both, in 5 us (p: 4 us on gpu). Moving p into the gpu
  // region makes the boundary copy 24 bytes instead of 1 MiB. Moving m1 after it would
  // save nothing: same copy size, same time.
  TestGraph t;
  t.input("x");
  t.node("g1", "G", {"x"}, {"a"});
  t.node("g2", "G", {"a"}, {"b"});
  t.node("g3", "G", {"b"}, {"c"});
  t.node("p", "P", {"c"}, {"d"});
  t.node("m1", "M", {"d"}, {"e"});
  t.node("m2", "M", {"e"}, {"y"});
  t.output("y");
  t.shape("c", {256, 1024});
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", {"P", "M"}), backend(t, "gpu", {"G", "P", "M"})};
  set_link(req.backends[1], 1000, 10);
  testing::set_all_times(req.backends[0], 5);
  testing::set_all_times(req.backends[1], 5);
  set_time(req.backends[1], t, "p", 4);
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeAssignment& p = plan->assignments[t.id_of("p")];
  EXPECT_EQ(p.backend, 1u);
  // Before: c down (10 + 1048.576 us); after: d down (10.024 us); and 1 us less compute.
  EXPECT_EQ(p.reason, "moved to gpu: it saves a 1024.0 KiB transfer (1.05 ms) and 1.0 us of compute");
  EXPECT_EQ(plan->assignments[t.id_of("m1")].backend, 0u);
  // m1 and m2 are a 2-node cpu island now; on gpu they would copy y back instead of d
  // down (24 bytes either way) in the same time.
  EXPECT_EQ(plan->assignments[t.id_of("m1")].reason,
            "cpu: supported; kept: cpu island of 2 nodes (M, M) under the minimum of 3; moving "
            "to gpu saves nothing");
  ASSERT_EQ(plan->partitions.size(), 2u);
  EXPECT_EQ(testing::nodes_of(t, plan->partitions[0]),
            (std::vector<std::string>{"g1", "g2", "g3", "p"}));
}

TEST(CostMoves, MovesUnderTheMinimumGainAreNotMade) {
  // Moving p saves exactly 0.5 us of compute and no transfer; the default minimum gain
  // is 1 us.
  TestGraph t;
  t.input("x");
  t.node("g1", "G", {"x"}, {"a"});
  t.node("p", "P", {"a"}, {"b"});
  t.node("m1", "M", {"b"}, {"c"});
  t.node("m2", "M", {"c"}, {"d"});
  t.node("m3", "M", {"d"}, {"y"});
  t.output("y");
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "cpu", {"P", "M"}), backend(t, "gpu", {"G", "P"})};
  set_link(req.backends[1], 1000, 10);
  testing::set_all_times(req.backends[0], 5);
  testing::set_all_times(req.backends[1], 4.5);
  auto plan = partition(req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->assignments[t.id_of("p")].backend, 0u);
  EXPECT_EQ(plan->assignments[t.id_of("p")].reason,
            "cpu: supported; kept: moving to gpu saves only 0.5 us, under the 1.0 us a move "
            "must save");
  req.options.min_gain_us = 0.25;
  plan = partition(req);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->assignments[t.id_of("p")].backend, 1u);
  EXPECT_EQ(plan->assignments[t.id_of("p")].reason, "moved to gpu: it saves 0.5 us of compute");
}

}  // namespace
}  // namespace infer::partitioner
