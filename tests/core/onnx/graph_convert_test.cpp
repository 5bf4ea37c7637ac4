// Graph conversion: values and types, names, Constant nodes, attributes, ordering.
#include <cstring>

#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using testing::add_input;
using testing::add_node;
using testing::add_output;
using testing::add_output_no_shape;
using ::testing::HasSubstr;
using testing::node_named;
using ::testing::Not;
using testing::sym;
using testing::TempDir;
using testing::value_named;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

Result<ir::Model> load(const onnx::ModelProto& m, const LoadOptions& options = {}) {
  TempDir dir;
  return testing::save_and_load(m, dir, options);
}

TEST(Values, DimsAreKnownSymbolicOrUnknown) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  auto* x = add_input(g, "x", kFloat, {sym("N"), int64_t{3}, sym("seq")});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // neither value nor param
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Shape& s = value_named(*r->graph, "x").shape;
  ASSERT_EQ(s.rank(), 4u);
  EXPECT_EQ((*s.dims)[0], ir::Dim::symbol("N"));
  EXPECT_EQ((*s.dims)[1], ir::Dim::known(3));
  EXPECT_EQ((*s.dims)[2], ir::Dim::symbol("seq"));
  EXPECT_EQ((*s.dims)[3], ir::Dim{});
  // Shape inference carries the same dims to the output, which the file left shapeless.
  EXPECT_EQ(value_named(*r->graph, "y").shape.to_string(), "[N,3,seq,?]");
}

TEST(Values, IntermediateTypesComeFromShapeInference) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {sym("N"), int64_t{4}});
  *g.add_initializer() = testing::float_tensor("w", {4, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  add_node(g, "MatMul", {"x", "w"}, {"t"}, "mm");
  add_node(g, "Relu", {"t"}, {"y"}, "relu");
  add_output(g, "y", kFloat, {sym("N"), int64_t{2}});
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Value& t = value_named(*r->graph, "t");
  EXPECT_EQ(t.dtype, DataType::kFloat32);
  EXPECT_EQ(t.shape.to_string(), "[N,2]");
}

TEST(Values, ShapesFlowThroughShapeComputationsByDataPropagation) {
  // y = Expand(z, Shape(x)): y's dims are x's, which ONNX only knows by propagating the
  // values of the Shape output into Expand's shape input.
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}, int64_t{3}, int64_t{4}});
  add_input(g, "z", kFloat, {int64_t{1}});
  add_node(g, "Shape", {"x"}, {"s"}, "shape");
  add_node(g, "Expand", {"z", "s"}, {"y"}, "expand");
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(value_named(*r->graph, "s").shape.to_string(), "[3]");
  EXPECT_EQ(value_named(*r->graph, "y").shape.to_string(), "[2,3,4]");
}

TEST(Values, StringGraphInputIsUnsupported) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "text", onnx::TensorProto::STRING, {int64_t{1}});
  add_node(g, "Identity", {"text"}, {"y"}, "id");
  add_output(g, "y", onnx::TensorProto::STRING, {int64_t{1}});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 'text' has dtype string, which infer does not support"));
}

TEST(Values, StringGraphOutputIsUnsupported) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{1}});
  auto* cast = add_node(g, "Cast", {"x"}, {"s"}, "cast");
  testing::attr_int(cast, "to", onnx::TensorProto::STRING);
  add_output(g, "s", onnx::TensorProto::STRING, {int64_t{1}});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(),
              HasSubstr("tensor 's' has dtype string, which infer does not support"));
}

TEST(Values, SequenceInputIsUnsupported) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  auto* in = g.add_input();
  in->set_name("seq");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(kFloat);
  add_node(g, "SequenceLength", {"seq"}, {"n"}, "len");
  add_output(g, "n", onnx::TensorProto::INT64, {});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(), HasSubstr("value 'seq' has type sequence"));
}

TEST(Values, InitializersListedAsInputsAreConstantsNotInputs) {
  // The IR version 3 convention: every weight is also a graph input.
  onnx::ModelProto m = testing::make_model(9, 3);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_input(g, "w", kFloat, {int64_t{2}});
  *g.add_initializer() = testing::float_tensor("w", {2}, {1, 2});
  add_node(g, "Add", {"x", "w"}, {"y"}, "add");
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_LOADED(r);
  ASSERT_EQ(r->graph->inputs.size(), 1u);
  EXPECT_EQ(r->graph->value(r->graph->inputs[0]).name, "x");
  EXPECT_TRUE(value_named(*r->graph, "w").is_constant());
}

TEST(Values, OutputThatContradictsShapeInferenceIsRejected) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {sym("N"), int64_t{3}});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y", kFloat, {int64_t{5}});  // Relu keeps rank 2
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("ONNX shape inference failed"));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("\n")));
  // Without shape inference the declared type is simply taken.
  auto loose = load(m, LoadOptions{.run_checker = true, .run_shape_inference = false});
  ASSERT_LOADED(loose);
  EXPECT_EQ(value_named(*loose->graph, "y").shape.to_string(), "[5]");
}

TEST(Nodes, UnnamedNodesGetUniqueNames) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Relu", {"x"}, {"a"}, "Relu_1");  // takes the name node 1 would get
  add_node(g, "Relu", {"a"}, {"b"});
  add_node(g, "Relu", {"b"}, {"c"});
  add_node(g, "Neg", {"c"}, {"y"});
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(testing::node_names(*r->graph),
            (std::vector<std::string>{"Relu_1", "Relu_1_2", "Relu_2", "Neg_3"}));
}

TEST(Nodes, ErrorsNameUnnamedNodesByTheirGeneratedName) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Relu", {"x"}, {"a"});
  add_node(g, "Add", {"a", "nowhere"}, {"y"});
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("node 'Add_1' (Add): input 1 'nowhere' is not a graph input, an "
                        "initializer or any node's output"));
}

TEST(Nodes, DomainAndOmittedOptionalInputsAndOutputs) {
  onnx::ModelProto m = testing::make_model();
  testing::import_domain(m, "com.acme", 1);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Clip", {"x", "", ""}, {"c"}, "clip");
  add_node(g, "Dropout", {"c"}, {"d", ""}, "drop");
  add_node(g, "Fancy", {"d"}, {"y"}, "fancy", "com.acme");
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Node* clip = node_named(*r->graph, "clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->inputs.size(), 3u);
  EXPECT_EQ(clip->inputs[1], ir::kNoValue);
  EXPECT_EQ(clip->inputs[2], ir::kNoValue);
  const ir::Node* drop = node_named(*r->graph, "drop");
  ASSERT_NE(drop, nullptr);
  EXPECT_EQ(drop->outputs.size(), 2u);
  EXPECT_EQ(drop->outputs[1], ir::kNoValue);
  const ir::Node* fancy = node_named(*r->graph, "fancy");
  ASSERT_NE(fancy, nullptr);
  EXPECT_EQ(fancy->domain, "com.acme");
  EXPECT_EQ(fancy->describe(), "node 'fancy' (com.acme:Fancy)");
}

TEST(Nodes, ConstantStaysANodeWithItsTensor) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  auto* c = add_node(g, "Constant", {}, {"k"}, "k_const");
  *testing::add_attr(c, "value", onnx::AttributeProto::TENSOR)->mutable_t() =
      testing::float_tensor("", {2}, {1.5f, -2.f});
  add_node(g, "Add", {"x", "k"}, {"y"}, "add");
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_LOADED(r);
  EXPECT_EQ(testing::op_types(*r->graph), (std::vector<std::string>{"Constant", "Add"}));
  const ir::Node* k = node_named(*r->graph, "k_const");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->attributes.size(), 1u);
  const ir::Attribute& value = k->attributes[0];
  EXPECT_EQ(value.name, "value");
  EXPECT_EQ(value.type, ir::AttrType::kTensor);
  ASSERT_EQ(value.tensors.size(), 1u);
  EXPECT_EQ(value.tensors[0]->dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(value.tensors[0]->as<float>()[0], 1.5f);
  EXPECT_EQ(value.tensors[0]->as<float>()[1], -2.f);
  const ir::Value& out = value_named(*r->graph, "k");
  EXPECT_FALSE(out.is_constant());  // not folded: the node produces it
  EXPECT_EQ(out.dtype, DataType::kFloat32);
  EXPECT_EQ(out.shape.to_string(), "[2]");
}

TEST(Nodes, ConstantScalarAndListFormsBecomeTensors) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  auto* f = add_node(g, "Constant", {}, {"f"}, "cf");
  testing::add_attr(f, "value_float", onnx::AttributeProto::FLOAT)->set_f(2.5f);
  auto* i = add_node(g, "Constant", {}, {"i"}, "ci");
  testing::attr_ints(i, "value_ints", {3, -4});
  auto* fs = add_node(g, "Constant", {}, {"fs"}, "cfs");
  auto* fa = testing::add_attr(fs, "value_floats", onnx::AttributeProto::FLOATS);
  fa->add_floats(0.25f);
  fa->add_floats(8.f);
  auto* one = add_node(g, "Constant", {}, {"one"}, "cone");
  testing::attr_int(one, "value_int", 7);
  for (const char* name : {"f", "i", "fs", "one"}) add_output_no_shape(g, name, 0);
  // Without shape inference, the types come from the constants themselves.
  auto r = load(m, LoadOptions{.run_checker = true, .run_shape_inference = false});
  ASSERT_LOADED(r);
  auto tensor = [&](const char* node) {
    return node_named(*r->graph, node)->attributes.at(0).tensors.at(0);
  };
  EXPECT_EQ(tensor("cf")->dtype(), DataType::kFloat32);
  EXPECT_TRUE(tensor("cf")->dims().empty());
  EXPECT_EQ(tensor("cf")->as<float>()[0], 2.5f);
  EXPECT_EQ(tensor("ci")->dtype(), DataType::kInt64);
  EXPECT_EQ(tensor("ci")->dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(tensor("ci")->as<int64_t>()[1], -4);
  EXPECT_EQ(tensor("cfs")->as<float>()[1], 8.f);
  EXPECT_EQ(tensor("cone")->as<int64_t>()[0], 7);
  EXPECT_EQ(value_named(*r->graph, "i").dtype, DataType::kInt64);
  EXPECT_EQ(value_named(*r->graph, "i").shape.to_string(), "[2]");
  EXPECT_EQ(value_named(*r->graph, "f").shape.to_string(), "[]");
  for (const ir::Node& n : r->graph->nodes()) EXPECT_EQ(n.attributes.at(0).name, "value");
}

TEST(Nodes, StringConstantIsUnsupportedNamingItsOutput) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  auto* c = add_node(g, "Constant", {}, {"words"}, "cw");
  onnx::TensorProto t = testing::make_tensor("", onnx::TensorProto::STRING, {1});
  t.add_string_data("hello");
  *testing::add_attr(c, "value", onnx::AttributeProto::TENSOR)->mutable_t() = t;
  add_output(g, "words", onnx::TensorProto::STRING, {int64_t{1}});
  for (bool infer : {true, false}) {
    auto r = load(m, LoadOptions{.run_checker = true, .run_shape_inference = infer});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
    EXPECT_THAT(r.status().message(),
                HasSubstr("tensor 'words' has dtype string, which infer does not support"));
  }
}

TEST(Nodes, AttributesOfEveryType) {
  onnx::ModelProto m = testing::make_model();
  testing::import_domain(m, "com.acme", 1);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  auto* n = add_node(g, "Everything", {"x"}, {"y"}, "all", "com.acme");
  testing::add_attr(n, "f", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  testing::attr_int(n, "i", -3);
  testing::add_attr(n, "s", onnx::AttributeProto::STRING)->set_s("text");
  *testing::add_attr(n, "t", onnx::AttributeProto::TENSOR)->mutable_t() =
      testing::float_tensor("t", {1}, {4.f});
  auto* fs = testing::add_attr(n, "fs", onnx::AttributeProto::FLOATS);
  fs->add_floats(1.f);
  fs->add_floats(2.f);
  testing::attr_ints(n, "is", {5, 6, 7});
  auto* ss = testing::add_attr(n, "ss", onnx::AttributeProto::STRINGS);
  ss->add_strings("a");
  ss->add_strings("b");
  auto* ts = testing::add_attr(n, "ts", onnx::AttributeProto::TENSORS);
  *ts->add_tensors() = testing::float_tensor("t0", {1}, {1.f});
  *ts->add_tensors() = testing::float_tensor("t1", {2}, {2.f, 3.f});
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m);
  ASSERT_LOADED(r);
  const ir::Node* all = node_named(*r->graph, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_DOUBLE_EQ(all->attr_float("f", 0), 0.5);
  EXPECT_EQ(all->attr_int("i", 0), -3);
  EXPECT_EQ(all->attr_string("s", ""), "text");
  EXPECT_EQ(all->attr("t")->type, ir::AttrType::kTensor);
  EXPECT_EQ(all->attr("t")->tensors.at(0)->as<float>()[0], 4.f);
  EXPECT_EQ(all->attr("fs")->floats, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(all->attr("is")->ints, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(all->attr("ss")->strings, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(all->attr("ts")->tensors.size(), 2u);
  EXPECT_EQ(all->attr("ts")->tensors[1]->as<float>()[1], 3.f);
}

TEST(Nodes, AttributeWithoutTypeTakesTheTypeOfItsValue) {
  // IR version 1 attributes had no type field. ONNX's checker refuses them in newer IR
  // versions, so this is the tolerance of the converter alone.
  onnx::ModelProto m = testing::make_model();
  testing::import_domain(m, "com.acme", 1);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  auto* n = add_node(g, "Old", {"x"}, {"y"}, "old", "com.acme");
  auto* untyped = n->add_attribute();
  untyped->set_name("legacy");
  untyped->set_i(9);
  auto* floats = n->add_attribute();
  floats->set_name("legacy_floats");
  floats->add_floats(1.5f);
  add_output_no_shape(g, "y", kFloat);
  auto r = load(m, LoadOptions{.run_checker = false});
  ASSERT_LOADED(r);
  const ir::Node* old = node_named(*r->graph, "old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->attr("legacy")->type, ir::AttrType::kInt);
  EXPECT_EQ(old->attr_int("legacy", 0), 9);
  EXPECT_EQ(old->attr("legacy_floats")->type, ir::AttrType::kFloats);
  EXPECT_EQ(old->attr("legacy_floats")->floats, (std::vector<double>{1.5}));
}

TEST(Nodes, SparseTensorAttributeIsUnsupported) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  auto* c = add_node(g, "Constant", {}, {"k"}, "sparse_const");
  auto* a = testing::add_attr(c, "sparse_value", onnx::AttributeProto::SPARSE_TENSOR);
  *a->mutable_sparse_tensor()->mutable_values() = testing::float_tensor("v", {1}, {1.f});
  onnx::TensorProto idx = testing::make_tensor("i", onnx::TensorProto::INT64, {1});
  idx.add_int64_data(0);
  *a->mutable_sparse_tensor()->mutable_indices() = idx;
  a->mutable_sparse_tensor()->add_dims(3);
  add_output(g, "k", kFloat, {int64_t{3}});
  auto r = load(m, LoadOptions{.run_checker = false, .run_shape_inference = false});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(),
              HasSubstr("node 'sparse_const' (Constant): attribute 'sparse_value' holds a sparse "
                        "tensor"));
}

TEST(Order, UnsortedNodesAreSorted) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Neg", {"b"}, {"y"}, "third");
  add_node(g, "Relu", {"x"}, {"a"}, "first");
  add_node(g, "Abs", {"a"}, {"b"}, "second");
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);  // with the checker, which would insist on sorted nodes
  ASSERT_LOADED(r);
  EXPECT_EQ(testing::node_names(*r->graph), (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(r->graph->value(r->graph->outputs[0]).producer, 2u);
  EXPECT_EQ(value_named(*r->graph, "b").shape.to_string(), "[2]");
}

TEST(Order, CycleIsRejectedNamingItsNodes) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Add", {"x", "b"}, {"a"}, "p");
  add_node(g, "Relu", {"a"}, {"b"}, "q");
  add_node(g, "Neg", {"b"}, {"y"}, "r");
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m, LoadOptions{.run_checker = true, .run_shape_inference = false});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("has a cycle"));
  EXPECT_THAT(r.status().message(), HasSubstr("node 'p' (Add) -> node 'q' (Relu)"));
  EXPECT_THAT(r.status().message(), HasSubstr("node 'q' (Relu) -> node 'p' (Add)"));
}

TEST(Order, ValueDefinedTwiceIsRejected) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Relu", {"x"}, {"t"}, "a");
  add_node(g, "Neg", {"x"}, {"t"}, "b");
  add_node(g, "Abs", {"x"}, {"x"}, "c");
  add_output(g, "t", kFloat, {int64_t{2}});
  auto r = load(m, LoadOptions{.run_checker = false, .run_shape_inference = false});
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("value 't' is defined twice: by node 'a' (Relu) and by node 'b' (Neg)"));
}

TEST(Order, UndefinedGraphOutputIsRejected) {
  onnx::ModelProto m = testing::relu_model();
  add_output(*m.mutable_graph(), "ghost", kFloat, {int64_t{1}});
  auto r = load(m, LoadOptions{.run_checker = false, .run_shape_inference = false});
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("graph output 'ghost' is not a graph input"));
}

TEST(Functions, CallingAModelLocalFunctionIsUnsupported) {
  onnx::ModelProto m = testing::make_model();
  testing::import_domain(m, "local", 1);
  auto* f = m.add_functions();
  f->set_name("Twice");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* fo = f->add_opset_import();
  fo->set_domain("");
  fo->set_version(13);
  auto* body = f->add_node();
  body->set_op_type("Add");
  body->add_input("a");
  body->add_input("a");
  body->add_output("b");
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_node(g, "Twice", {"x"}, {"y"}, "call", "local");
  add_output(g, "y", kFloat, {int64_t{2}});
  auto r = load(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(r.status().message(), HasSubstr("node 'call' (local:Twice) calls a function"));
}

}  // namespace
}  // namespace infer::onnx_io
