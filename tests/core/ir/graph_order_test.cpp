// topological_sort() and validate() on hand-built graphs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_builder.hpp"

namespace infer::ir {
namespace {

using testing::attach_body;
using testing::capturing_body;
using ::testing::HasSubstr;
using testing::input;
using testing::node;
using testing::node_names;
using ::testing::Not;

TEST(TopologicalSort, KeepsASortedGraphAsItIs) {
  Graph g;
  input(g, "x");
  node(g, "a", "Relu", {"x"}, {"ta"});
  node(g, "b", "Relu", {"x"}, {"tb"});
  node(g, "c", "Add", {"ta", "tb"}, {"y"});
  ASSERT_TRUE(g.topological_sort().is_ok());
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(TopologicalSort, ReordersStablyAndRelinks) {
  Graph g;
  input(g, "x");
  node(g, "C", "Relu", {"b"}, {"c"});
  node(g, "D", "Relu", {"x"}, {"d"});
  node(g, "A", "Relu", {"x"}, {"a"});
  node(g, "B", "Relu", {"a"}, {"b"});
  ASSERT_TRUE(g.topological_sort().is_ok());
  // D and A are ready first and keep their relative order; B needs A; C needs B.
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"D", "A", "B", "C"}));
  EXPECT_EQ(g.value(*g.find_value("c")).producer, 3u);
  EXPECT_EQ(g.value(*g.find_value("a")).producer, 1u);
  EXPECT_TRUE(g.validate().is_ok()) << g.validate().message();
}

TEST(TopologicalSort, CapturedValuesAreDependencies) {
  Graph g;
  input(g, "x");
  input(g, "cond");
  NodeId if_node = node(g, "if", "If", {"cond"}, {"y"});
  node(g, "relu", "Relu", {"x"}, {"t"});
  attach_body(g, if_node, capturing_body("t"));
  ASSERT_TRUE(g.topological_sort().is_ok());
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"relu", "if"}));
}

TEST(TopologicalSort, NamesTheNodesOfACycleAndNotItsDownstream) {
  Graph g;
  g.name = "main";
  input(g, "x");
  node(g, "A", "Add", {"x", "c"}, {"a"});
  node(g, "B", "Relu", {"a"}, {"b"});
  node(g, "C", "Relu", {"b"}, {"c"});
  node(g, "D", "Relu", {"c"}, {"d"});
  Status s = g.topological_sort();
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph 'main' has a cycle"));
  // Every edge of the cycle, in data-flow direction, whichever node the path starts at.
  EXPECT_THAT(s.message(), HasSubstr("node 'A' (Add) -> node 'B' (Relu)"));
  EXPECT_THAT(s.message(), HasSubstr("node 'B' (Relu) -> node 'C' (Relu)"));
  EXPECT_THAT(s.message(), HasSubstr("node 'C' (Relu) -> node 'A' (Add)"));
  EXPECT_THAT(s.message(), Not(HasSubstr("'D'")));
  // A failed sort leaves the graph as it was.
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"A", "B", "C", "D"}));
}

TEST(TopologicalSort, NodeReadingItsOwnOutputIsACycle) {
  Graph g;
  node(g, "loop", "Relu", {"v"}, {"v"});
  Status s = g.topological_sort();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("node 'loop' (Relu) -> node 'loop' (Relu)"));
}

TEST(TopologicalSort, RejectsAValueWithTwoProducers) {
  Graph g;
  input(g, "x");
  node(g, "p1", "Relu", {"x"}, {"t"});
  node(g, "p2", "Neg", {"x"}, {"t"});
  Status s = g.topological_sort();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(),
              HasSubstr("value 't' is produced by both node 'p1' (Relu) and node 'p2' (Neg)"));
}

TEST(Validate, AcceptsAWellFormedGraph) {
  Graph g;
  input(g, "x");
  node(g, "a", "Relu", {"x"}, {"y"});
  g.outputs.push_back(*g.find_value("y"));
  EXPECT_TRUE(g.validate().is_ok());
}

TEST(Validate, RejectsReadingBeforeProducing) {
  Graph g;
  g.name = "g";
  input(g, "x");
  node(g, "b", "Relu", {"t"}, {"y"});
  node(g, "a", "Relu", {"x"}, {"t"});
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("graph 'g': node 'b' (Relu): input 0 't' is read before"));
}

TEST(Validate, RejectsUndefinedGraphOutput) {
  Graph g;
  input(g, "x");
  g.outputs.push_back(testing::value(g, "nowhere"));
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("graph output 'nowhere' is not defined"));
}

TEST(Validate, RejectsOverwritingAGraphInput) {
  Graph g;
  input(g, "x");
  node(g, "a", "Relu", {"x"}, {"x"});
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("node 'a' (Relu) produces 'x'"));
}

TEST(Validate, RejectsStaleProducerLinks) {
  Graph g;
  input(g, "x");
  NodeId a = node(g, "a", "Relu", {"x"}, {"t"});
  g.mutable_nodes()[a].outputs[0] = testing::value(g, "u");  // no rebuild_links()
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("stale producer"));
  g.rebuild_links();
  EXPECT_TRUE(g.validate().is_ok());
}

TEST(Validate, ChecksBodiesToo) {
  Graph g;
  input(g, "cond");
  NodeId if_node = node(g, "if", "If", {"cond"}, {"y"});
  auto body = std::make_shared<Graph>();
  body->name = "then";
  node(*body, "inner", "Relu", {"ghost"}, {"z"});
  attach_body(g, if_node, body);
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("node 'if' (If): attribute 'then_branch': graph 'then': "
                                     "node 'inner' (Relu): input 0 'ghost'"));
}

}  // namespace
}  // namespace infer::ir
