// The step graph the scheduler runs: copy modes, and which edges are released as soon as
// the predecessor is enqueued (same device, ordered by a stream wait) versus when it
// completes (the host must see the data first).
#include <gtest/gtest.h>

#include <set>

#include "partitioner/partitioner.hpp"
#include "runtime/step_graph_builder.hpp"

namespace infer::runtime {
namespace {

using Steps = std::vector<size_t>;

class StepGraphTest : public ::testing::Test {
 protected:
  ir::ValueId value(const std::string& name) {
    if (auto id = g.find_value(name)) return *id;
    ir::Value v;
    v.name = name;
    v.dtype = DataType::kFloat32;
    v.shape = ir::Shape::of({2});
    return g.add_value(std::move(v));
  }
  void node(const std::string& name, const std::string& op, std::vector<std::string> in,
            std::vector<std::string> out) {
    ir::Node n;
    n.name = name;
    n.op_type = op;
    for (auto& s : in) n.inputs.push_back(value(s));
    for (auto& s : out) n.outputs.push_back(value(s));
    g.add_node(std::move(n));
  }

  // Backend i runs the op types in ops[i]; mappable[i] says whether the host can map
  // its memory. Partitions, then the step graph, as Session::create builds them.
  void build(const std::vector<std::string>& names, const std::vector<std::set<std::string>>& ops,
             const std::vector<bool>& mappable) {
    partitioner::PartitionRequest req;
    req.graph = &g;
    for (size_t b = 0; b < names.size(); ++b) {
      partitioner::BackendCapabilities caps;
      caps.name = names[b];
      caps.host_addressable = mappable[b];
      for (const ir::Node& n : g.nodes()) {
        partitioner::NodeCapability c;
        if (ops[b].count(n.op_type)) c.support = partitioner::Support::kYes;
        caps.nodes.push_back(c);
      }
      req.backends.push_back(caps);
      PlanDevice d;
      d.backend = names[b];
      d.mappable = mappable[b];
      plan.devices.push_back(std::move(d));
    }
    auto pp = partitioner::partition(req);
    ASSERT_TRUE(pp.is_ok()) << pp.status().message();
    parts = *pp;
    for (const auto& p : parts.partitions) {
      PlanPartition compiled;
      compiled.name = p.name;
      compiled.device = p.backend;
      compiled.inputs = p.inputs;
      compiled.outputs = p.outputs;
      plan.partitions.push_back(std::move(compiled));
    }
    Status s = build_step_graph(g, parts, plan);
    ASSERT_TRUE(s.is_ok()) << s.message();
  }

  ir::Graph g;
  ExecutionPlan plan;
  partitioner::PartitionPlan parts;
};

// x -> e1 (example) -> c1 (cpu) -> e2 (example) -> y, example not mappable.
TEST_F(StepGraphTest, DeviceAndHostStepsAreLinkedByIssueOrCompletion) {
  g.inputs.push_back(value("x"));
  node("e1", "E", {"x"}, {"a"});
  node("c1", "C", {"a"}, {"b"});
  node("e2", "E", {"b"}, {"y"});
  g.outputs.push_back(value("y"));
  build({"example", "cpu"}, {{"E"}, {"E", "C"}}, {false, true});

  // Steps: 0..2 = partitions p0 (example), p1 (cpu), p2 (example);
  // 3..6 = copies of x (host->example), a (example->cpu), b (cpu->example), y (->host).
  ASSERT_EQ(plan.steps.size(), 7u);
  ASSERT_EQ(plan.copies.size(), 4u);
  EXPECT_EQ(plan.copies[0].mode, CopyMode::kUpload);
  EXPECT_EQ(plan.copies[1].mode, CopyMode::kDownload);
  EXPECT_EQ(plan.copies[2].mode, CopyMode::kUpload);
  EXPECT_EQ(plan.copies[3].mode, CopyMode::kDownload);
  EXPECT_EQ(plan.steps[3].label, "copy of 'x' (host -> example)");
  EXPECT_EQ(plan.steps[0].label, "partition 'p0' (example)");

  // Upload of x runs on example: p0 may be enqueued right behind it.
  EXPECT_EQ(plan.steps[3].release_on_issue, Steps({0}));
  EXPECT_EQ(plan.steps[0].stream_waits, Steps({3}));
  // p0 -> download of a: both on example.
  EXPECT_EQ(plan.steps[0].release_on_issue, Steps({4}));
  // The cpu partition needs the download finished.
  EXPECT_EQ(plan.steps[4].release_on_complete, Steps({1}));
  EXPECT_TRUE(plan.steps[1].stream_waits.empty());
  // The upload of b reads cpu memory from the host: it needs p1 finished.
  EXPECT_EQ(plan.steps[1].release_on_complete, Steps({5}));
  EXPECT_EQ(plan.steps[5].release_on_issue, Steps({2}));
  EXPECT_EQ(plan.steps[2].release_on_issue, Steps({6}));
  EXPECT_EQ(plan.steps[6].num_predecessors, 1u);
  EXPECT_EQ(plan.steps[3].num_predecessors, 0u);

  EXPECT_TRUE(plan.bindings.empty());
  ASSERT_EQ(plan.outputs.size(), 1u);
  EXPECT_EQ(plan.outputs[0].kind, OutputSource::Kind::kHostCopy);
}

TEST_F(StepGraphTest, TwoUnmappedDevicesStageThroughTheHost) {
  g.inputs.push_back(value("x"));
  node("a1", "A", {"x"}, {"a"});
  node("b1", "B", {"a"}, {"y"});
  g.outputs.push_back(value("y"));
  build({"gpu_a", "gpu_b"}, {{"A"}, {"B"}}, {false, false});
  // Copies: x -> gpu_a, a -> gpu_b (staged), y -> host.
  ASSERT_EQ(plan.copies.size(), 3u);
  EXPECT_EQ(plan.copies[1].mode, CopyMode::kStaged);
  const PlanStep& staged = plan.steps[2 + 1];
  EXPECT_EQ(staged.exec_device, 0u);
  EXPECT_EQ(staged.done_device, 1u);
  // Its download half follows p0 on gpu_a's stream; p1 follows its upload half on gpu_b.
  EXPECT_EQ(plan.steps[0].release_on_issue, Steps({3}));
  EXPECT_EQ(staged.release_on_issue, Steps({1}));
  EXPECT_EQ(plan.steps[1].stream_waits, Steps({3}));
}

TEST_F(StepGraphTest, MappedDevicesCopyWithMemcpyAndBindInputsInPlace) {
  g.inputs.push_back(value("x"));
  node("c1", "C", {"x"}, {"a"});
  node("f1", "F", {"a", "x"}, {"y"});
  g.outputs.push_back(value("y"));
  g.outputs.push_back(value("a"));
  g.outputs.push_back(value("x"));
  build({"fast", "cpu"}, {{"F"}, {"C"}}, {true, true});
  // p0 = c1 on cpu, p1 = f1 on fast; one copy of a (cpu -> fast) by memcpy.
  ASSERT_EQ(plan.copies.size(), 1u);
  EXPECT_EQ(plan.copies[0].mode, CopyMode::kHostMemcpy);
  EXPECT_EQ(plan.steps[2].exec_device, kHostDevice);
  EXPECT_EQ(plan.steps[0].release_on_complete, Steps({2}));
  EXPECT_EQ(plan.steps[2].release_on_complete, Steps({1}));
  // x is written into both devices' arenas at the start of a run.
  ASSERT_EQ(plan.bindings.size(), 2u);
  EXPECT_EQ(plan.bindings[0].device, 1u);
  EXPECT_EQ(plan.bindings[1].device, 0u);
  ASSERT_EQ(plan.outputs.size(), 3u);
  EXPECT_EQ(plan.outputs[0].kind, OutputSource::Kind::kDevice);
  EXPECT_EQ(plan.outputs[0].device, 0u);
  EXPECT_EQ(plan.outputs[1].kind, OutputSource::Kind::kDevice);
  EXPECT_EQ(plan.outputs[1].device, 1u);
  EXPECT_EQ(plan.outputs[2].kind, OutputSource::Kind::kGraphInput);
}

TEST_F(StepGraphTest, ConstantOutputsAndDanglingOutputs) {
  g.inputs.push_back(value("x"));
  node("c1", "C", {"x"}, {"y"});
  ir::ValueId k = value("k");
  g.value(k).constant = std::make_shared<ir::TensorData>(
      DataType::kFloat32, std::vector<int64_t>{2}, std::vector<uint8_t>(8, 0));
  g.outputs.push_back(k);
  build({"cpu"}, {{"C"}}, {true});
  ASSERT_EQ(plan.outputs.size(), 1u);
  EXPECT_EQ(plan.outputs[0].kind, OutputSource::Kind::kConstant);

  ExecutionPlan other;
  PlanDevice d;
  d.backend = "cpu";
  d.mappable = true;
  other.devices.push_back(std::move(d));
  ir::Graph dangling;
  ir::Value v;
  v.name = "nowhere";
  v.dtype = DataType::kFloat32;
  dangling.outputs.push_back(dangling.add_value(v));
  partitioner::PartitionPlan empty;
  Status s = build_step_graph(dangling, empty, other);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(),
            "graph output 'nowhere' is not produced by any node, nor an input or a constant");
}

}  // namespace
}  // namespace infer::runtime
