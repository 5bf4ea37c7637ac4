// Graph tables: values, names, producers, consumers, implicit inputs, erasing; Model.
#include <gtest/gtest.h>

#include "graph_builder.hpp"

namespace infer::ir {
namespace {

using testing::attach_body;
using testing::capturing_body;
using testing::input;
using testing::node;
using testing::node_names;
using testing::value;

TEST(Graph, FindsValuesByName) {
  Graph g;
  ValueId a = value(g, "a");
  ValueId b = value(g, "b");
  EXPECT_EQ(g.value_count(), 2u);
  EXPECT_EQ(g.find_value("a"), a);
  EXPECT_EQ(g.find_value("b"), b);
  EXPECT_FALSE(g.find_value("c").has_value());
}

TEST(Graph, RenameValueUpdatesTheIndex) {
  Graph g;
  ValueId a = value(g, "a");
  g.rename_value(a, "renamed");
  EXPECT_EQ(g.find_value("renamed"), a);
  EXPECT_FALSE(g.find_value("a").has_value());
}

TEST(Graph, DirectRenameIsNeverAnsweredWithTheOldName) {
  Graph g;
  ValueId a = value(g, "a");
  g.value(a).name = "z";
  EXPECT_FALSE(g.find_value("a").has_value());
  g.rebuild_links();
  EXPECT_EQ(g.find_value("z"), a);
}

TEST(Graph, AddNodeAndRebuildLinksSetProducers) {
  Graph g;
  input(g, "x");
  NodeId relu = node(g, "relu", "Relu", {"x"}, {"t"});
  NodeId neg = node(g, "neg", "Neg", {"t"}, {"y"});
  EXPECT_EQ(g.value(*g.find_value("t")).producer, relu);
  EXPECT_EQ(g.value(*g.find_value("y")).producer, neg);
  EXPECT_EQ(g.value(*g.find_value("x")).producer, kNoNode);

  // Rewire by hand: neg now writes a new value; the old one loses its producer.
  ValueId y2 = value(g, "y2");
  g.node(neg).outputs[0] = y2;
  g.rebuild_links();
  EXPECT_EQ(g.value(y2).producer, neg);
  EXPECT_EQ(g.value(*g.find_value("y")).producer, kNoNode);
}

TEST(Graph, ConsumersListEachReaderOnce) {
  Graph g;
  input(g, "x");
  NodeId relu = node(g, "relu", "Relu", {"x"}, {"t"});
  NodeId mul = node(g, "mul", "Mul", {"t", "t"}, {"u"});
  NodeId add = node(g, "add", "Add", {"x", "u"}, {"y"});
  auto c = g.consumers();
  ASSERT_EQ(c.size(), g.value_count());
  EXPECT_EQ(c[*g.find_value("x")], (std::vector<NodeId>{relu, add}));
  EXPECT_EQ(c[*g.find_value("t")], (std::vector<NodeId>{mul}));
  EXPECT_EQ(c[*g.find_value("u")], (std::vector<NodeId>{add}));
  EXPECT_TRUE(c[*g.find_value("y")].empty());
}

TEST(Graph, OmittedOptionalInputsAreSkipped) {
  Graph g;
  input(g, "x");
  NodeId clip = node(g, "clip", "Clip", {"x", "", ""}, {"y"});
  EXPECT_EQ(g.node(clip).inputs[1], kNoValue);
  auto c = g.consumers();
  EXPECT_EQ(c[*g.find_value("x")], (std::vector<NodeId>{clip}));
}

TEST(Graph, BodyCapturesAreImplicitInputsAndConsumers) {
  Graph g;
  input(g, "x");
  input(g, "cond");
  NodeId relu = node(g, "relu", "Relu", {"x"}, {"t"});
  NodeId if_node = node(g, "if", "If", {"cond"}, {"y"});
  attach_body(g, if_node, capturing_body("t"));
  EXPECT_EQ(g.implicit_inputs(if_node), (std::vector<ValueId>{*g.find_value("t")}));
  EXPECT_TRUE(g.implicit_inputs(relu).empty());
  auto c = g.consumers();
  EXPECT_EQ(c[*g.find_value("t")], (std::vector<NodeId>{if_node}));
  EXPECT_EQ(c[*g.find_value("cond")], (std::vector<NodeId>{if_node}));
}

// Three levels: the top graph's If holds a middle body whose own If holds an inner body
// reading "t" (a top-level value) and "m" (a value of the middle body). The middle body
// declares neither capture, as graphs built by passes or by hand may not: "t" is still an
// implicit input of the top If, "m" is not (the middle body defines it), and the middle
// body's inner If has both "m" and, through the middle body's free names, nothing of the
// top graph's ids.
TEST(Graph, CapturesCountAtAnyDepthWhetherOrNotTheBodiesBetweenDeclareThem) {
  Graph g;
  input(g, "x");
  input(g, "cond");
  node(g, "relu", "Relu", {"x"}, {"t"});
  node(g, "neg", "Neg", {"x"}, {"unread"});
  NodeId top_if = node(g, "if", "If", {"cond"}, {"y"});

  auto middle = std::make_shared<Graph>();
  middle->name = "middle";
  Value cond;
  cond.name = "cond";
  cond.outer_scope = true;
  middle->add_value(std::move(cond));
  node(*middle, "make_m", "Identity", {"cond"}, {"m"});
  NodeId inner_if = node(*middle, "inner_if", "If", {"cond"}, {"mid_out"});
  auto inner = std::make_shared<Graph>();
  inner->name = "inner";
  for (const char* name : {"t", "m"}) {
    Value cap;
    cap.name = name;
    cap.outer_scope = true;
    inner->add_value(std::move(cap));
  }
  node(*inner, "sum", "Add", {"t", "m"}, {"inner_out"});
  inner->outputs.push_back(*inner->find_value("inner_out"));
  attach_body(*middle, inner_if, inner);
  middle->outputs.push_back(*middle->find_value("mid_out"));
  attach_body(g, top_if, middle);
  g.rebuild_links();

  EXPECT_EQ(inner->free_names(), (std::vector<std::string>{"t", "m"}));
  EXPECT_EQ(middle->free_names(), (std::vector<std::string>{"cond", "t"}));
  EXPECT_EQ(middle->implicit_inputs(inner_if), (std::vector<ValueId>{*middle->find_value("m")}));
  EXPECT_EQ(g.implicit_inputs(top_if),
            (std::vector<ValueId>{*g.find_value("cond"), *g.find_value("t")}));
  auto all = g.all_implicit_inputs();
  ASSERT_EQ(all.size(), g.node_count());
  EXPECT_EQ(all[top_if], g.implicit_inputs(top_if));
  EXPECT_TRUE(all[0].empty());
  auto c = g.consumers();
  EXPECT_EQ(c[*g.find_value("t")], (std::vector<NodeId>{top_if}));
  EXPECT_TRUE(c[*g.find_value("unread")].empty());
}

TEST(Graph, EraseNodesRenumbersAndUnlinks) {
  Graph g;
  input(g, "x");
  node(g, "a", "Relu", {"x"}, {"ta"});
  node(g, "b", "Relu", {"ta"}, {"tb"});
  node(g, "c", "Relu", {"x"}, {"tc"});
  g.erase_nodes({false, true});  // shorter than the node list: "c" stays
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(g.value(*g.find_value("tb")).producer, kNoNode);
  EXPECT_EQ(g.value(*g.find_value("tc")).producer, 1u);
  EXPECT_EQ(g.value_count(), 4u);  // values stay
}

TEST(Model, OpsetTreatsAiOnnxAsTheDefaultDomain) {
  Model m;
  m.opsets = {{"", 13}, {"com.microsoft", 1}};
  EXPECT_EQ(m.opset(""), 13);
  EXPECT_EQ(m.opset("ai.onnx"), 13);
  EXPECT_EQ(m.opset("com.microsoft"), 1);
  EXPECT_EQ(m.opset("ai.onnx.ml"), 0);
  Model aliased;
  aliased.opsets = {{"ai.onnx", 11}};
  EXPECT_EQ(aliased.opset(""), 11);
}

}  // namespace
}  // namespace infer::ir
