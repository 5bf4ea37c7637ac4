// Writing the IR back out (model_writer.hpp): models built with onnx's own classes
// (model_builder.hpp) and the shipped digits model are loaded, saved, checked with ONNX's
// own checker, and loaded again; the reloaded graph must be structurally identical to
// the first (compared field by field below, independently of the writer).
// onnx's parser.h declares an enumerator MAP_TYPE, which <sys/mman.h> defines as a macro:
// onnx's headers come first.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <sys/mman.h>

#include <cstring>
#include <filesystem>

#include "onnx/graph_export.hpp"
#include "onnx/model_writer.hpp"
#include "test_util.hpp"
#include "infer_test_paths.hpp"

namespace infer::onnx_io {
namespace {

using testing::add_input;
using testing::add_node;
using testing::add_output;
using testing::TempDir;
using ::testing::HasSubstr;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

const std::string kDigits = std::string(INFER_SOURCE_DIR) + "/models/digits_cnn.onnx";

// ---- Structural comparison of two IR graphs -------------------------------------------

std::string name_of(const ir::Graph& g, ir::ValueId id) {
  return id == ir::kNoValue ? std::string("<omitted>") : g.value(id).name;
}

// Outputs as names, without omitted trailing ones (ONNX cannot tell them apart from
// absent ones, so a round trip may drop them).
std::vector<std::string> output_names(const ir::Graph& g, const ir::Node& n) {
  std::vector<std::string> out;
  for (ir::ValueId id : n.outputs) out.push_back(name_of(g, id));
  while (!out.empty() && out.back() == "<omitted>") out.pop_back();
  return out;
}

void expect_same_tensor(const ir::TensorData& a, const ir::TensorData& b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.dims(), b.dims());
  ASSERT_EQ(a.size_bytes(), b.size_bytes());
  if (a.size_bytes() > 0) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size_bytes()), 0);
  }
}

void expect_same_value(const ir::Value& a, const ir::Value& b) {
  SCOPED_TRACE("value '" + a.name + "'");
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.shape, b.shape) << a.shape.to_string() << " vs " << b.shape.to_string();
  EXPECT_EQ(a.outer_scope, b.outer_scope);
  ASSERT_EQ(a.is_constant(), b.is_constant());
  if (a.is_constant()) expect_same_tensor(*a.constant, *b.constant);
}

void expect_same_graph(const ir::Graph& a, const ir::Graph& b);

void expect_same_attribute(const ir::Attribute& a, const ir::Attribute& b) {
  SCOPED_TRACE("attribute '" + a.name + "'");
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.type, b.type);
  EXPECT_EQ(static_cast<float>(a.f), static_cast<float>(b.f));
  EXPECT_EQ(a.i, b.i);
  EXPECT_EQ(a.s, b.s);
  EXPECT_EQ(a.floats, b.floats);
  EXPECT_EQ(a.ints, b.ints);
  EXPECT_EQ(a.strings, b.strings);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t k = 0; k < a.tensors.size(); ++k) expect_same_tensor(*a.tensors[k], *b.tensors[k]);
  ASSERT_EQ(a.graphs.size(), b.graphs.size());
  for (size_t k = 0; k < a.graphs.size(); ++k) expect_same_graph(*a.graphs[k], *b.graphs[k]);
}

// Same name, signature, nodes (ops, wiring by name, attributes, output types) and the
// same constants and captures behind every value a node reads.
void expect_same_graph(const ir::Graph& a, const ir::Graph& b) {
  SCOPED_TRACE("graph '" + a.name + "'");
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t k = 0; k < a.inputs.size(); ++k)
    expect_same_value(a.value(a.inputs[k]), b.value(b.inputs[k]));
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t k = 0; k < a.outputs.size(); ++k)
    expect_same_value(a.value(a.outputs[k]), b.value(b.outputs[k]));
  ASSERT_EQ(a.node_count(), b.node_count());
  for (ir::NodeId n = 0; n < a.node_count(); ++n) {
    const ir::Node& na = a.node(n);
    const ir::Node& nb = b.node(n);
    SCOPED_TRACE(na.describe());
    EXPECT_EQ(na.name, nb.name);
    EXPECT_EQ(na.op_type, nb.op_type);
    EXPECT_EQ(na.domain, nb.domain);
    ASSERT_EQ(na.inputs.size(), nb.inputs.size());
    for (size_t k = 0; k < na.inputs.size(); ++k) {
      EXPECT_EQ(name_of(a, na.inputs[k]), name_of(b, nb.inputs[k]));
      if (na.inputs[k] != ir::kNoValue && nb.inputs[k] != ir::kNoValue)
        expect_same_value(a.value(na.inputs[k]), b.value(nb.inputs[k]));
    }
    EXPECT_EQ(output_names(a, na), output_names(b, nb));
    for (size_t k = 0; k < na.outputs.size() && k < nb.outputs.size(); ++k)
      if (na.outputs[k] != ir::kNoValue && nb.outputs[k] != ir::kNoValue)
        expect_same_value(a.value(na.outputs[k]), b.value(nb.outputs[k]));
    ASSERT_EQ(na.attributes.size(), nb.attributes.size());
    for (size_t k = 0; k < na.attributes.size(); ++k)
      expect_same_attribute(na.attributes[k], nb.attributes[k]);
    // What the bodies capture from this graph, with their constants.
    std::vector<ir::ValueId> ia = a.implicit_inputs(n);
    std::vector<ir::ValueId> ib = b.implicit_inputs(n);
    ASSERT_EQ(ia.size(), ib.size());
    for (ir::ValueId id : ia) {
      auto other = b.find_value(a.value(id).name);
      ASSERT_TRUE(other.has_value()) << a.value(id).name;
      expect_same_value(a.value(id), b.value(*other));
    }
  }
}

// ---- Helpers ----------------------------------------------------------------------------

Result<ir::Model> load_proto(const onnx::ModelProto& m, const TempDir& dir) {
  return load_model(testing::save(m, dir, "source.onnx"));
}

onnx::ModelProto read_proto(const std::string& path) {
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(testing::read_file(path))) << path;
  return proto;
}

// ONNX's own checker: check_model, and with `full` also strict type and shape inference
// (what the Python API's check_model(full_check=True) adds). "" when the model passes.
std::string onnx_check(const onnx::ModelProto& proto, bool full) {
  try {
    onnx::checker::check_model(proto);
    if (full) {
      onnx::ModelProto copy = proto;
      onnx::shape_inference::InferShapes(
          copy, onnx::OpSchemaRegistry::Instance(),
          onnx::ShapeInferenceOptions(/*check_type_val=*/true, /*strict_mode_val=*/1));
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Saves `model` into `dir`, checks the file with ONNX's checker, loads it back and
// compares the graphs. Returns the written proto for further checks.
onnx::ModelProto round_trip(const ir::Model& model, const TempDir& dir, bool full_check,
                            ir::Model* reloaded_out = nullptr) {
  const std::string path = dir.file("written.onnx");
  const Status saved = save_model(model, path);
  EXPECT_TRUE(saved.is_ok()) << saved.message();
  onnx::ModelProto proto = read_proto(path);
  EXPECT_EQ(onnx_check(proto, full_check), "");
  auto reloaded = load_model(path);
  EXPECT_TRUE(reloaded.is_ok()) << reloaded.status().message();
  if (!reloaded.is_ok()) return proto;
  expect_same_graph(*model.graph, *reloaded->graph);
  EXPECT_EQ(reloaded->opsets.at(""), model.opsets.at(""));
  EXPECT_EQ(reloaded->producer_name, "infer");
  if (reloaded_out) *reloaded_out = std::move(reloaded).value();
  return proto;
}

int64_t opset_in(const onnx::ModelProto& proto, const std::string& domain) {
  int64_t found = 0;
  for (const auto& op : proto.opset_import())
    if (op.domain() == domain) {
      EXPECT_EQ(found, 0) << "domain '" << domain << "' imported twice";
      found = op.version();
    }
  return found;
}

const onnx::NodeProto* proto_node(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return &n;
  ADD_FAILURE() << "no node '" << name << "' in the written graph";
  return nullptr;
}

std::vector<std::string> strings_of(const google::protobuf::RepeatedPtrField<std::string>& r) {
  return std::vector<std::string>(r.begin(), r.end());
}

std::vector<std::string> initializer_names(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  for (const auto& t : g.initializer()) out.push_back(t.name());
  return out;
}

onnx::AttributeProto* add_graph_attr(onnx::NodeProto* n, const std::string& name,
                                     onnx::GraphProto** body) {
  auto* a = testing::add_attr(n, name, onnx::AttributeProto::GRAPH);
  *body = a->mutable_g();
  return a;
}

// ---- The digits model -------------------------------------------------------------------

TEST(ModelWriter, DigitsModelRoundTrips) {
  auto model = load_model(kDigits);
  ASSERT_LOADED(model);
  TempDir dir;
  const onnx::ModelProto proto = round_trip(*model, dir, /*full_check=*/true);
  EXPECT_EQ(proto.ir_version(), 7);  // what the digits file says (see digits_model_test)
  EXPECT_EQ(opset_in(proto, ""), 13);
  EXPECT_EQ(proto.opset_import_size(), 1);
  EXPECT_EQ(proto.producer_name(), "infer");
  EXPECT_THAT(proto.doc_string(), HasSubstr("pytorch"));
  ASSERT_EQ(proto.graph().input_size(), 1);
  const auto& image = proto.graph().input(0).type().tensor_type();
  EXPECT_EQ(image.elem_type(), kFloat);
  ASSERT_EQ(image.shape().dim_size(), 4);
  EXPECT_EQ(image.shape().dim(0).dim_param(), "batch");
  EXPECT_EQ(image.shape().dim(1).dim_value(), 1);
  // Two Conv and two Gemm layers, a weight and a bias each.
  EXPECT_EQ(proto.graph().initializer_size(), 8);
}

// ---- Initializers, every attribute type, symbolic and unknown dims -----------------------

// x [N,3] float, m [?] bool;
//   a = Add(x, w); r = Reshape(a, shp); hc = Cast(h, to=float); r2 = Add(r, hc);
//   z = test.custom.AllAttrs(r2) with one attribute of every type; nm = Not(m);
//   k = Constant(value_floats); kk = Add(k, k)
onnx::ModelProto every_kind_model() {
  onnx::ModelProto m = testing::make_model();
  testing::import_domain(m, "test.custom", 1);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {testing::sym("N"), int64_t{3}});
  auto* mask = g.add_input();
  mask->set_name("m");
  mask->mutable_type()->mutable_tensor_type()->set_elem_type(kBool);
  mask->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // unknown dim

  *g.add_initializer() = testing::float_tensor("w", {3}, {0.5f, -1.f, 2.f});
  onnx::TensorProto shp = testing::make_tensor("shp", onnx::TensorProto::INT64, {2});
  shp.add_int64_data(-1);  // typed field on purpose: the writer turns it into raw_data
  shp.add_int64_data(3);
  *g.add_initializer() = shp;
  onnx::TensorProto h = testing::make_tensor("h", onnx::TensorProto::FLOAT16, {3});
  h.set_raw_data(testing::raw_bytes(std::vector<uint16_t>{0x3c00, 0xc000, 0x3800}));
  *g.add_initializer() = h;

  add_node(g, "Add", {"x", "w"}, {"a"}, "add_w");
  add_node(g, "Reshape", {"a", "shp"}, {"r"}, "reshape");
  testing::attr_int(add_node(g, "Cast", {"h"}, {"hc"}, "cast"), "to", kFloat);
  add_node(g, "Add", {"r", "hc"}, {"r2"}, "add_h");

  auto* all = add_node(g, "AllAttrs", {"r2"}, {"z"}, "all", "test.custom");
  testing::add_attr(all, "f", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  testing::attr_int(all, "i", -7);
  testing::add_attr(all, "s", onnx::AttributeProto::STRING)->set_s("hello");
  onnx::TensorProto t = testing::make_tensor("", onnx::TensorProto::INT64, {2});
  t.set_raw_data(testing::raw_bytes(std::vector<int64_t>{3, -4}));
  *testing::add_attr(all, "t", onnx::AttributeProto::TENSOR)->mutable_t() = t;
  onnx::GraphProto* body = nullptr;
  add_graph_attr(all, "g", &body);
  body->set_name("g_body");
  add_node(*body, "Identity", {"x"}, {"g_out"}, "g_id");  // captures x
  add_output(*body, "g_out", kFloat, {testing::sym("N"), int64_t{3}});
  auto* floats = testing::add_attr(all, "floats", onnx::AttributeProto::FLOATS);
  floats->add_floats(1.5f);
  floats->add_floats(-2.25f);
  testing::attr_ints(all, "ints", {1, 2, 3});
  auto* strings = testing::add_attr(all, "strings", onnx::AttributeProto::STRINGS);
  strings->add_strings("a");
  strings->add_strings("bc");
  auto* tensors = testing::add_attr(all, "tensors", onnx::AttributeProto::TENSORS);
  *tensors->add_tensors() = testing::float_tensor("", {2}, {7.f, 8.f});
  onnx::TensorProto u8 = testing::make_tensor("", onnx::TensorProto::UINT8, {3});
  u8.set_raw_data(std::string("\x01\x02\xff", 3));
  *tensors->add_tensors() = u8;
  auto* graphs = testing::add_attr(all, "graphs", onnx::AttributeProto::GRAPHS);
  for (const std::string name : {"b0", "b1"}) {
    onnx::GraphProto* b = graphs->add_graphs();
    b->set_name(name);
    add_node(*b, "Neg", {"r2"}, {name + "_out"}, name + "_neg");  // captures r2
    add_output(*b, name + "_out", kFloat, {testing::sym("N"), int64_t{3}});
  }

  add_node(g, "Not", {"m"}, {"nm"}, "not");
  auto* k = add_node(g, "Constant", {}, {"k"}, "k");
  auto* kv = testing::add_attr(k, "value_floats", onnx::AttributeProto::FLOATS);
  kv->add_floats(1.f);
  kv->add_floats(2.f);
  add_node(g, "Add", {"k", "k"}, {"kk"}, "kk");

  add_output(g, "z", kFloat, {testing::sym("N"), int64_t{3}});
  auto* nm = g.add_output();
  nm->set_name("nm");
  nm->mutable_type()->mutable_tensor_type()->set_elem_type(kBool);
  nm->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  add_output(g, "kk", kFloat, {int64_t{2}});
  return m;
}

TEST(ModelWriter, InitializersAttributesAndDimsRoundTrip) {
  TempDir dir;
  auto model = load_proto(every_kind_model(), dir);
  ASSERT_LOADED(model);
  // The custom op has no schema, so only the structural check applies.
  const onnx::ModelProto proto = round_trip(*model, dir, /*full_check=*/false);
  EXPECT_EQ(opset_in(proto, "test.custom"), 1);
  const auto& g = proto.graph();

  // Initializers carry raw_data whatever field the source used.
  EXPECT_EQ(initializer_names(g), (std::vector<std::string>{"w", "shp", "h"}));
  for (const auto& init : g.initializer()) {
    EXPECT_EQ(init.int64_data_size(), 0) << init.name();
    EXPECT_FALSE(init.raw_data().empty()) << init.name();
  }
  EXPECT_EQ(g.initializer(1).raw_data(), testing::raw_bytes(std::vector<int64_t>{-1, 3}));

  // A symbol stays a dim_param; an unknown dim is an empty Dimension.
  const auto& x = g.input(0).type().tensor_type().shape();
  ASSERT_EQ(x.dim_size(), 2);
  EXPECT_EQ(x.dim(0).dim_param(), "N");
  EXPECT_EQ(x.dim(1).dim_value(), 3);
  const auto& mdim = g.input(1).type().tensor_type().shape();
  ASSERT_EQ(mdim.dim_size(), 1);
  EXPECT_FALSE(mdim.dim(0).has_dim_value());
  EXPECT_FALSE(mdim.dim(0).has_dim_param());

  // Every attribute with its ONNX type; the bodies do not declare what they capture.
  const onnx::NodeProto* all = proto_node(g, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->domain(), "test.custom");
  std::map<std::string, onnx::AttributeProto::AttributeType> types;
  for (const auto& a : all->attribute()) types[a.name()] = a.type();
  using A = onnx::AttributeProto;
  EXPECT_EQ(types, (std::map<std::string, A::AttributeType>{
                       {"f", A::FLOAT},      {"i", A::INT},      {"s", A::STRING},
                       {"t", A::TENSOR},     {"g", A::GRAPH},    {"floats", A::FLOATS},
                       {"ints", A::INTS},    {"strings", A::STRINGS}, {"tensors", A::TENSORS},
                       {"graphs", A::GRAPHS}}));
  for (const auto& a : all->attribute()) {
    if (a.name() == "g") {
      EXPECT_EQ(a.g().name(), "g_body");
      EXPECT_EQ(a.g().input_size(), 0);
      EXPECT_EQ(a.g().initializer_size(), 0);
      for (const auto& vi : a.g().value_info()) EXPECT_NE(vi.name(), "x");
    }
    if (a.name() == "graphs") {
      ASSERT_EQ(a.graphs_size(), 2);
    }
  }

  // The Constant is written in infer's normal form: one tensor attribute 'value'.
  const onnx::NodeProto* k = proto_node(g, "k");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->attribute_size(), 1);
  EXPECT_EQ(k->attribute(0).name(), "value");
  EXPECT_EQ(k->attribute(0).t().raw_data(), testing::raw_bytes(std::vector<float>{1.f, 2.f}));
}

// Without the custom op, the same kinds of data pass ONNX's full check.
TEST(ModelWriter, PlainModelPassesFullCheck) {
  onnx::ModelProto m = every_kind_model();
  auto& g = *m.mutable_graph();
  for (auto& n : *g.mutable_node())
    if (n.op_type() == "AllAttrs") {
      n.set_op_type("Identity");
      n.clear_domain();
      n.clear_attribute();
    }
  TempDir dir;
  auto model = load_proto(m, dir);
  ASSERT_LOADED(model);
  round_trip(*model, dir, /*full_check=*/true);
}

// ---- Subgraphs ----------------------------------------------------------------------

// main: t = Relu(x); y = If(cond) { then: Add(t, wb) with wb the main graph's initializer
// that only the body reads; else: Identity(x) }
onnx::ModelProto if_model() {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}});
  add_input(g, "cond", kBool, {});
  *g.add_initializer() = testing::float_tensor("wb", {2}, {1.f, 2.f});
  add_node(g, "Relu", {"x"}, {"t"}, "relu");
  auto* if_node = add_node(g, "If", {"cond"}, {"y"}, "branch");
  onnx::GraphProto* then_g = nullptr;
  add_graph_attr(if_node, "then_branch", &then_g);
  then_g->set_name("then");
  *then_g->add_initializer() = testing::float_tensor("one", {}, {1.f});
  add_node(*then_g, "Add", {"t", "wb"}, {"tw"}, "then_add");
  add_node(*then_g, "Add", {"tw", "one"}, {"then_out"}, "then_add_one");
  add_output(*then_g, "then_out", kFloat, {int64_t{2}});
  onnx::GraphProto* else_g = nullptr;
  add_graph_attr(if_node, "else_branch", &else_g);
  else_g->set_name("else");
  add_node(*else_g, "Identity", {"x"}, {"else_out"}, "else_id");
  add_output(*else_g, "else_out", kFloat, {int64_t{2}});
  add_output(g, "y", kFloat, {int64_t{2}});
  return m;
}

TEST(ModelWriter, IfBodiesKeepTheirCapturesUndeclared) {
  TempDir dir;
  auto model = load_proto(if_model(), dir);
  ASSERT_LOADED(model);
  ir::Model reloaded;
  const onnx::ModelProto proto = round_trip(*model, dir, /*full_check=*/true, &reloaded);
  const auto& g = proto.graph();
  // wb is written in the main graph although no main-graph node reads it.
  EXPECT_EQ(initializer_names(g), (std::vector<std::string>{"wb"}));
  const onnx::NodeProto* branch = proto_node(g, "branch");
  ASSERT_NE(branch, nullptr);
  for (const auto& a : branch->attribute()) {
    SCOPED_TRACE(a.name());
    const onnx::GraphProto& body = a.g();
    EXPECT_EQ(body.input_size(), 0);
    for (const auto& vi : body.value_info()) {
      EXPECT_NE(vi.name(), "t");
      EXPECT_NE(vi.name(), "x");
      EXPECT_NE(vi.name(), "wb");
    }
    if (a.name() == "then_branch") {
      EXPECT_EQ(initializer_names(body), (std::vector<std::string>{"one"}));
      ASSERT_EQ(body.value_info_size(), 1);  // tw, inferred on load
      EXPECT_EQ(body.value_info(0).name(), "tw");
    } else {
      EXPECT_EQ(body.initializer_size(), 0);
    }
  }
  // The reloaded bodies capture the same values again.
  const ir::Graph& then_g = *testing::node_named(*reloaded.graph, "branch")->attr("then_branch")->graphs[0];
  EXPECT_TRUE(testing::value_named(then_g, "wb").outer_scope);
  EXPECT_TRUE(testing::value_named(then_g, "t").outer_scope);
}

// ---- Omitted optional inputs and outputs -------------------------------------------------

// opset 17: c = Clip(x, "", hi); LayerNormalization(c, scale, bias) -> (y, "", inv);
// Dropout(c) -> (d, "") (an omitted trailing output, which the writer drops).
TEST(ModelWriter, OmittedOptionalInputsAndOutputs) {
  onnx::ModelProto m = testing::make_model(17);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{2}, int64_t{4}});
  *g.add_initializer() = testing::float_tensor("hi", {}, {6.f});
  *g.add_initializer() = testing::float_tensor("scale", {4}, {1.f, 1.f, 2.f, 2.f});
  *g.add_initializer() = testing::float_tensor("bias", {4}, {0.f, 0.f, 1.f, 1.f});
  add_node(g, "Clip", {"x", "", "hi"}, {"c"}, "clip");
  add_node(g, "LayerNormalization", {"c", "scale", "bias"}, {"y", "", "inv"}, "ln");
  add_node(g, "Dropout", {"c"}, {"d", ""}, "drop");
  add_output(g, "y", kFloat, {int64_t{2}, int64_t{4}});
  add_output(g, "inv", kFloat, {int64_t{2}, int64_t{1}});
  add_output(g, "d", kFloat, {int64_t{2}, int64_t{4}});
  TempDir dir;
  auto model = load_proto(m, dir);
  ASSERT_LOADED(model);
  const onnx::ModelProto proto = round_trip(*model, dir, /*full_check=*/true);
  EXPECT_EQ(opset_in(proto, ""), 17);
  const onnx::NodeProto* clip = proto_node(proto.graph(), "clip");
  const onnx::NodeProto* ln = proto_node(proto.graph(), "ln");
  const onnx::NodeProto* drop = proto_node(proto.graph(), "drop");
  ASSERT_TRUE(clip && ln && drop);
  EXPECT_EQ(strings_of(clip->input()), (std::vector<std::string>{"x", "", "hi"}));
  EXPECT_EQ(strings_of(ln->output()), (std::vector<std::string>{"y", "", "inv"}));
  EXPECT_EQ(strings_of(drop->output()), (std::vector<std::string>{"d"}));
}

// ---- Fused ops (ai.infer) ------------------------------------------------------------

// x [1,1,4,4] -> Conv(w [1,1,3,3], b [1]) -> y [1,1,2,2], rewritten in the IR into the
// FusedConv the optimizer would make: domain ai.infer (not imported by the model), with
// a LeakyRelu activation.
TEST(ModelWriter, FusedConvGetsItsDomainImported) {
  onnx::ModelProto m = testing::make_model(13);
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}});
  *g.add_initializer() = testing::float_tensor("w", {1, 1, 3, 3}, std::vector<float>(9, 0.5f));
  *g.add_initializer() = testing::float_tensor("b", {1}, {0.25f});
  testing::attr_ints(add_node(g, "Conv", {"x", "w", "b"}, {"y"}, "conv"), "kernel_shape", {3, 3});
  add_output(g, "y", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
  TempDir dir;
  auto model = load_proto(m, dir);
  ASSERT_LOADED(model);
  ASSERT_EQ(model->opsets.count(kFusedDomain), 0u);

  ir::Node& conv = model->graph->node(0);
  conv.op_type = "FusedConv";
  conv.domain = "ai.infer";
  ir::Attribute activation;
  activation.name = "activation";
  activation.type = ir::AttrType::kString;
  activation.s = "LeakyRelu";
  conv.attributes.push_back(activation);
  ir::Attribute params;
  params.name = "activation_params";
  params.type = ir::AttrType::kFloats;
  params.floats = {0.125};
  conv.attributes.push_back(params);

  ir::Model reloaded;
  const onnx::ModelProto proto = round_trip(*model, dir, /*full_check=*/false, &reloaded);
  EXPECT_EQ(opset_in(proto, "ai.infer"), 1);
  EXPECT_EQ(opset_in(proto, ""), 13);
  // Without that import ONNX's checker refuses the file: the import is what makes it valid.
  onnx::ModelProto without = proto;
  without.clear_opset_import();
  without.add_opset_import()->set_version(13);
  EXPECT_THAT(onnx_check(without, /*full=*/false), HasSubstr("ai.infer"));
  EXPECT_EQ(reloaded.opset("ai.infer"), 1);
  const ir::Node* fused = testing::node_named(*reloaded.graph, "conv");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->domain, "ai.infer");
  EXPECT_EQ(fused->op_type, "FusedConv");
  EXPECT_EQ(fused->attr_string("activation", ""), "LeakyRelu");
  ASSERT_NE(fused->attr("activation_params"), nullptr);
  EXPECT_EQ(fused->attr("activation_params")->floats, (std::vector<double>{0.125}));
  EXPECT_EQ(fused->attr("kernel_shape")->ints, (std::vector<int64_t>{3, 3}));
}

// A domain that only a body uses is imported too.
TEST(ModelWriter, DomainUsedOnlyInABodyIsImported) {
  TempDir dir;
  auto model = load_proto(if_model(), dir);
  ASSERT_LOADED(model);
  ir::Node* branch = nullptr;
  for (ir::Node& n : model->graph->mutable_nodes())
    if (n.name == "branch") branch = &n;
  ASSERT_NE(branch, nullptr);
  for (ir::Attribute& a : branch->attributes) {
    if (a.name != "else_branch") continue;
    ir::Node& id = a.graphs[0]->node(0);
    id.op_type = "Gelu";
    id.domain = "ai.infer";
    ir::Attribute approximate;
    approximate.name = "approximate";
    approximate.type = ir::AttrType::kString;
    approximate.s = "tanh";
    id.attributes.push_back(approximate);
  }
  const onnx::ModelProto proto = round_trip(*model, dir, /*full_check=*/false);
  EXPECT_EQ(opset_in(proto, "ai.infer"), 1);
}

// ---- Constants: external data inlined, unused ones dropped ------------------------------

TEST(ModelWriter, ExternalConstantsAreWrittenInline) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  add_input(g, "x", kFloat, {int64_t{4}});
  onnx::TensorProto w = testing::make_tensor("w", kFloat, {4});
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  *g.add_initializer() = w;
  add_node(g, "Mul", {"x", "w"}, {"y"}, "mul");
  add_output(g, "y", kFloat, {int64_t{4}});
  TempDir source;
  testing::write_file(source.file("weights.bin"),
                      testing::raw_bytes(std::vector<float>{1.f, -2.f, 3.f, 0.5f}));
  auto model = load_proto(m, source);
  ASSERT_LOADED(model);

  TempDir elsewhere;  // no weights.bin here: the written file must stand alone
  const onnx::ModelProto proto = round_trip(*model, elsewhere, /*full_check=*/true);
  ASSERT_EQ(proto.graph().initializer_size(), 1);
  const onnx::TensorProto& written = proto.graph().initializer(0);
  EXPECT_EQ(written.external_data_size(), 0);
  EXPECT_NE(written.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(written.raw_data(), testing::raw_bytes(std::vector<float>{1.f, -2.f, 3.f, 0.5f}));
}

TEST(ModelWriter, ConstantsNoNodeUsesAreNotWritten) {
  TempDir dir;
  auto model = load_proto(if_model(), dir);
  ASSERT_LOADED(model);
  ir::Value leftover;
  leftover.name = "leftover";
  leftover.dtype = DataType::kFloat32;
  leftover.shape = ir::Shape::of({1});
  leftover.constant = std::make_shared<const ir::TensorData>(
      DataType::kFloat32, std::vector<int64_t>{1}, std::vector<uint8_t>(4, 0));
  model->graph->add_value(std::move(leftover));
  auto proto = to_model_proto(*model);
  ASSERT_TRUE(proto.is_ok()) << proto.status().message();
  EXPECT_EQ(initializer_names(proto->graph()), (std::vector<std::string>{"wb"}));
}

// ---- Errors -----------------------------------------------------------------------------

TEST(ModelWriter, UnwritablePathNamesThePathAndTheReason) {
  auto model = load_model(kDigits);
  ASSERT_LOADED(model);
  TempDir dir;
  const std::string missing = dir.file("no/such/folder/out.onnx");
  Status s = save_model(*model, missing);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "cannot write model '" + missing + "': No such file or directory");

  // A folder where the file should go: the rename over it fails, and nothing is left
  // behind beside it.
  const std::string folder = dir.file("taken");
  std::filesystem::create_directory(folder);
  s = save_model(*model, folder);
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot write model '" + folder + "': "));
  EXPECT_THAT(s.message(), HasSubstr("directory"));
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);  // only "taken" (and "no" was never created)
}

// Constants over protobuf's 2 GiB limit are refused before any byte is copied. The
// 2.5 GiB tensor is an untouched anonymous mapping, so it costs no memory.
TEST(ModelWriter, ConstantsOverTwoGibAreRefused) {
  constexpr size_t kBytes = size_t{5} << 29;  // 2.5 GiB
  void* p = mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::shared_ptr<const void> keeper(p, [](const void* q) { munmap(const_cast<void*>(q), kBytes); });

  TempDir dir;
  auto model = load_proto(testing::relu_model(), dir);
  ASSERT_LOADED(model);
  ir::Graph& g = *model->graph;
  ir::Value big;
  big.name = "big";
  big.dtype = DataType::kUInt8;
  big.shape = ir::Shape::of({static_cast<int64_t>(kBytes)});
  big.constant = std::make_shared<const ir::TensorData>(
      DataType::kUInt8, std::vector<int64_t>{static_cast<int64_t>(kBytes)}, p, kBytes, keeper);
  const ir::ValueId big_id = g.add_value(std::move(big));
  g.outputs.push_back(big_id);  // a graph output that is a constant: written as initializer

  const std::string path = dir.file("big.onnx");
  const Status s = save_model(*model, path);
  ASSERT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot write model '" + path + "'"));
  EXPECT_THAT(s.message(), HasSubstr("initializer 'big'"));
  EXPECT_THAT(s.message(), HasSubstr("2 GiB"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ModelWriter, InvalidGraphIsRefusedWithTheReason) {
  TempDir dir;
  auto model = load_proto(testing::relu_model(), dir);
  ASSERT_LOADED(model);
  model->graph->node(0).inputs[0] = 999;  // a value id out of range
  auto proto = to_model_proto(*model);
  ASSERT_FALSE(proto.is_ok());
  EXPECT_THAT(proto.status().message(), HasSubstr("relu"));

  ir::Model empty;
  auto none = to_model_proto(empty);
  ASSERT_FALSE(none.is_ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no graph"));
}

}  // namespace
}  // namespace infer::onnx_io
