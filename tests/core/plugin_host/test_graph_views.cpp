#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "plugin_host/graph_views.hpp"
#include "test_graphs.hpp"

namespace infer::host {
namespace {

using testing::add_node;
using testing::add_value;
using testing::f32_tensor;

// x[batch,4] (input), w[4] (constant)
// n0: a = Add(x, w)     n1: b = Relu(a)     n2: c = Mul(b, x)     n3: d = Sigmoid(a)
// graph outputs: c, d
struct Diamond {
  ir::Model model;
  ir::TensorDataPtr w_data;
  ir::ValueId x, w, a, b, c, d;
};

Diamond diamond() {
  Diamond t;
  t.model.opsets = {{"", 17}, {"com.microsoft", 1}};
  t.model.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *t.model.graph;
  g.name = "diamond";
  t.w_data = f32_tensor({4}, {1, 2, 3, 4});
  t.x = add_value(g, "x", DataType::kFloat32, {ir::Dim::symbol("batch"), ir::Dim::known(4)});
  t.w = add_value(g, "w", DataType::kFloat32, {ir::Dim::known(4)}, t.w_data);
  t.a = add_value(g, "a", DataType::kFloat32, {ir::Dim::symbol("batch"), ir::Dim::known(4)});
  t.b = add_value(g, "b", DataType::kFloat32, {ir::Dim::symbol("batch"), ir::Dim::known(4)});
  t.c = add_value(g, "c", DataType::kFloat32, {ir::Dim::symbol("batch"), ir::Dim::known(4)});
  t.d = add_value(g, "d", DataType::kFloat32, {});
  g.value(t.d).shape.dims.reset();  // rank unknown
  add_node(g, "n0", "Add", {t.x, t.w}, {t.a});
  add_node(g, "n1", "Relu", {t.a}, {t.b});
  add_node(g, "n2", "Mul", {t.b, t.x}, {t.c});
  add_node(g, "n3", "Sigmoid", {t.a}, {t.d}, "com.microsoft");
  g.inputs = {t.x};
  g.outputs = {t.c, t.d};
  return t;
}

ir::Attribute attr(const std::string& name, ir::AttrType type) {
  ir::Attribute a;
  a.name = name;
  a.type = type;
  return a;
}

std::vector<const infer_value_view*> list(const infer_value_view* const* p, size_t n) {
  return std::vector<const infer_value_view*>(p, p + n);
}

TEST(GraphViews, ValuesAreIdentifiedByPointer) {
  Diamond t = diamond();
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  const GraphViewSet& s = **set;
  ASSERT_EQ(s.node_count(), 4u);
  EXPECT_EQ(s.value_count(), 6u);
  EXPECT_EQ(s.node(0)->outputs[0], s.value(t.a));
  EXPECT_EQ(s.node(1)->inputs[0], s.value(t.a));
  EXPECT_EQ(s.node(3)->inputs[0], s.value(t.a));
  EXPECT_EQ(s.node(0)->inputs[0], s.node(2)->inputs[1]);  // x, used twice
  EXPECT_EQ(s.value(ir::kNoValue), nullptr);
  EXPECT_EQ(s.node(4), nullptr);
  const infer_graph_view* g = s.graph();
  EXPECT_STREQ(g->name, "diamond");
  ASSERT_EQ(g->num_nodes, 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(g->nodes[i], s.node(static_cast<ir::NodeId>(i)));
    EXPECT_EQ(g->nodes[i]->index, i);
  }
  EXPECT_EQ(list(g->inputs, g->num_inputs), (std::vector<const infer_value_view*>{s.value(t.x)}));
  EXPECT_EQ(list(g->outputs, g->num_outputs),
            (std::vector<const infer_value_view*>{s.value(t.c), s.value(t.d)}));
}

TEST(GraphViews, NodeViewsCarryNamesDomainsAndOpsets) {
  Diamond t = diamond();
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  const infer_node_view* n0 = (*set)->node(0);
  EXPECT_EQ(n0->struct_size, sizeof(infer_node_view));
  EXPECT_STREQ(n0->name, "n0");
  EXPECT_STREQ(n0->op_type, "Add");
  EXPECT_STREQ(n0->domain, "");
  EXPECT_EQ(n0->opset, 17);
  EXPECT_EQ(n0->num_inputs, 2u);
  EXPECT_EQ(n0->num_outputs, 1u);
  const infer_node_view* n3 = (*set)->node(3);
  EXPECT_STREQ(n3->domain, "com.microsoft");
  EXPECT_EQ(n3->opset, 1);
  const infer_graph_view* g = (*set)->graph();
  ASSERT_EQ(g->num_opsets, 2u);
  EXPECT_STREQ(g->opsets[0].domain, "");
  EXPECT_EQ(g->opsets[0].version, 17);
  EXPECT_STREQ(g->opsets[1].domain, "com.microsoft");
  EXPECT_EQ(g->opsets[1].version, 1);
}

TEST(GraphViews, UnknownDomainHasOpsetZero) {
  Diamond t = diamond();
  t.model.graph->node(3).domain = "ai.unknown";
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  EXPECT_EQ((*set)->node(3)->opset, 0);
}

TEST(GraphViews, ShapesKeepSymbolicDimsAndUnknownRanks) {
  Diamond t = diamond();
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  const infer_value_view* x = (*set)->value(t.x);
  EXPECT_STREQ(x->name, "x");
  EXPECT_EQ(x->dtype, INFER_DTYPE_FLOAT32);
  ASSERT_EQ(x->rank, 2);
  EXPECT_EQ(x->dims[0], -1);
  EXPECT_EQ(x->dims[1], 4);
  ASSERT_NE(x->dim_params, nullptr);
  EXPECT_STREQ(x->dim_params[0], "batch");
  EXPECT_EQ(x->dim_params[1], nullptr);
  EXPECT_EQ(x->const_data, nullptr);
  EXPECT_EQ(x->quant, nullptr);
  const infer_value_view* w = (*set)->value(t.w);
  ASSERT_EQ(w->rank, 1);
  EXPECT_EQ(w->dim_params, nullptr);  // no symbolic dim at all
  const infer_value_view* d = (*set)->value(t.d);
  EXPECT_EQ(d->rank, -1);
}

TEST(GraphViews, ConstantsPointIntoTheIrDataWithoutCopies) {
  Diamond t = diamond();
  std::weak_ptr<const ir::TensorData> weak = t.w_data;
  const void* bytes = t.w_data->data();
  std::shared_ptr<const void> keeper;
  const ir::ValueId wid = t.w;
  {
    auto set = GraphViewSet::build(t.model);
    ASSERT_TRUE(set.is_ok());
    const infer_value_view* w = (*set)->value(wid);
    EXPECT_EQ(w->const_data, bytes);
    EXPECT_EQ(w->const_size, 4 * sizeof(float));
    keeper = (*set)->constants_keeper();
    t = Diamond();  // drop the IR: the set alone keeps w alive
    EXPECT_FALSE(weak.expired());
    EXPECT_EQ(static_cast<const float*>((*set)->value(wid)->const_data)[3], 4.0f);
  }
  EXPECT_FALSE(weak.expired());  // the keeper still holds it
  EXPECT_EQ(static_cast<const float*>(bytes)[2], 3.0f);
  keeper.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(GraphViews, PartitionInputsAndOutputsAreDeterministic) {
  Diamond t = diamond();
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  GraphViewSet& s = **set;
  {
    // {n1, n2}: reads a (from n0) and x; b stays inside; c is a graph output.
    auto v = s.build_partition_view(std::vector<ir::NodeId>{2, 1}, {"p12", {}});
    ASSERT_TRUE(v.is_ok()) << v.status().message();
    const infer_graph_view* g = *v;
    EXPECT_STREQ(g->name, "p12");
    ASSERT_EQ(g->num_nodes, 2u);
    EXPECT_STREQ(g->nodes[0]->name, "n1");
    EXPECT_STREQ(g->nodes[1]->name, "n2");
    EXPECT_EQ(g->nodes[0]->index, 0u);
    EXPECT_EQ(g->nodes[1]->index, 1u);
    EXPECT_EQ(list(g->inputs, g->num_inputs),
              (std::vector<const infer_value_view*>{s.value(t.a), s.value(t.x)}));
    EXPECT_EQ(list(g->outputs, g->num_outputs),
              (std::vector<const infer_value_view*>{s.value(t.c)}));
    // Same pointers as the whole graph's views: identity holds across views.
    EXPECT_EQ(g->nodes[1]->inputs[0], g->nodes[0]->outputs[0]);
    EXPECT_EQ(g->nodes[0]->outputs[0], s.value(t.b));
  }
  {
    // {n0, n1}: the constant w is no input; a and b both escape to nodes outside.
    auto v = s.build_partition_view(std::vector<ir::NodeId>{0, 1});
    ASSERT_TRUE(v.is_ok());
    const infer_graph_view* g = *v;
    EXPECT_EQ(list(g->inputs, g->num_inputs), (std::vector<const infer_value_view*>{s.value(t.x)}));
    EXPECT_EQ(list(g->outputs, g->num_outputs),
              (std::vector<const infer_value_view*>{s.value(t.a), s.value(t.b)}));
  }
  {
    // {n3, n0}: a escapes to n1 and d is a graph output.
    auto v = s.build_partition_view(std::vector<ir::NodeId>{3, 0});
    ASSERT_TRUE(v.is_ok());
    const infer_graph_view* g = *v;
    EXPECT_EQ(list(g->inputs, g->num_inputs), (std::vector<const infer_value_view*>{s.value(t.x)}));
    EXPECT_EQ(list(g->outputs, g->num_outputs),
              (std::vector<const infer_value_view*>{s.value(t.a), s.value(t.d)}));
    EXPECT_EQ(g->num_opsets, 2u);
  }
  {
    // Everything: inputs and outputs are the graph's.
    auto v = s.build_partition_view(std::vector<ir::NodeId>{0, 1, 2, 3});
    ASSERT_TRUE(v.is_ok());
    const infer_graph_view* g = *v;
    EXPECT_EQ(list(g->inputs, g->num_inputs), (std::vector<const infer_value_view*>{s.value(t.x)}));
    EXPECT_EQ(list(g->outputs, g->num_outputs),
              (std::vector<const infer_value_view*>{s.value(t.c), s.value(t.d)}));
  }
  // The whole graph's node indices are untouched by partition views.
  EXPECT_EQ(s.node(1)->index, 1u);
}

TEST(GraphViews, PartitionViewRejectsBadNodeLists) {
  Diamond t = diamond();
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  auto empty = (*set)->build_partition_view(std::vector<ir::NodeId>{}, {"p", {}});
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(), "partition 'p': no nodes");
  auto dup = (*set)->build_partition_view(std::vector<ir::NodeId>{1, 1});
  EXPECT_EQ(dup.status().message(), "partition: node id 1 is listed twice");
  auto range = (*set)->build_partition_view(std::vector<ir::NodeId>{7});
  EXPECT_EQ(range.status().message(),
            "partition: node id 7 is out of range (the graph has 4 nodes)");
  PartitionViewOptions bad;
  bad.prepacked[t.x] = PrepackedRef{nullptr, 0};
  auto not_const = (*set)->build_partition_view(std::vector<ir::NodeId>{0}, bad);
  EXPECT_EQ(not_const.status().code(), StatusCode::kInvalidArgument);
}

TEST(GraphViews, PrepackedConstantsAreVisibleOnlyInTheirPartition) {
  Diamond t = diamond();
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  const float packed[4] = {10, 20, 30, 40};
  PartitionViewOptions opts;
  opts.name = "packed";
  opts.prepacked[t.w] = PrepackedRef{packed, sizeof packed};
  auto v = (*set)->build_partition_view(std::vector<ir::NodeId>{0, 1}, opts);
  ASSERT_TRUE(v.is_ok()) << v.status().message();
  const infer_value_view* w = (*v)->nodes[0]->inputs[1];
  EXPECT_EQ(w->prepacked_data, packed);
  EXPECT_EQ(w->prepacked_size, sizeof packed);
  EXPECT_EQ(w->const_data, t.w_data->data());
  EXPECT_EQ((*v)->nodes[0]->inputs[0], (*set)->value(t.x));  // others still shared
  EXPECT_EQ((*set)->value(t.w)->prepacked_data, nullptr);
  EXPECT_EQ((*set)->node(0)->inputs[1]->prepacked_data, nullptr);
}

// n0: a = MatMul(x, w_one)   n1: b = MatMul(a, w_shared)   n2: c = Add(b, w_shared)
// n3: d = Mul(w_twice, w_twice)   n4: e = Add(c, w_out)   graph outputs: e, d, w_out.
// Each constant meets one rule of release_constant: w_one has one reader through one
// input; w_shared has two readers; w_twice one reader through two inputs; w_out is a
// graph output.
TEST(GraphViews, ReleaseConstantFreesOnlyAValueWithOneReaderThroughOneInput) {
  ir::Model m;
  m.opsets[""] = 17;
  m.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *m.graph;
  auto dims = [] { return std::vector<ir::Dim>{ir::Dim::known(2), ir::Dim::known(2)}; };
  auto x = add_value(g, "x", DataType::kFloat32, dims());
  auto w_one = add_value(g, "w_one", DataType::kFloat32, dims(), f32_tensor({2, 2}, {1, 2, 3, 4}));
  auto w_shared =
      add_value(g, "w_shared", DataType::kFloat32, dims(), f32_tensor({2, 2}, {5, 6, 7, 8}));
  auto w_twice =
      add_value(g, "w_twice", DataType::kFloat32, dims(), f32_tensor({2, 2}, {9, 1, 2, 3}));
  auto w_out = add_value(g, "w_out", DataType::kFloat32, dims(), f32_tensor({2, 2}, {4, 5, 6, 7}));
  auto a = add_value(g, "a", DataType::kFloat32, dims());
  auto b = add_value(g, "b", DataType::kFloat32, dims());
  auto c = add_value(g, "c", DataType::kFloat32, dims());
  auto d = add_value(g, "d", DataType::kFloat32, dims());
  auto e = add_value(g, "e", DataType::kFloat32, dims());
  add_node(g, "n0", "MatMul", {x, w_one}, {a});
  add_node(g, "n1", "MatMul", {a, w_shared}, {b});
  add_node(g, "n2", "Add", {b, w_shared}, {c});
  add_node(g, "n3", "Mul", {w_twice, w_twice}, {d});
  add_node(g, "n4", "Add", {c, w_out}, {e});
  g.inputs = {x};
  g.outputs = {e, d, w_out};
  std::weak_ptr<const ir::TensorData> one_bytes = g.value(w_one).constant;
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  GraphViewSet& views = **set;
  const size_t bytes = 4 * sizeof(float);

  EXPECT_FALSE(views.release_constant(w_shared)) << "two readers";
  EXPECT_FALSE(views.release_constant(w_twice)) << "one reader, two inputs";
  EXPECT_FALSE(views.release_constant(w_out)) << "a graph output";
  EXPECT_FALSE(views.release_constant(x)) << "not a constant";
  EXPECT_FALSE(views.release_constant(999)) << "out of range";
  for (ir::ValueId v : {w_shared, w_twice, w_out})
    EXPECT_EQ(views.value(v)->const_data, g.value(v).constant->data()) << g.value(v).name;

  ASSERT_TRUE(views.release_constant(w_one));
  const infer_value_view* released = views.value(w_one);
  EXPECT_EQ(released->const_data, nullptr);
  EXPECT_EQ(released->const_size, bytes);
  EXPECT_EQ(released->rank, 2);
  EXPECT_EQ(views.node(0)->inputs[1], released) << "the reader's view sees it too";
  EXPECT_FALSE(views.release_constant(w_one)) << "already released";
  // The set no longer holds the bytes: once the IR lets go, they are freed.
  EXPECT_FALSE(one_bytes.expired());
  g.value(w_one).constant.reset();
  EXPECT_TRUE(one_bytes.expired());

  // A partition view built afterwards carries the prepacked form without the original.
  const float packed[4] = {0, 0, 0, 0};
  PartitionViewOptions opts;
  opts.prepacked[w_one] = PrepackedRef{packed, sizeof packed};
  auto v = views.build_partition_view(std::vector<ir::NodeId>{0}, opts);
  ASSERT_TRUE(v.is_ok()) << v.status().message();
  EXPECT_EQ((*v)->nodes[0]->inputs[1]->const_data, nullptr);
  EXPECT_EQ((*v)->nodes[0]->inputs[1]->prepacked_data, packed);
  EXPECT_EQ((*v)->num_inputs, 1u) << "still a constant, not a partition input";
}

TEST(GraphViews, AttributesAreViewedWithTheirTypes) {
  ir::Model m;
  m.opsets[""] = 17;
  m.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *m.graph;
  auto x = add_value(g, "x", DataType::kFloat32, {ir::Dim::known(2)});
  auto y = add_value(g, "y", DataType::kFloat32, {ir::Dim::known(2)});
  ir::Node n;
  n.name = "attrs";
  n.op_type = "Custom";
  n.inputs = {x};
  n.outputs = {y};
  ir::Attribute f = attr("alpha", ir::AttrType::kFloat);
  f.f = 0.25;
  ir::Attribute i = attr("axis", ir::AttrType::kInt);
  i.i = -1;
  ir::Attribute s = attr("mode", ir::AttrType::kString);
  s.s = std::string("a\0b", 3);
  ir::Attribute fs = attr("scales", ir::AttrType::kFloats);
  fs.floats = {1.5, 2.5};
  ir::Attribute is = attr("pads", ir::AttrType::kInts);
  is.ints = {0, 1, 2};
  ir::Attribute ss = attr("names", ir::AttrType::kStrings);
  ss.strings = {"p", "qq"};
  ir::TensorDataPtr tdata = f32_tensor({2}, {7, 8});
  ir::Attribute t = attr("value", ir::AttrType::kTensor);
  t.tensors = {tdata};
  n.attributes = {f, i, s, fs, is, ss, t};
  g.add_node(std::move(n));
  g.inputs = {x};
  g.outputs = {y};

  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  const infer_node_view* v = (*set)->node(0);
  ASSERT_EQ(v->num_attrs, 7u);
  const infer_attr_view* a = v->attrs;
  EXPECT_STREQ(a[0].name, "alpha");
  EXPECT_EQ(a[0].type, INFER_ATTR_FLOAT);
  EXPECT_DOUBLE_EQ(a[0].f, 0.25);
  EXPECT_EQ(a[1].type, INFER_ATTR_INT);
  EXPECT_EQ(a[1].i, -1);
  EXPECT_EQ(a[2].type, INFER_ATTR_STRING);
  ASSERT_EQ(a[2].s_len, 3u);
  EXPECT_EQ(std::memcmp(a[2].s, "a\0b", 3), 0);
  EXPECT_EQ(a[2].s[3], '\0');
  ASSERT_EQ(a[3].count, 2u);
  EXPECT_DOUBLE_EQ(a[3].floats[1], 2.5);
  ASSERT_EQ(a[4].count, 3u);
  EXPECT_EQ(a[4].ints[2], 2);
  ASSERT_EQ(a[5].count, 2u);
  EXPECT_STREQ(a[5].strings[1], "qq");
  ASSERT_EQ(a[6].type, INFER_ATTR_TENSOR);
  ASSERT_EQ(a[6].count, 1u);
  const infer_value_view* tv = a[6].tensors[0];
  EXPECT_EQ(tv->const_data, tdata->data());  // in place, no copy
  EXPECT_EQ(tv->const_size, 8u);
  EXPECT_EQ(tv->rank, 1);
  EXPECT_EQ(tv->dims[0], 2);
  EXPECT_EQ(tv->dtype, INFER_DTYPE_FLOAT32);
}

TEST(GraphViews, SubgraphAttributesAreGraphViewsThatResolveCaptures) {
  ir::Model m;
  m.opsets[""] = 17;
  m.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *m.graph;
  auto cond = add_value(g, "cond", DataType::kBool, {});
  auto x = add_value(g, "x", DataType::kFloat32, {ir::Dim::known(3)});
  auto pre = add_value(g, "pre", DataType::kFloat32, {ir::Dim::known(3)});
  auto out = add_value(g, "out", DataType::kFloat32, {ir::Dim::known(3)});
  add_node(g, "neg", "Neg", {x}, {pre});

  auto body = std::make_shared<ir::Graph>();
  body->name = "then_body";
  ir::Value captured;
  captured.name = "pre";
  captured.dtype = DataType::kFloat32;
  captured.outer_scope = true;
  auto cap = body->add_value(captured);
  auto r = add_value(*body, "r", DataType::kFloat32, {ir::Dim::known(3)});
  add_node(*body, "inner_relu", "Relu", {cap}, {r});
  body->outputs = {r};

  ir::Node if_node;
  if_node.name = "if0";
  if_node.op_type = "If";
  if_node.inputs = {cond};
  if_node.outputs = {out};
  ir::Attribute branch = attr("then_branch", ir::AttrType::kGraph);
  branch.graphs = {body};
  if_node.attributes.push_back(branch);
  g.add_node(std::move(if_node));
  g.inputs = {cond, x};
  g.outputs = {out};

  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  GraphViewSet& s = **set;
  const infer_attr_view& attr = s.node(1)->attrs[0];
  ASSERT_EQ(attr.type, INFER_ATTR_GRAPH);
  ASSERT_EQ(attr.count, 1u);
  const infer_graph_view* sub = attr.graphs[0];
  EXPECT_STREQ(sub->name, "then_body");
  ASSERT_EQ(sub->num_nodes, 1u);
  EXPECT_EQ(sub->num_inputs, 0u);
  ASSERT_EQ(sub->num_outputs, 1u);
  const infer_node_view* inner = sub->nodes[0];
  EXPECT_EQ(inner->opset, 17);
  EXPECT_EQ(inner->index, 0u);
  EXPECT_EQ(inner->outputs[0], sub->outputs[0]);
  // The capture is the enclosing graph's own view of 'pre'.
  EXPECT_EQ(inner->inputs[0], s.value(pre));

  // The If node reads 'pre' implicitly: a partition holding only the If needs it as input.
  auto v = s.build_partition_view(std::vector<ir::NodeId>{1});
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ(list((*v)->inputs, (*v)->num_inputs),
            (std::vector<const infer_value_view*>{s.value(cond), s.value(pre)}));
  // ...and 'pre' escapes a partition holding only its producer.
  auto p0 = s.build_partition_view(std::vector<ir::NodeId>{0});
  ASSERT_TRUE(p0.is_ok());
  EXPECT_EQ(list((*p0)->outputs, (*p0)->num_outputs),
            (std::vector<const infer_value_view*>{s.value(pre)}));
}

TEST(GraphViews, QuantizationDescriptorsPointAtTheirScaleValues) {
  ir::Model m;
  m.opsets[""] = 21;
  m.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *m.graph;
  auto scale = add_value(g, "scale", DataType::kFloat32, {ir::Dim::known(8)},
                         f32_tensor({8}, std::vector<float>(8, 0.5f)));
  auto q = add_value(g, "q", DataType::kInt8, {ir::Dim::known(8), ir::Dim::known(16)});
  g.value(q).quant =
      ir::QuantInfo{ir::QuantScheme::kPerAxis, DataType::kInt8, 0, 0, scale, ir::kNoValue};
  auto y = add_value(g, "y", DataType::kFloat32, {ir::Dim::known(8), ir::Dim::known(16)});
  add_node(g, "dq", "DequantizeLinear", {q, scale}, {y});
  g.inputs = {q};
  g.outputs = {y};
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  const infer_quant_desc* d = (*set)->value(q)->quant;
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->struct_size, sizeof(infer_quant_desc));
  EXPECT_EQ(d->scheme, INFER_QUANT_PER_AXIS);
  EXPECT_EQ(d->storage, INFER_DTYPE_INT8);
  EXPECT_EQ(d->axis, 0);
  EXPECT_EQ(d->scale, (*set)->value(scale));
  EXPECT_EQ(d->zero_point, nullptr);
  EXPECT_EQ((*set)->node(0)->inputs[0]->quant, d);
}

TEST(GraphViews, BrokenIrIsReportedNamingTheNode) {
  Diamond t = diamond();
  t.model.graph->node(2).inputs[1] = 42;
  auto set = GraphViewSet::build(t.model);
  ASSERT_FALSE(set.is_ok());
  EXPECT_EQ(set.status().message(),
            "node 'n2' (Mul): input 1 refers to value 42, the graph has 6 values");
}

TEST(GraphViews, OmittedOptionalInputsAreNull) {
  Diamond t = diamond();
  t.model.graph->node(1).inputs.push_back(ir::kNoValue);
  auto set = GraphViewSet::build(t.model);
  ASSERT_TRUE(set.is_ok());
  ASSERT_EQ((*set)->node(1)->num_inputs, 2u);
  EXPECT_EQ((*set)->node(1)->inputs[1], nullptr);
  auto v = (*set)->build_partition_view(std::vector<ir::NodeId>{1});
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ((*v)->num_inputs, 1u);
}

}  // namespace
}  // namespace infer::host
