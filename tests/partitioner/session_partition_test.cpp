// The partitioner inside a Session, with the example "discrete device" plugin and cpu:
// the reasons and totals --explain shows (text and JSON), memory budgets from
// SessionOptions, and the priority placement that stands when sizes are symbolic. The
// links come from a cache file the test writes (1000 bytes/us, 1000 us each way), so the
// placement does not depend on this machine.
//
// Time estimates: the example plugin's own (5 us per kernel + 1 ns per multiply-add, see
// sdk/examples/discrete_device/capability.cpp); cpu has none, so its are the default
// roofline over partitioner::kCpuThroughput (1 us + max(flops / 20000, bytes / 10000)).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "env_guard.hpp"
#include "infer/infer.hpp"
#include "mini_json.hpp"
#include "onnx_model_writer.hpp"
#include "report.hpp"
#include "runtime/link_probe.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using infer::testing::OnnxModelWriter;
using infer::testing::tree_options;
using partitioner::testing::EnvGuard;

constexpr int64_t kN = 4;

// x[batch,4] -> mm = x @ W -> h = mm + b -> r = Relu(h) -> s = Softmax(r) (cpu only)
// -> m = s * x -> y = m + r. Outputs y and s. `batch` < 0: symbolic.
std::string mixed_model(int64_t batch) {
  OnnxModelWriter w;
  const std::vector<std::string> params = {"batch"};
  w.input("x", {batch, kN}, params);
  w.initializer("W", {kN, kN}, std::vector<float>(kN * kN, 0.25f));
  w.initializer("b", {kN}, {0.1f, -0.2f, 0.3f, 0.05f});
  w.node("mm", "MatMul", {"x", "W"}, {"mm_out"});
  w.node("bias", "Add", {"mm_out", "b"}, {"h"});
  w.node("relu", "Relu", {"h"}, {"r"});
  OnnxModelWriter::int_attr(w.node("softmax", "Softmax", {"r"}, {"s"}), "axis", -1);
  w.node("mul", "Mul", {"s", "x"}, {"m"});
  w.node("sum", "Add", {"m", "r"}, {"y"});
  w.output("y", {batch, kN}, params);
  w.output("s", {batch, kN}, params);
  const std::string path = infer::testing::temp_path("part_mixed_" + std::to_string(batch) + ".onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// x[2,4] -> mm -> bias -> relu -> y: everything the example device runs.
std::string example_chain() {
  OnnxModelWriter w;
  w.input("x", {2, kN});
  w.initializer("W", {kN, kN}, std::vector<float>(kN * kN, 0.5f));
  w.initializer("b", {kN}, {0.1f, -0.2f, 0.3f, 0.05f});
  w.node("mm", "MatMul", {"x", "W"}, {"mm_out"});
  w.node("bias", "Add", {"mm_out", "b"}, {"h"});
  w.node("relu", "Relu", {"h"}, {"y"});
  w.output("y", {2, kN});
  const std::string path = infer::testing::temp_path("part_chain.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

class SessionPartition : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/infer_part_session_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    const std::string cache = dir_ + "/links.json";
    std::map<std::string, runtime::LinkFigures> links = {
        {"example|example discrete device|", {{1000, 1000}, {1000, 1000}}}};
    ASSERT_TRUE(runtime::write_link_cache(cache, links).is_ok());
    env_.set("INFER_LINK_CACHE", cache);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Session> create(const std::string& model, SessionOptions o) {
    o.optimization_level = 0;
    auto s = Session::create(model, o);
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    return s.is_ok() ? std::move(*s) : nullptr;
  }

  std::string dir_;
  EnvGuard env_;
};

TEST_F(SessionPartition, SmallIslandAndBoundaryNodesMoveWithTheirReasons) {
  auto session = create(mixed_model(2), tree_options({"example", "cpu"}));
  ASSERT_NE(session, nullptr);
  const PlanReport& plan = session->plan();
  ASSERT_EQ(plan.nodes.size(), 6u);
  // mul and sum, a 2-node example island after the cpu Softmax, go first: they saved the
  // copies of s up and y back (64 bytes, 2 x 1000.032 us) and 2 x (5.008 - 1.0096) us.
  EXPECT_EQ(plan.nodes[4].reason,
            "moved to cpu: example island of 2 nodes (Mul, Add) under the minimum of 3; it "
            "saves a 64 B transfer (2.00 ms) and 8.0 us of compute");
  EXPECT_EQ(plan.nodes[5].reason, plan.nodes[4].reason);
  // Then the boundary moves one node at a time: relu (r down becomes h down, the same
  // 32 bytes; 5.008 - 1.0064 us), bias (5.008 - 1.008), and mm, which also ends the
  // copy of x up: 2 x 1000.032 us and 5.032 - 1.0128 us.
  EXPECT_EQ(plan.nodes[2].reason, "moved to cpu: it saves 4.0 us of compute");
  EXPECT_EQ(plan.nodes[1].reason, "moved to cpu: it saves 4.0 us of compute");
  EXPECT_EQ(plan.nodes[0].reason,
            "moved to cpu: it saves a 64 B transfer (2.00 ms) and 4.0 us of compute");
  EXPECT_EQ(plan.nodes[3].reason, "cpu: fallback (example: unsupported op Softmax)");
  for (const NodePlacement& n : plan.nodes) {
    EXPECT_EQ(n.backend, "cpu");
    EXPECT_EQ(n.moved, n.node != "softmax") << n.node;
    EXPECT_GT(n.est_time_us, 1.0) << n.node;
  }
  EXPECT_DOUBLE_EQ(plan.nodes[0].est_time_us, 1.0128);
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_TRUE(plan.copies.empty());
  EXPECT_EQ(session->active_backends(), (std::vector<std::string>{"cpu"}));

  // Totals: cpu computes 1.0128 + 1.008 + 1.0064 + 1.0064 + 1.0096 + 1.0096 us; it holds
  // W and b (80 bytes) and at most r, s, m and y (4 x 32 bytes) at sum.
  const std::string text = plan.to_text();
  EXPECT_NE(text.find("  mm (MatMul) -> cpu (~1.0 us)  [moved to cpu: it saves a 64 B "
                      "transfer (2.00 ms) and 4.0 us of compute]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("totals:\n"
                      "  partitions: 1 (cpu 1)\n"
                      "  copies per run: 0\n"
                      "  estimated compute: cpu 6.1 us\n"
                      "  estimated transfers: 0.0 us\n"
                      "  estimated memory: cpu 208 B\n"),
            std::string::npos)
      << text;

  // And it still computes the same as cpu alone.
  const std::vector<float> x = {0.5f, -1, 2, 0.25f, -0.5f, 1, -2, 3};
  auto in = Tensor::from_bytes(DataType::kFloat32, {2, kN}, x.data(), x.size() * 4);
  ASSERT_TRUE(in.is_ok());
  auto out = session->run({{"x", *in}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  auto cpu = create(mixed_model(2), tree_options({"cpu"}));
  ASSERT_NE(cpu, nullptr);
  auto ref = cpu->run({{"x", *in}});
  ASSERT_TRUE(ref.is_ok());
  EXPECT_LE(infer::testing::max_abs_diff((*out)[0].tensor, (*ref)[0].tensor.data_as<float>(), 8),
            1e-6f);
}

TEST_F(SessionPartition, ExplainTotalsListCopiesBytesAndEstimatesInTextAndJson) {
  auto session = create(example_chain(), tree_options({"example", "cpu"}));
  ASSERT_NE(session, nullptr);
  const PlanReport& plan = session->plan();
  // Nothing around the example region runs elsewhere, so nothing is weighed: it stays,
  // with x copied up and y back (32 bytes each, 1000 + 32/1000 us).
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_EQ(plan.nodes[0].reason, "example: preferred");
  EXPECT_DOUBLE_EQ(plan.nodes[0].est_time_us, 5.032);  // 5 + 2*4 outputs x 4 / 1000
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_DOUBLE_EQ(plan.copies[0].est_time_us, 1000.032);
  EXPECT_DOUBLE_EQ(plan.est_transfer_us, 2000.064);
  ASSERT_EQ(plan.backends.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.backends[0].est_compute_us, 5.032 + 5.008 + 5.008);
  // W (64) and b (16); x with mm_out at mm, then two 32-byte values at a time.
  EXPECT_EQ(plan.backends[0].est_memory_bytes, 144);
  const std::string text = plan.to_text();
  EXPECT_NE(text.find("partitions (1):\n  p0 on example: 3 nodes, ~15.0 us\n"
                      "copies per run (2):\n"
                      "  x: host -> example, 32 bytes, ~1.00 ms\n"
                      "  y: example -> host, 32 bytes, ~1.00 ms\n"
                      "  total: 64 bytes\n"
                      "totals:\n"
                      "  partitions: 1 (example 1)\n"
                      "  copies per run: 2, 64 bytes\n"
                      "  estimated compute: example 15.0 us\n"
                      "  estimated transfers: 2.00 ms\n"
                      "  estimated memory: example 144 B\n"),
            std::string::npos)
      << text;

  cli::RunReport report;
  report.model = "chain";
  report.plan = &plan;
  const auto json = cli::testing::JsonParser::parse(cli::render_json(report));
  ASSERT_TRUE(json.has_value());
  const auto* p = json->get("plan");
  ASSERT_NE(p, nullptr);
  const auto* node = &p->get("nodes")->array[0];
  EXPECT_DOUBLE_EQ(node->get("est_time_us")->number, 5.032);
  EXPECT_EQ(node->get("moved")->type, cli::testing::JsonValue::Type::kBool);
  EXPECT_FALSE(node->get("moved")->boolean);
  EXPECT_DOUBLE_EQ(p->get("copies")->array[1].get("est_time_us")->number, 1000.032);
  const auto* totals = p->get("totals");
  ASSERT_NE(totals, nullptr);
  EXPECT_EQ(totals->get("partitions")->number, 1);
  EXPECT_EQ(totals->get("copies")->number, 2);
  EXPECT_EQ(totals->get("copy_bytes")->number, 64);
  EXPECT_EQ(totals->get("copies_of_unknown_size")->number, 0);
  EXPECT_DOUBLE_EQ(totals->get("est_transfer_us")->number, 2000.064);
  const auto& backends = p->get("backends")->array;
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0].get("backend")->string, "example");
  EXPECT_EQ(backends[0].get("est_memory_bytes")->number, 144);
  EXPECT_EQ(backends[0].get("memory_budget_bytes")->type, cli::testing::JsonValue::Type::kNull);
}

TEST_F(SessionPartition, SymbolicSizesKeepThePriorityPlacementAndSaySo) {
  auto session = create(mixed_model(-1), tree_options({"example", "cpu"}));
  ASSERT_NE(session, nullptr);
  const PlanReport& plan = session->plan();
  ASSERT_EQ(plan.partitions.size(), 3u);
  EXPECT_EQ(plan.nodes[4].reason, "example: supported");
  EXPECT_FALSE(plan.nodes[4].moved);
  // The 2-node island, and the nodes on either side of softmax, could not be priced.
  EXPECT_EQ(plan.undecided_placements, 2u);
  EXPECT_EQ(plan.copies_without_estimate, 4u);
  const std::string text = plan.to_text();
  EXPECT_NE(text.find("  partitions: 3 (example 2, cpu 1)\n"
                      "  copies per run: 4, bytes known at run time\n"
                      "  estimated compute: example unknown, cpu unknown\n"
                      "  estimated transfers: unknown\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  undecided: 2 small islands or boundary nodes left where priority "
                      "placed them"),
            std::string::npos)
      << text;
}

// SessionOptions::assumed_symbolic_dim prices the symbolic batch as 2: the placement is
// then the one of the fixed batch-2 model (the first test), with the same moves. The
// compute figures in the reasons differ: the example plugin gives no estimate for a
// symbolic shape, so the host's roofline for its device kind stands in for it.
TEST_F(SessionPartition, AnAssumedSymbolicDimPricesTheSymbolicModelLikeTheFixedOne) {
  SessionOptions o = tree_options({"example", "cpu"});
  o.assumed_symbolic_dim = 2;
  auto symbolic = create(mixed_model(-1), o);
  auto fixed = create(mixed_model(2), tree_options({"example", "cpu"}));
  ASSERT_NE(symbolic, nullptr);
  ASSERT_NE(fixed, nullptr);
  const PlanReport& a = symbolic->plan();
  const PlanReport& b = fixed->plan();
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].backend, b.nodes[i].backend) << a.nodes[i].node;
    EXPECT_EQ(a.nodes[i].moved, b.nodes[i].moved) << a.nodes[i].node;
    const std::string kind = b.nodes[i].reason.substr(0, b.nodes[i].reason.find(" saves"));
    EXPECT_EQ(a.nodes[i].reason.rfind(kind, 0), 0u) << a.nodes[i].reason << " vs " << kind;
  }
  EXPECT_NE(a.nodes[4].reason.find("a 64 B transfer (2.00 ms)"), std::string::npos) << a.nodes[4].reason;
  EXPECT_EQ(a.partitions.size(), 1u);
  EXPECT_EQ(a.undecided_placements, 0u);

  o.assumed_symbolic_dim = -1;
  EXPECT_FALSE(Session::create(mixed_model(-1), o).is_ok());
}

// min_island_nodes = 1 turns the island pass off: no reason speaks of an island, and
// any move comes from the boundary pass.
TEST_F(SessionPartition, MinIslandNodesOfOneTurnsIslandMergingOff) {
  SessionOptions o = tree_options({"example", "cpu"});
  o.min_island_nodes = 1;
  auto session = create(mixed_model(2), o);
  ASSERT_NE(session, nullptr);
  for (const NodePlacement& n : session->plan().nodes)
    EXPECT_EQ(n.reason.find("island"), std::string::npos) << n.node << ": " << n.reason;
}

TEST_F(SessionPartition, MemoryBudgetSpillsTheLatestNodesToCpu) {
  // x[1,512] -> mm (W: 512x512 float32, 1 MiB) -> relu -> y, under a 1 MiB budget on the
  // example device: 1 MiB of W plus 4 KiB of activations (two 2 KiB values at a time).
  OnnxModelWriter w;
  w.input("x", {1, 512});
  std::vector<float> eye(512 * 512, 0.0f);
  for (int i = 0; i < 512; ++i) eye[static_cast<size_t>(i) * 513] = 1.0f;
  w.initializer("W", {512, 512}, eye);
  w.node("mm", "MatMul", {"x", "W"}, {"h"});
  w.node("relu", "Relu", {"h"}, {"y"});
  w.output("y", {1, 512});
  const std::string path = infer::testing::temp_path("part_budget.onnx");
  ASSERT_TRUE(w.save(path));

  SessionOptions o = tree_options({"example", "cpu"});
  o.backend_options = {{"example", {}, /*memory_budget_mb=*/1}};
  auto session = create(path, o);
  ASSERT_NE(session, nullptr);
  const PlanReport& plan = session->plan();
  const std::string why =
      "spilled to cpu: example's memory budget of 1.0 MiB is exceeded (constants 1.0 MiB + "
      "peak activations 4.0 KiB)";
  EXPECT_EQ(plan.nodes[1].reason, why);  // relu first, the latest
  EXPECT_EQ(plan.nodes[0].reason, why);  // then mm, still over with W
  EXPECT_TRUE(plan.nodes[0].moved);
  ASSERT_EQ(plan.partitions.size(), 1u);
  EXPECT_EQ(plan.partitions[0].backend, "cpu");

  std::vector<float> x(512);
  for (int i = 0; i < 512; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3.0f;
  auto in = Tensor::from_bytes(DataType::kFloat32, {1, 512}, x.data(), x.size() * 4);
  ASSERT_TRUE(in.is_ok());
  auto out = session->run({{"x", *in}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (int i = 0; i < 512; ++i)
    EXPECT_EQ((*out)[0].tensor.data_as<float>()[i], std::max(0.0f, x[static_cast<size_t>(i)]));

  // Without the budget the example device keeps both (nothing around them runs on cpu).
  auto unbounded = create(path, tree_options({"example", "cpu"}));
  ASSERT_NE(unbounded, nullptr);
  EXPECT_EQ(unbounded->plan().nodes[0].backend, "example");
}

}  // namespace
}  // namespace infer
