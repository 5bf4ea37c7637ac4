// Memory budgets: constants plus peak activations on a backend stay under its budget;
// the latest nodes spill to the next backend, with the numbers; the cost-driven passes
// never move a node back over the budget; an impossible budget is an error.
#include <gtest/gtest.h>

#include "partition_fixture.hpp"
#include "partitioner/cost_model.hpp"
#include "partitioner/graph_deps.hpp"
#include "partitioner/memory_budget.hpp"

namespace infer::partitioner {
namespace {

using testing::backend;
using testing::set_link;
using testing::TestGraph;

// x -> n0 (reads w0, 24 B) -> v0 -> n1 -> v1 -> n2 (reads w2, 400 B) -> v2 -> n3 (reads
// w3, 400 B) -> y. Activations are [2,3] float32: 24 bytes.
struct Chain {
  TestGraph t;
  PartitionRequest req;
  explicit Chain(const std::set<std::string>& cpu_ops = {"E"}) {
    t.input("x");
    t.constant("w0");
    t.constant("w2", {10, 10});
    t.constant("w3", {10, 10});
    t.node("n0", "E", {"x", "w0"}, {"v0"});
    t.node("n1", "E", {"v0"}, {"v1"});
    t.node("n2", "E", {"v1", "w2"}, {"v2"});
    t.node("n3", "E", {"v2", "w3"}, {"y"});
    t.output("y");
    req.graph = &t.g;
    req.backends = {backend(t, "gpu", {"E"}), backend(t, "cpu", cpu_ops)};
    set_link(req.backends[0], 1000, 10);
    testing::set_all_times(req.backends[0], 1);
    testing::set_all_times(req.backends[1], 1);
  }
};

TEST(MemoryBudget, UseIsConstantsPlusPeakLiveActivations) {
  Chain c;
  const CostModel cost(c.req);
  const GraphFacts facts = graph_facts(c.t.g);
  // All on gpu: constants 24 + 400 + 400; x (copied in) lives at n0, v0 over n0..n1, and
  // so on: two 24-byte values live at every node, y until the end.
  MemoryUse use = memory_use(c.t.g, facts, cost, {0, 0, 0, 0}, 0);
  EXPECT_EQ(use.constants, 824);
  EXPECT_EQ(use.peak_activations, 48);
  EXPECT_EQ(use.unknown_values, 0u);
  // On cpu (host-addressable) x stays in the application's memory: only v0 at n0.
  use = memory_use(c.t.g, facts, cost, {1, 1, 1, 1}, 1);
  EXPECT_EQ(use.constants, 824);
  EXPECT_EQ(use.peak_activations, 48);  // v0 and v1 at n1
  // Split after n1: gpu holds w0, x, v0, v1 (v1 until n2 reads it on cpu).
  use = memory_use(c.t.g, facts, cost, {0, 0, 1, 1}, 0);
  EXPECT_EQ(use.constants, 24);
  EXPECT_EQ(use.peak_activations, 48);
  // A symbolic activation is counted apart.
  c.t.g.value(*c.t.g.find_value("v0")).shape.dims->at(0) = ir::Dim::symbol("batch");
  const CostModel symbolic(c.req);
  use = memory_use(c.t.g, facts, symbolic, {0, 0, 0, 0}, 0);
  EXPECT_EQ(use.unknown_values, 1u);
  EXPECT_EQ(use.peak_activations, 48);  // x + ... v1 and v2 at n2
}

TEST(MemoryBudget, LatestNodesSpillToTheNextBackendUntilItFits) {
  Chain c;
  c.req.backends[0].memory_budget_bytes = 600;
  auto plan = partition(c.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  // 872 bytes do not fit in 600; without n3 (and w3) 472 do.
  const NodeAssignment& n3 = plan->assignments[c.t.id_of("n3")];
  EXPECT_EQ(n3.backend, 1u);
  EXPECT_TRUE(n3.moved);
  EXPECT_EQ(n3.reason,
            "spilled to cpu: gpu's memory budget of 600 B is exceeded (constants 824 B + peak "
            "activations 48 B)");
  EXPECT_EQ(plan->assignments[c.t.id_of("n2")].backend, 0u);
  EXPECT_EQ(plan->estimates.backends[0].memory_bytes, 472);
  EXPECT_EQ(plan->estimates.backends[0].memory_budget_bytes, 600);
  EXPECT_EQ(plan->estimates.backends[1].memory_budget_bytes, -1);
  // n3 alone on cpu is a 1-node island the cost model would bring back to gpu (a copy
  // saved, same compute), but that would break the budget, so it stays.
  ASSERT_EQ(plan->partitions.size(), 2u);

  // A tighter budget spills n2 too: 72 bytes of constants and activations are left.
  // (cpu is made slow, so that the cost model does not then move the 2-node gpu island
  // n0, n1 to cpu as well.)
  c.req.backends[0].memory_budget_bytes = 100;
  testing::set_all_times(c.req.backends[1], 100);
  plan = partition(c.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->assignments[c.t.id_of("n2")].backend, 1u);
  EXPECT_EQ(plan->assignments[c.t.id_of("n2")].reason,
            "spilled to cpu: gpu's memory budget of 100 B is exceeded (constants 424 B + peak "
            "activations 48 B)");
  EXPECT_EQ(plan->assignments[c.t.id_of("n1")].backend, 0u);
  EXPECT_EQ(plan->estimates.backends[0].memory_bytes, 72);
}

TEST(MemoryBudget, ABudgetThatCannotBeMetIsAnErrorNamingBackendAndNumbers) {
  Chain c(/*cpu_ops=*/std::set<std::string>{});  // cpu runs nothing: no node can leave gpu
  c.req.backends[0].memory_budget_bytes = 10;
  auto plan = partition(c.req);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(),
            "memory budget: backend 'gpu' needs 872 B (constants 824 B + peak activations 48 B) "
            "but its budget is 10 B, and none of the nodes left on it can move to a later "
            "backend (they are pinned, or no later backend supports them)");
}

TEST(MemoryBudget, PinnedNodesDoNotSpill) {
  Chain c;
  c.req.backends[0].memory_budget_bytes = 600;
  c.req.pins = {{"n3", "gpu"}};
  auto plan = partition(c.req);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  // n3 keeps w3 on gpu; n2 (w2) spills instead: 24 + 400 + 48 = 472.
  EXPECT_EQ(plan->assignments[c.t.id_of("n3")].backend, 0u);
  EXPECT_EQ(plan->assignments[c.t.id_of("n2")].backend, 1u);
}

}  // namespace
}  // namespace infer::partitioner
