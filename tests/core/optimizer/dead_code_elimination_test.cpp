#include "optimizer/dead_code_elimination.hpp"

#include <gtest/gtest.h>

#include "graph_builder.hpp"

namespace infer::optimizer {
namespace {

using namespace testing;

int run(ir::Graph& g) { return apply_pass<DeadCodeElimination>(g, {}); }

TEST(DeadCodeElimination, RemovesAWholeDeadChainInOneApplication) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("live", "Relu", {"x"}, {"y"});
  b.node("dead1", "Relu", {"x"}, {"d1"});
  b.node("dead2", "Neg", {"d1"}, {"d2"});
  b.node("dead3", "Add", {"d2", "y"}, {"d3"});
  b.output("y");
  g.rebuild_links();

  ASSERT_GT(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"live"}));
  // Graph inputs are part of the signature and stay even when nothing reads them.
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).name, "x");

  // The result is a fixed point: a second application changes nothing.
  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"live"}));
}

TEST(DeadCodeElimination, KeepsProducersOfGraphOutputsAndTheirInputs) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("a", "Relu", {"x"}, {"a_out"});
  b.node("b", "Neg", {"a_out"}, {"b_out"});
  b.node("c", "Add", {"a_out", "b_out"}, {"c_out"});
  b.output("c_out");
  b.output("a_out");
  g.rebuild_links();

  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"a", "b", "c"}));
}

TEST(DeadCodeElimination, KeepsANodeWhenOnlyOneOfItsOutputsIsUsed) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.node("split", "Split", {"x"}, {"s0", "s1"});
  b.node("use", "Relu", {"s1"}, {"y"});
  b.node("unused", "Relu", {"s0"}, {"z"});
  b.output("y");
  g.rebuild_links();

  ASSERT_GT(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"split", "use"}));
  // Links were rebuilt after the removal: "y" is produced by the node now at index 1.
  EXPECT_EQ(g.value(id_of(g, "y")).producer, 1u);
}

TEST(DeadCodeElimination, EmptyGraphAndGraphWithoutDeadNodesAreUnchanged) {
  ir::Graph g;
  EXPECT_EQ(run(g), 0);
}

// An If node whose branch reads the outer value "cap" by name: the producer of "cap" is
// in use although no node lists it as an input.
std::shared_ptr<ir::Graph> branch_capturing(const std::string& captured, bool with_dead_node) {
  auto body = std::make_shared<ir::Graph>();
  GraphBuilder b(*body);
  b.value(captured, /*outer_scope=*/true);
  b.node("body_relu", "Relu", {captured}, {"body_out"});
  if (with_dead_node) b.node("body_dead", "Neg", {captured}, {"body_dead_out"});
  b.output("body_out");
  body->rebuild_links();
  return body;
}

TEST(DeadCodeElimination, KeepsValuesCapturedBySubgraphsOfLiveNodes) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.input("cond");
  b.node("make_cap", "Relu", {"x"}, {"cap"});
  ir::NodeId if_id = b.node("if", "If", {"cond"}, {"y"});
  g.node(if_id).attributes.push_back(graph_attr("then_branch", branch_capturing("cap", false)));
  g.node(if_id).attributes.push_back(graph_attr("else_branch", branch_capturing("x", false)));
  b.output("y");
  g.rebuild_links();

  EXPECT_EQ(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"make_cap", "if"}));
}

TEST(DeadCodeElimination, CleansSubgraphBodiesAndFollowsCapturesAtAnyDepth) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.input("cond");
  b.node("make_cap", "Relu", {"x"}, {"cap"});
  // The outer If's branch holds another If whose branch captures "cap" from the top
  // graph; the intermediate body does not mention "cap" itself.
  auto middle = std::make_shared<ir::Graph>();
  {
    GraphBuilder mb(*middle);
    mb.value("cond", /*outer_scope=*/true);
    ir::NodeId inner_if = mb.node("inner_if", "If", {"cond"}, {"mid_out"});
    middle->node(inner_if).attributes.push_back(
        graph_attr("then_branch", branch_capturing("cap", /*with_dead_node=*/true)));
    mb.node("mid_dead", "Relu", {"mid_out"}, {"mid_dead_out"});
    mb.output("mid_out");
    middle->rebuild_links();
  }
  ir::NodeId if_id = b.node("if", "If", {"cond"}, {"y"});
  g.node(if_id).attributes.push_back(graph_attr("then_branch", middle));
  b.output("y");
  g.rebuild_links();

  EXPECT_GT(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"make_cap", "if"}));
  EXPECT_EQ(node_names(*middle), Names({"inner_if"}));
  const auto& inner_body = middle->node(0).attributes[0].graphs[0];
  EXPECT_EQ(node_names(*inner_body), Names({"body_relu"}));
}

TEST(DeadCodeElimination, RemovesADeadNodeTogetherWithWhatOnlyItsSubgraphCaptured) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.input("cond");
  b.node("make_cap", "Relu", {"x"}, {"cap"});
  ir::NodeId if_id = b.node("dead_if", "If", {"cond"}, {"unused"});
  g.node(if_id).attributes.push_back(graph_attr("then_branch", branch_capturing("cap", false)));
  b.node("live", "Neg", {"x"}, {"y"});
  b.output("y");
  g.rebuild_links();

  ASSERT_GT(run(g), 0);
  EXPECT_EQ(node_names(g), Names({"live"}));
}

// A constant only dead nodes read gives its bytes back; one a live node reads, one a
// subgraph captures, a graph output that is a constant and a quantization scale keep
// theirs.
TEST(DeadCodeElimination, ReleasesTheDataOfConstantsNothingReads) {
  ir::Graph g;
  GraphBuilder b(g);
  b.input("x");
  b.input("cond");
  b.f32("w_dead", {2}, {1, 2});
  b.f32("w_live", {2}, {3, 4});
  b.f32("w_captured", {2}, {5, 6});
  b.f32("w_unread", {2}, {7, 8});
  b.f32("w_output", {2}, {9, 10});
  b.f32("q_scale", {}, {0.5f});
  b.typed("xq", DataType::kInt8, std::vector<int64_t>{2});
  b.input("xq");
  g.value(id_of(g, "xq")).quant = ir::QuantInfo{};
  g.value(id_of(g, "xq")).quant->scale = id_of(g, "q_scale");
  b.node("dead", "Mul", {"x", "w_dead"}, {"d"});
  b.node("live", "Mul", {"x", "w_live"}, {"y"});
  ir::NodeId if_id = b.node("if", "If", {"cond"}, {"z"});
  g.node(if_id).attributes.push_back(graph_attr("then_branch", branch_capturing("w_captured", false)));
  b.output("y");
  b.output("z");
  b.output("w_output");
  g.rebuild_links();

  EXPECT_EQ(run(g), 1);
  EXPECT_FALSE(val(g, "w_dead").is_constant());
  EXPECT_FALSE(val(g, "w_unread").is_constant());
  EXPECT_TRUE(val(g, "w_live").is_constant());
  EXPECT_TRUE(val(g, "w_captured").is_constant());
  EXPECT_TRUE(val(g, "w_output").is_constant());
  EXPECT_TRUE(val(g, "q_scale").is_constant()) << "a quantization descriptor refers to it";
}

}  // namespace
}  // namespace infer::optimizer
