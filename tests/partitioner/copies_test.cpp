// Copy edges: between partitions of different backends, and from/to the host for
// backends whose memory the host cannot address.
#include <gtest/gtest.h>

#include "partition_fixture.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::TestGraph;

PartitionPlan plan_for(TestGraph& t, bool example_host_addressable) {
  PartitionRequest req;
  req.graph = &t.g;
  req.backends = {backend(t, "example", {"E"}, example_host_addressable),
                  backend(t, "cpu", {"E", "C"})};
  auto plan = partition(req);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  return plan.is_ok() ? *plan : PartitionPlan{};
}

// x -> e1(example) -> c1(cpu) -> e2(example) -> y, with x [2,3] float32 (24 bytes).
TestGraph ping_pong() {
  TestGraph t;
  t.input("x");
  t.node("e1", "E", {"x"}, {"a"});
  t.node("c1", "C", {"a"}, {"b"});
  t.node("e2", "E", {"b"}, {"y"});
  t.output("y");
  return t;
}

TEST(Copies, BetweenPartitionsOnDifferentBackends) {
  TestGraph t = ping_pong();
  PartitionPlan plan = plan_for(t, /*example_host_addressable=*/true);
  ASSERT_EQ(plan.partitions.size(), 3u);
  ASSERT_EQ(plan.copies.size(), 2u);
  const CopyEdge& first = plan.copies[0];
  EXPECT_EQ(t.value_name(first.value), "a");
  EXPECT_EQ(first.src_partition, 0u);
  EXPECT_EQ(first.src_backend, 0u);
  EXPECT_EQ(first.dst_backend, 1u);
  EXPECT_EQ(first.dst_partitions, (std::vector<size_t>{1}));
  EXPECT_EQ(first.bytes, 24);
  const CopyEdge& second = plan.copies[1];
  EXPECT_EQ(t.value_name(second.value), "b");
  EXPECT_EQ(second.src_partition, 1u);
  EXPECT_EQ(second.src_backend, 1u);
  EXPECT_EQ(second.dst_backend, 0u);
}

TEST(Copies, NonHostAddressableBackendGetsInputsFromAndOutputsToTheHost) {
  TestGraph t = ping_pong();
  PartitionPlan plan = plan_for(t, /*example_host_addressable=*/false);
  ASSERT_EQ(plan.copies.size(), 4u);
  // In partition order: x to example (for p0), a to cpu (p1), b to example (p2), then
  // the graph output y back to the host.
  EXPECT_EQ(t.value_name(plan.copies[0].value), "x");
  EXPECT_EQ(plan.copies[0].src_partition, kHost);
  EXPECT_EQ(plan.copies[0].src_backend, kHost);
  EXPECT_EQ(plan.copies[0].dst_backend, 0u);
  EXPECT_EQ(plan.copies[0].dst_partitions, (std::vector<size_t>{0}));
  EXPECT_EQ(t.value_name(plan.copies[1].value), "a");
  EXPECT_EQ(t.value_name(plan.copies[2].value), "b");
  EXPECT_EQ(t.value_name(plan.copies[3].value), "y");
  EXPECT_EQ(plan.copies[3].src_partition, 2u);
  EXPECT_EQ(plan.copies[3].src_backend, 0u);
  EXPECT_EQ(plan.copies[3].dst_backend, kHost);
  EXPECT_TRUE(plan.copies[3].dst_partitions.empty());
}

TEST(Copies, HostAddressableBackendsNeedNoCopiesForGraphInputsAndOutputs) {
  TestGraph t;
  t.input("x");
  t.node("c1", "C", {"x"}, {"y"});
  t.output("y");
  PartitionPlan plan = plan_for(t, false);
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_TRUE(plan.copies.empty());
}

TEST(Copies, OneCopyPerValueAndDestinationBackend) {
  // "a" is read by two cpu partitions (split by an example node between them) and by
  // the host as a graph output: one copy to cpu shared by both, one to the host.
  TestGraph t;
  t.input("x");
  t.node("e1", "E", {"x"}, {"a"});
  t.node("c1", "C", {"a"}, {"b"});
  t.node("e2", "E", {"b"}, {"c"});
  t.node("c2", "C", {"a", "c"}, {"y"});
  t.output("y");
  t.output("a");
  PartitionPlan plan = plan_for(t, false);
  ASSERT_EQ(plan.partitions.size(), 4u);
  std::vector<const CopyEdge*> of_a;
  for (const CopyEdge& e : plan.copies)
    if (t.value_name(e.value) == "a") of_a.push_back(&e);
  ASSERT_EQ(of_a.size(), 2u);
  EXPECT_EQ(of_a[0]->dst_backend, 1u);
  EXPECT_EQ(of_a[0]->dst_partitions, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(of_a[1]->dst_backend, kHost);
}

TEST(Copies, GraphInputReadByTwoDevicePartitionsIsCopiedOnce) {
  TestGraph t;
  t.input("x");
  t.node("e1", "E", {"x"}, {"a"});
  t.node("c1", "C", {"a"}, {"b"});
  t.node("e2", "E", {"x", "b"}, {"y"});
  t.output("y");
  PartitionPlan plan = plan_for(t, false);
  ASSERT_EQ(plan.partitions.size(), 3u);
  ASSERT_FALSE(plan.copies.empty());
  EXPECT_EQ(t.value_name(plan.copies[0].value), "x");
  EXPECT_EQ(plan.copies[0].dst_partitions, (std::vector<size_t>{0, 2}));
  int copies_of_x = 0;
  for (const CopyEdge& e : plan.copies) copies_of_x += t.value_name(e.value) == "x";
  EXPECT_EQ(copies_of_x, 1);
}

TEST(Copies, BytesAreUnknownForSymbolicShapes) {
  TestGraph t;
  t.input("x");
  t.node("e1", "E", {"x"}, {"a"});
  t.node("c1", "C", {"a"}, {"y"});
  t.output("y");
  t.g.value(*t.g.find_value("a")).shape.dims->at(0) = ir::Dim::symbol("batch");
  PartitionPlan plan = plan_for(t, true);
  ASSERT_EQ(plan.copies.size(), 1u);
  EXPECT_EQ(plan.copies[0].bytes, -1);

  t.g.value(*t.g.find_value("a")).shape.dims.reset();  // unknown rank
  plan = plan_for(t, true);
  ASSERT_EQ(plan.copies.size(), 1u);
  EXPECT_EQ(plan.copies[0].bytes, -1);
}

TEST(Copies, GraphInputReturnedAsOutputNeedsNoCopy) {
  TestGraph t;
  t.input("x");
  t.node("e1", "E", {"x"}, {"y"});
  t.output("y");
  t.output("x");
  PartitionPlan plan = plan_for(t, false);
  ASSERT_EQ(plan.copies.size(), 2u);  // x to example, y back to the host
  EXPECT_EQ(plan.copies[0].dst_backend, 0u);
  EXPECT_EQ(plan.copies[1].dst_backend, kHost);
}

}  // namespace
}  // namespace infer::partitioner
