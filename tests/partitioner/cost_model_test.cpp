// The cost model: the work estimate of the heavy ops (FLOPs counted by hand), the default
// time over a throughput, plugin estimates first, and copy times over the links.
#include <gtest/gtest.h>

#include "partition_fixture.hpp"
#include "partitioner/cost_model.hpp"
#include "partitioner/op_work.hpp"
#include "partitioner/units.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::TestGraph;

ir::Attribute int_attr(const std::string& name, int64_t v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kInt;
  a.i = v;
  return a;
}

TEST(OpWork, ConvCountsTwoFlopsPerMultiplyAddOverTheKernel) {
  // X [1,3,8,8] * W [16,3,3,3] -> Y [1,16,6,6]: 576 outputs, 27 multiply-adds each.
  TestGraph t;
  t.shape("x", {1, 3, 8, 8});
  t.constant("w", {16, 3, 3, 3});
  t.shape("y", {1, 16, 6, 6});
  ir::NodeId conv = t.node("conv", "Conv", {"x", "w"}, {"y"});
  const OpWork w = estimate_work(t.g, t.g.node(conv), 0);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 576 * 27);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (192 + 432 + 576));

  // The fused form counts the same, and a throughput of 1000 FLOP/us and 100 B/us is
  // bound by its 4800 bytes: 48 us, plus a 2 us launch.
  t.g.node(conv).op_type = "FusedConv";
  t.g.node(conv).domain = "ai.infer";
  const OpWork fused = estimate_work(t.g, t.g.node(conv), 0);
  EXPECT_DOUBLE_EQ(fused.flops, 31104.0);
  EXPECT_DOUBLE_EQ(default_time_us(fused, Throughput{1000, 100, 2}), 50.0);
  // With ten times the bandwidth it is bound by its FLOPs: 31.104 + 2.
  EXPECT_DOUBLE_EQ(default_time_us(fused, Throughput{1000, 1000, 2}), 33.104);
}

TEST(OpWork, MatMulGemmAndAttention) {
  TestGraph t;
  t.shape("a", {2, 3, 4});
  t.shape("b", {4, 5});
  t.shape("y", {2, 3, 5});
  ir::NodeId mm = t.node("mm", "MatMul", {"a", "b"}, {"y"});
  EXPECT_DOUBLE_EQ(estimate_work(t.g, t.g.node(mm), 0).flops, 2.0 * 30 * 4);

  // Gemm with transA: A is [K=4, M=3].
  t.shape("ga", {4, 3});
  t.shape("gb", {4, 5});
  t.shape("gy", {3, 5});
  ir::NodeId gemm = t.node("gemm", "Gemm", {"ga", "gb"}, {"gy"});
  t.g.node(gemm).attributes.push_back(int_attr("transA", 1));
  EXPECT_DOUBLE_EQ(estimate_work(t.g, t.g.node(gemm), 0).flops, 2.0 * 15 * 4);

  // Attention, B=2, Sq=4, Sk=6, H*D=8, 2 heads: two products of 2*2*4*6*8 and a softmax
  // of 5 per score (2*2*4*6 scores).
  t.shape("q", {2, 4, 8});
  t.shape("k", {2, 6, 8});
  t.shape("v", {2, 6, 8});
  t.shape("att", {2, 4, 8});
  ir::NodeId att = t.node("att", "Attention", {"q", "k", "v"}, {"att"}, "ai.infer");
  t.g.node(att).attributes.push_back(int_attr("num_heads", 2));
  EXPECT_DOUBLE_EQ(estimate_work(t.g, t.g.node(att), 0).flops, 768.0 + 768.0 + 480.0);

  // Anything else: one operation per output element, and its bytes.
  ir::NodeId relu = t.node("relu", "Relu", {"y"}, {"r"});
  t.shape("r", {2, 3, 5});
  const OpWork w = estimate_work(t.g, t.g.node(relu), 0);
  EXPECT_DOUBLE_EQ(w.flops, 30.0);
  EXPECT_DOUBLE_EQ(w.bytes, 240.0);
}

TEST(OpWork, SymbolicDimsAreUnknownUnlessASizeIsAssumed) {
  TestGraph t;
  t.input("x");
  ir::NodeId relu = t.node("relu", "Relu", {"x"}, {"y"});
  t.g.value(*t.g.find_value("x")).shape.dims->at(0) = ir::Dim::symbol("batch");
  t.g.value(*t.g.find_value("y")).shape.dims->at(0) = ir::Dim::symbol("batch");
  EXPECT_FALSE(estimate_work(t.g, t.g.node(relu), 0).known());
  EXPECT_EQ(value_bytes(t.g.value(*t.g.find_value("x")), 0), -1);
  EXPECT_LT(default_time_us(estimate_work(t.g, t.g.node(relu), 0), kCpuThroughput), 0);
  // batch = 4: [4,3] in and out.
  EXPECT_EQ(value_bytes(t.g.value(*t.g.find_value("x")), 4), 48);
  const OpWork w = estimate_work(t.g, t.g.node(relu), 4);
  EXPECT_DOUBLE_EQ(w.flops, 12.0);
  EXPECT_DOUBLE_EQ(w.bytes, 96.0);
}

// x -> e (E) -> c (C) -> y; "gpu" runs E and is not host-addressable.
struct Fixture {
  TestGraph t;
  PartitionRequest req;
  Fixture() {
    t.input("x");
    t.node("e", "E", {"x"}, {"a"});
    t.node("c", "C", {"a"}, {"y"});
    t.output("y");
    req.graph = &t.g;
    req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", {"E", "C"})};
    testing::set_link(req.backends[0], 1000, 10);
  }
};

TEST(CostModel, PluginEstimatesComeFirstThenTheThroughputDefault) {
  Fixture f;
  f.req.backends[1].throughput = Throughput{10, 10, 1};
  testing::set_time(f.req.backends[0], f.t, "e", 7.5);
  const CostModel cost(f.req);
  EXPECT_DOUBLE_EQ(cost.node_time_us(0, 0), 7.5);
  // On cpu, e has no estimate: Relu-like work over [2,3]: 6 flops, 48 bytes -> 1 + 4.8.
  EXPECT_DOUBLE_EQ(cost.node_time_us(0, 1), 5.8);
  // gpu has no throughput and no estimate for c (it does not support it either).
  EXPECT_LT(cost.node_time_us(1, 0), 0);
}

TEST(CostModel, CopiesCostNothingBetweenHostAddressableBackendsAndTheLinkOtherwise) {
  Fixture f;
  BackendCapabilities other = backend(f.t, "npu", {"E"});
  testing::set_link(other, 500, 4);
  f.req.backends.push_back(other);
  const CostModel cost(f.req);
  EXPECT_EQ(cost.copy_time_us(kHost, 1, 1000), 0.0);  // host to cpu
  EXPECT_EQ(cost.copy_time_us(1, kHost, -1), 0.0);    // size unknown, but free anyway
  EXPECT_DOUBLE_EQ(cost.copy_time_us(kHost, 0, 2000), 12.0);  // 10 + 2000/1000
  EXPECT_DOUBLE_EQ(cost.copy_time_us(0, 1, 2000), 12.0);
  // Between two devices through the host: out of gpu, into npu (4 + 2000/500).
  EXPECT_DOUBLE_EQ(cost.copy_time_us(0, 2, 2000), 12.0 + 8.0);
  EXPECT_LT(cost.copy_time_us(kHost, 0, -1), 0);  // size unknown
  f.req.backends[0].device_to_host.reset();
  const CostModel no_link(f.req);
  EXPECT_LT(no_link.copy_time_us(0, 1, 2000), 0);
  EXPECT_DOUBLE_EQ(no_link.copy_time_us(1, 0, 2000), 12.0);
}

TEST(Units, BytesAndTimesReadShortWithAUnit) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(3 * 1048576 + 104858), "3.1 MiB");
  EXPECT_EQ(format_bytes(int64_t{5} << 30), "5.0 GiB");
  EXPECT_EQ(format_time_us(20.048), "20.0 us");
  EXPECT_EQ(format_time_us(999.94), "999.9 us");
  EXPECT_EQ(format_time_us(1250), "1.25 ms");
}

}  // namespace
}  // namespace infer::partitioner
