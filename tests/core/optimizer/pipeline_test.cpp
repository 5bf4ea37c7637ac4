#include "optimizer/pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph_builder.hpp"
#include "optimizer/pass_registry.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

// x -> live -> y (output); x -> dead1 -> dead2 (unused).
void build_graph_with_dead_chain(ir::Graph& g) {
  GraphBuilder b(g);
  b.input("x");
  b.node("live", "Relu", {"x"}, {"y"});
  b.node("dead1", "Neg", {"x"}, {"d1"});
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

const PassStats* stats_of(const Pipeline& p, const std::string& name) {
  for (const PassStats& s : p.stats())
    if (s.name == name) return &s;
  return nullptr;
}

TEST(Pipeline, LevelsOneToThreeRunDeadCodeElimination) {
  for (int level = 1; level <= 3; ++level) {
    Result<Pipeline> p = make_pipeline(level, {});
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    ir::Graph g;
    build_graph_with_dead_chain(g);
    ASSERT_TRUE(p->run(g).is_ok());
    EXPECT_EQ(node_names(g), Names({"live"}));
    // DCE removed both dead nodes in its first application; the second round saw
    // nothing left to do.
    const PassStats* dce = stats_of(*p, "dead_code_elimination");
    ASSERT_NE(dce, nullptr) << "level " << level;
    EXPECT_EQ(dce->changes, 1);
    EXPECT_EQ(dce->rewrites, 2);
    EXPECT_EQ(dce->applications, 2);
    EXPECT_EQ(p->changed_summary(), Names({"dead_code_elimination: 2 rewrites"}));
  }
}

TEST(Pipeline, HigherLevelsRunSupersetsOfLowerLevels) {
  std::vector<Names> names;
  for (int level = 1; level <= 3; ++level) {
    Result<Pipeline> p = make_pipeline(level, {});
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    names.push_back(p->pass_names());
  }
  for (size_t i = 1; i < names.size(); ++i)
    for (const std::string& n : names[i - 1])
      EXPECT_NE(std::find(names[i].begin(), names[i].end(), n), names[i].end())
          << n << " runs at level " << i << " but not at level " << i + 1;
}

TEST(Pipeline, DisabledPassIsLeftOut) {
  Result<Pipeline> p = make_pipeline(3, {"dead_code_elimination"});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(stats_of(*p, "dead_code_elimination"), nullptr);
  ir::Graph g;
  build_graph_with_dead_chain(g);
  ASSERT_TRUE(p->run(g).is_ok());
  EXPECT_EQ(g.node_count(), 3u);
}

TEST(Pipeline, UnknownDisabledPassIsAnErrorListingKnownPasses) {
  Result<Pipeline> p = make_pipeline(1, {"constant_folding_typo"});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message().rfind(
                "unknown optimizer pass 'constant_folding_typo' in disabled passes (known "
                "passes: ",
                0),
            0u)
      << p.status().message();
  EXPECT_NE(p.status().message().find("dead_code_elimination"), std::string::npos);
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
  // The pipeline order README.md documents: the QDQ passes (before constant folding
  // dequantizes the weights), basic passes, DCE, transformer fusions
  // (before the generic MatMul/Add fusions would hide their patterns), generic fusions,
  // then the layout pass.
  EXPECT_EQ(known_pass_names(),
            Names({"qdq_conv_fusion", "qdq_gemm_fusion", "qdq_binary_fusion", "qdq_lookup_fusion",
                   "qdq_passthrough", "matmul_integer_to_float_fusion", "constant_folding", "shape_folding", "noop_elimination",
                   "reshape_transpose_merging", "common_subexpression_elimination",
                   "dead_code_elimination", "layer_norm_fusion", "gelu_fusion", "attention_fusion",
                   "conv_bn_folding", "conv_add_fusion", "matmul_add_fusion", "hardswish_fusion",
                   "activation_fusion", "transpose_optimization"}));
  for (const PassEntry& e : pass_registry()) {
    const int expected = e.name == "transpose_optimization" ? kLevelAll
                         : e.name.find("fusion") != std::string::npos ||
                                 e.name == "conv_bn_folding" || e.name == "qdq_passthrough"
                             ? kLevelExtended
                             : kLevelBasic;
    EXPECT_EQ(e.min_level, expected) << e.name;
  }
}

// Removes one node per application (the last one) until `keep` nodes remain: a pass
// that needs several iterations to reach its fixed point.
class TrimOneNode final : public Pass {
 public:
  TrimOneNode(size_t keep, int max_iterations) : keep_(keep), max_iterations_(max_iterations) {}
  std::string name() const override { return "trim_one"; }
  int max_iterations() const override { return max_iterations_; }
  Result<int> apply(ir::Graph& g, const PassContext&) override {
    if (g.node_count() <= keep_) return 0;
    std::vector<bool> remove(g.node_count(), false);
    remove.back() = true;
    g.erase_nodes(remove);
    g.rebuild_links();
    return 1;
  }

 private:
  size_t keep_;
  int max_iterations_;
};

class FailingPass final : public Pass {
 public:
  std::string name() const override { return "always_fails"; }
  Result<int> apply(ir::Graph&, const PassContext&) override {
    return internal_error("node 'n' (Foo): broken");
  }
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
  EXPECT_EQ(p.changed_summary(), Names({"trim_one: 4 rewrites"}));
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
