// If/Loop bodies: recursive conversion and outer-scope captures.
#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using testing::add_input;
using testing::add_node;
using testing::add_output;
using ::testing::HasSubstr;
using testing::node_named;
using testing::TempDir;
using testing::value_named;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

Result<ir::Model> load(const onnx::ModelProto& m, const LoadOptions& options = {}) {
  TempDir dir;
  return testing::save_and_load(m, dir, options);
}

onnx::GraphProto* add_graph_attr(onnx::NodeProto* n, const std::string& name) {
  return testing::add_attr(n, name, onnx::AttributeProto::GRAPH)->mutable_g();
}

// main: t = Relu(x); y = If(cond) { then: t + one (one: the body's initializer),
//                                  else: Identity(x) }
onnx::ModelProto if_model() {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_input(g, "cond", kBool, {});
  add_node(g, "Relu", {"x"}, {"t"}, "relu");
  auto* if_node = add_node(g, "If", {"cond"}, {"y"}, "branch");
  onnx::GraphProto* then_g = add_graph_attr(if_node, "then_branch");
  then_g->set_name("then");
  *then_g->add_initializer() = testing::float_tensor("one", {}, {1.f});
  add_node(*then_g, "Add", {"t", "one"}, {"then_out"}, "then_add");
  add_output(*then_g, "then_out", kFloat, {int64_t{2}});
  onnx::GraphProto* else_g = add_graph_attr(if_node, "else_branch");
  else_g->set_name("else");
  add_node(*else_g, "Identity", {"x"}, {"else_out"}, "else_id");
  add_output(*else_g, "else_out", kFloat, {int64_t{2}});
  add_output(g, "y", kFloat, {int64_t{2}});
  return m;
}

TEST(Subgraphs, IfBodiesCaptureOuterValues) {
  auto r = load(if_model());
  ASSERT_LOADED(r);
  const ir::Graph& main = *r->graph;
  const ir::Node* branch = node_named(main, "branch");
  ASSERT_NE(branch, nullptr);
  const ir::Attribute* then_attr = branch->attr("then_branch");
  ASSERT_NE(then_attr, nullptr);
  EXPECT_EQ(then_attr->type, ir::AttrType::kGraph);
  ASSERT_EQ(then_attr->graphs.size(), 1u);
  const ir::Graph& then_g = *then_attr->graphs[0];
  EXPECT_EQ(then_g.name, "then");
  EXPECT_TRUE(then_g.inputs.empty());

  const ir::Value& captured = value_named(then_g, "t");
  EXPECT_TRUE(captured.outer_scope);
  EXPECT_FALSE(captured.is_constant());
  EXPECT_EQ(captured.dtype, DataType::kFloat32);  // copied from the main graph's value
  EXPECT_EQ(captured.shape.to_string(), "[2]");
  const ir::Value& one = value_named(then_g, "one");
  EXPECT_TRUE(one.is_constant());
  EXPECT_FALSE(one.outer_scope);
  ASSERT_EQ(then_g.outputs.size(), 1u);
  EXPECT_EQ(then_g.value(then_g.outputs[0]).name, "then_out");

  const ir::Graph& else_g = *branch->attr("else_branch")->graphs.at(0);
  EXPECT_TRUE(value_named(else_g, "x").outer_scope);

  // The If depends on what its bodies capture.
  EXPECT_EQ(main.implicit_inputs(static_cast<ir::NodeId>(branch - main.nodes().data())).size(), 2u);
  EXPECT_TRUE(main.validate().is_ok()) << main.validate().message();
}

TEST(Subgraphs, NodeUsingAnOuterValueIsSortedAfterItsProducer) {
  onnx::ModelProto m = if_model();
  auto* nodes = m.mutable_graph()->mutable_node();
  nodes->SwapElements(0, 1);  // the If now comes before the Relu whose output it captures
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(testing::node_names(*r->graph), (std::vector<std::string>{"relu", "branch"}));
}

TEST(Subgraphs, CapturesPassThroughEveryEnclosingBody) {
  // main: t = Relu(x); If(c) { then: If(c) { then: Neg(t) } else: Identity(x) }
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_input(g, "c", kBool, {});
  add_node(g, "Relu", {"x"}, {"t"}, "relu");
  auto* outer_if = add_node(g, "If", {"c"}, {"y"}, "outer");
  onnx::GraphProto* outer_then = add_graph_attr(outer_if, "then_branch");
  outer_then->set_name("outer_then");
  auto* inner_if = add_node(*outer_then, "If", {"c"}, {"inner_y"}, "inner");
  onnx::GraphProto* inner_then = add_graph_attr(inner_if, "then_branch");
  inner_then->set_name("inner_then");
  add_node(*inner_then, "Neg", {"t"}, {"neg_t"}, "neg");
  add_output(*inner_then, "neg_t", kFloat, {int64_t{2}});
  onnx::GraphProto* inner_else = add_graph_attr(inner_if, "else_branch");
  inner_else->set_name("inner_else");
  add_node(*inner_else, "Identity", {"x"}, {"id_x"}, "idx");
  add_output(*inner_else, "id_x", kFloat, {int64_t{2}});
  add_output(*outer_then, "inner_y", kFloat, {int64_t{2}});
  onnx::GraphProto* outer_else = add_graph_attr(outer_if, "else_branch");
  outer_else->set_name("outer_else");
  add_node(*outer_else, "Identity", {"x"}, {"ox"}, "oid");
  add_output(*outer_else, "ox", kFloat, {int64_t{2}});
  add_output(g, "y", kFloat, {int64_t{2}});

  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Graph& middle = *node_named(*r->graph, "outer")->attr("then_branch")->graphs.at(0);
  // The middle body never names t or x itself, but its If node needs them.
  EXPECT_TRUE(value_named(middle, "t").outer_scope);
  EXPECT_TRUE(value_named(middle, "x").outer_scope);
  const ir::Graph& innermost = *node_named(middle, "inner")->attr("then_branch")->graphs.at(0);
  EXPECT_TRUE(value_named(innermost, "t").outer_scope);
  EXPECT_EQ(value_named(innermost, "t").dtype, DataType::kFloat32);
  // And the main graph sees the If reading t.
  auto consumers = r->graph->consumers();
  const auto& readers = consumers[*r->graph->find_value("t")];
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(r->graph->node(readers[0]).name, "outer");
}

TEST(Subgraphs, UndefinedNameInABodyIsAnErrorNamingThePath) {
  onnx::ModelProto m = if_model();
  auto* then_g = m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
  then_g->mutable_node(0)->set_input(0, "nowhere");
  auto r = load(m, LoadOptions{.run_checker = true, .run_shape_inference = false});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("node 'branch' (If): attribute 'then_branch': node 'then_add' (Add): "
                        "input 0 'nowhere'"));
}

TEST(Subgraphs, UnnamedBodyNodesAreNamedAfterTheirPath) {
  onnx::ModelProto m = if_model();
  m.mutable_graph()->mutable_node(1)->clear_name();
  m.mutable_graph()
      ->mutable_node(1)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_node(0)
      ->clear_name();
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Node* branch = node_named(*r->graph, "If_1");
  ASSERT_NE(branch, nullptr);
  const ir::Graph& then_g = *branch->attr("then_branch")->graphs.at(0);
  EXPECT_EQ(then_g.nodes().at(0).name, "If_1/then_branch/Add_0");
}

TEST(Subgraphs, LoopBodyInputsAndCarriedValues) {
  // y = Loop(trip, cond, v0) { body(i, c, v): v' = v + step (step captured) }
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "v0", kFloat, {int64_t{2}});
  add_input(g, "step", kFloat, {int64_t{2}});
  onnx::TensorProto trip = testing::make_tensor("trip", onnx::TensorProto::INT64, {});
  trip.add_int64_data(3);
  *g.add_initializer() = trip;
  onnx::TensorProto cond = testing::make_tensor("cond", kBool, {});
  cond.add_int32_data(1);
  *g.add_initializer() = cond;
  auto* loop = add_node(g, "Loop", {"trip", "cond", "v0"}, {"y"}, "loop");
  onnx::GraphProto* body = add_graph_attr(loop, "body");
  body->set_name("body");
  add_input(*body, "i", onnx::TensorProto::INT64, {});
  add_input(*body, "c", kBool, {});
  add_input(*body, "v", kFloat, {int64_t{2}});
  add_node(*body, "Identity", {"c"}, {"c_out"}, "keep_going");
  add_node(*body, "Add", {"v", "step"}, {"v_out"}, "accumulate");
  add_output(*body, "c_out", kBool, {});
  add_output(*body, "v_out", kFloat, {int64_t{2}});
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Graph& b = *node_named(*r->graph, "loop")->attr("body")->graphs.at(0);
  ASSERT_EQ(b.inputs.size(), 3u);
  EXPECT_EQ(b.value(b.inputs[0]).name, "i");
  EXPECT_EQ(b.value(b.inputs[2]).dtype, DataType::kFloat32);
  EXPECT_TRUE(value_named(b, "step").outer_scope);
  EXPECT_FALSE(value_named(b, "v").outer_scope);
  ASSERT_EQ(b.outputs.size(), 2u);
  EXPECT_EQ(b.value(b.outputs[1]).name, "v_out");
}

}  // namespace
}  // namespace infer::onnx_io
