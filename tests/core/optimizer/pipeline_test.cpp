#include "optimizer/pipeline.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "optimizer/pass_registry.hpp"

namespace infer::optimizer {
namespace {

using testing::GraphBuilder;
using testing::node_names;
using Names = std::vector<std::string>;

// x -> live -> y (output); x -> dead1 -> dead2 (unused).
void build_graph_with_dead_chain(ir::Graph& g) {
  GraphBuilder b(g);
  b.input("x");
  b.node("live", "Relu", {"x"}, {"y"});
  b.node("dead1", "Relu", {"x"}, {"d1"});
  b.node("dead2", "Neg", {"d1"}, {"d2"});
  b.output("y");
  g.rebuild_links();
}

TEST(Pipeline, LevelZeroRunsNoPasses) {
  Result<Pipeline> p = make_pipeline(0, {});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->size(), 0u);

  ir::Graph g;
  build_graph_with_dead_chain(g);
  ASSERT_TRUE(p->run(g).is_ok());
  EXPECT_EQ(node_names(g), Names({"live", "dead1", "dead2"}));
  EXPECT_TRUE(p->changed_summary().empty());
}

TEST(Pipeline, LevelsOneToThreeRunDeadCodeElimination) {
  for (int level = 1; level <= 3; ++level) {
    Result<Pipeline> p = make_pipeline(level, {});
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    EXPECT_EQ(p->pass_names(), Names({"dead_code_elimination"})) << "level " << level;

    ir::Graph g;
    build_graph_with_dead_chain(g);
    ASSERT_TRUE(p->run(g).is_ok());
    EXPECT_EQ(node_names(g), Names({"live"}));
    // DCE changed the graph once; the second round saw nothing left to do.
    ASSERT_EQ(p->stats().size(), 1u);
    EXPECT_EQ(p->stats()[0].changes, 1);
    EXPECT_EQ(p->stats()[0].applications, 2);
    EXPECT_EQ(p->changed_summary(), Names({"dead_code_elimination x1"}));
  }
}

TEST(Pipeline, DisabledPassIsLeftOut) {
  Result<Pipeline> p = make_pipeline(3, {"dead_code_elimination"});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->size(), 0u);
  ir::Graph g;
  build_graph_with_dead_chain(g);
  ASSERT_TRUE(p->run(g).is_ok());
  EXPECT_EQ(g.node_count(), 3u);
}

TEST(Pipeline, UnknownDisabledPassIsAnErrorListingKnownPasses) {
  Result<Pipeline> p = make_pipeline(1, {"constant_folding_typo"});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "unknown optimizer pass 'constant_folding_typo' in disabled passes (known passes: "
            "dead_code_elimination)");
}

TEST(Pipeline, OutOfRangeLevelIsAnError) {
  for (int level : {-1, 4}) {
    Result<Pipeline> p = make_pipeline(level, {});
    ASSERT_FALSE(p.is_ok());
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(p.status().message(),
              "optimization level " + std::to_string(level) + " is out of range (expected 0..3)");
  }
}

TEST(Pipeline, RegistryNamesMatchThePassesItMakes) {
  for (const PassEntry& e : pass_registry()) EXPECT_EQ(e.make()->name(), e.name);
  EXPECT_EQ(known_pass_names(), Names({"dead_code_elimination"}));
}

// Removes one node per application (the last one) until `keep` nodes remain: a pass
// that needs several iterations to reach its fixed point.
class TrimOneNode final : public Pass {
 public:
  TrimOneNode(size_t keep, int max_iterations) : keep_(keep), max_iterations_(max_iterations) {}
  std::string name() const override { return "trim_one"; }
  int max_iterations() const override { return max_iterations_; }
  Result<bool> apply(ir::Graph& g) override {
    if (g.node_count() <= keep_) return false;
    std::vector<bool> remove(g.node_count(), false);
    remove.back() = true;
    g.erase_nodes(remove);
    g.rebuild_links();
    return true;
  }

 private:
  size_t keep_;
  int max_iterations_;
};

class FailingPass final : public Pass {
 public:
  std::string name() const override { return "always_fails"; }
  Result<bool> apply(ir::Graph&) override { return internal_error("node 'n' (Foo): broken"); }
};

ir::Graph chain_of(int n) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("v0");
  for (int i = 0; i < n; ++i)
    b.node("n" + std::to_string(i), "Relu", {"v" + std::to_string(i)},
           {"v" + std::to_string(i + 1)});
  g.rebuild_links();
  return g;
}

TEST(Pipeline, IteratingPassRunsToAFixedPoint) {
  ir::Graph g = chain_of(6);
  Pipeline p;
  p.add(std::make_unique<TrimOneNode>(/*keep=*/2, /*max_iterations=*/10));
  ASSERT_TRUE(p.run(g).is_ok());
  EXPECT_EQ(g.node_count(), 2u);
  // Four changing applications, then one that found nothing; no second round needed
  // beyond the one that confirms the fixed point.
  EXPECT_EQ(p.stats()[0].changes, 4);
  EXPECT_EQ(p.stats()[0].applications, 6);
  EXPECT_EQ(p.changed_summary(), Names({"trim_one x4"}));
}

TEST(Pipeline, IterationAndRoundCapsBoundTheWork) {
  ir::Graph g = chain_of(20);
  Pipeline p;
  p.set_max_rounds(3);
  p.add(std::make_unique<TrimOneNode>(/*keep=*/0, /*max_iterations=*/2));
  ASSERT_TRUE(p.run(g).is_ok());
  // 3 rounds x 2 iterations: the pass would have gone on, the caps stopped it.
  EXPECT_EQ(p.stats()[0].changes, 6);
  EXPECT_EQ(g.node_count(), 14u);
}

TEST(Pipeline, FailingPassStopsThePipelineWithItsName) {
  ir::Graph g = chain_of(2);
  Pipeline p;
  p.add(std::make_unique<FailingPass>());
  Status s = p.run(g);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "optimizer pass 'always_fails': node 'n' (Foo): broken");
}

}  // namespace
}  // namespace infer::optimizer
